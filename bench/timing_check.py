"""Time a captured run's compiled model again in this fresh process, with `triton.testing.do_bench` (issue 17).

    python3 bench/timing_check.py RUN_FOLDER --out FILE.json [--bench auto|do_bench|standin]

Rebuilds the model exactly as the capture did, from the run's meta.json (model reference, device,
dtype, train, mode, dynamic, fullgraph, Inductor options, seed 0), compiles it, runs the capture's
input sets, then times one step on the last input set (the step the capture timed: autocast,
loss + backward for a training step) with `do_bench(step, grad_to_none=..., quantiles=[.2,.5,.8])`,
and the CPU time to issue one step with the GPU idle. No TORCH_COMPILE_DEBUG here: the compiled
model as a user would run it. Compiling runs free; only the timing holds the flock named by
$COMPILE_VIZ_TIMING_LOCK, so side-by-side processes never time at once (scripts/timing-check.sh).

`--bench standin` (the default without CUDA or triton) times the step like do_bench does, with a
wall clock instead of CUDA events: for testing this script on a CPU, never for figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "autocast": "float32"}
QUANTILES = (0.2, 0.5, 0.8)
WARMUP_MS = 25
REP_MS = int(os.environ.get("DO_BENCH_REP_MS", "500"))


def build(torch, meta: dict):
    """Return (step, args, grads, settings) of the run's compiled model, its input sets already run once."""
    from compile_viz.capture.default_loss import make_default_loss
    from compile_viz.capture.userfile import ModelRef, load_spec
    from compile_viz.verify.measure import _grad_tensors, make_step

    settings = dict(meta["resolved"])
    options = meta.get("options") or {}
    spec = load_spec(ModelRef(**meta["model_ref"]))
    device, tdtype = settings["device"], getattr(torch, TORCH_DTYPES[settings["dtype"]])
    torch.manual_seed(0)
    model = spec.build(device, tdtype)
    if isinstance(model, torch.nn.Module):
        model.train(settings["train"])
    calls = spec.calls(device, tdtype)
    mode = settings.get("mode") or options.get("mode") or "default"
    compiled = torch.compile(model, mode=None if mode == "default" else mode, dynamic=settings.get("dynamic"),
                             fullgraph=bool(settings.get("fullgraph")))
    step = make_step(torch, compiled, settings, spec.loss or make_default_loss())
    grads = _grad_tensors(torch, model, calls[-1]) if settings["train"] else []
    for args in calls:  # as the capture did: every input set once (a recompile here, not in the timing)
        _clear(grads)
        step(args)
    return step, calls[-1], grads, settings


def _clear(grads) -> None:
    for g in grads:
        g.grad = None


def _standin(torch, fn, grads, cuda: bool) -> list[float]:
    """do_bench's loop with a wall clock per call: warm-up WARMUP_MS, then REP_MS of calls; the quantiles."""
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    t0 = time.perf_counter()
    fn()
    sync()
    estimate_ms = max((time.perf_counter() - t0) * 1e3, 1e-3)
    for _ in range(max(1, int(WARMUP_MS / estimate_ms))):
        fn()
    times = []
    for _ in range(max(5, int(REP_MS / estimate_ms))):
        _clear(grads)
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    q = statistics.quantiles(times, n=100) if len(times) > 1 else times * 99
    return [q[int(x * 100) - 1] for x in QUANTILES]


def time_it(torch, step, args, grads, bench: str) -> dict:
    """Return do_bench's quantiles (ms) and the CPU time to issue one step, holding the timing lock."""
    from compile_viz.verify.timing import exclusive, host_ms, load_average

    cuda = torch.cuda.is_available()
    fn = lambda: step(args)  # noqa: E731
    with exclusive() as waited:
        load = load_average()
        if bench == "do_bench":
            from triton.testing import do_bench

            q = do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, grad_to_none=grads or None, quantiles=list(QUANTILES))
        else:
            q = _standin(torch, fn, grads, cuda)
        host = host_ms(torch, step, args, "cuda" if cuda else "cpu", grads=grads)
    return {"q20_ms": q[0], "median_ms": q[1], "q80_ms": q[2], "cpu_per_call_ms": host["median_ms"] if host else None,
            "lock_waited_s": waited, "load_avg_1m": load}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="a run folder written by `capture --measure`")
    p.add_argument("--out", required=True, help="write the result here (JSON)")
    p.add_argument("--bench", choices=("auto", "do_bench", "standin"), default="auto")
    opts = p.parse_args(argv)
    meta = json.loads((Path(opts.run) / "meta.json").read_text())
    if not meta.get("resolved") or not meta.get("model_ref"):
        print(f"timing_check: {opts.run} has no resolved settings in meta.json; capture it again", file=sys.stderr)
        return 2
    import torch

    bench = opts.bench
    if bench == "auto":
        try:
            import triton.testing  # noqa: F401

            bench = "do_bench" if torch.cuda.is_available() else "standin"
        except ImportError:
            bench = "standin"
    opts_inductor = (meta.get("options") or {}).get("inductor_options") or {}
    import torch._inductor.config as inductor_config

    t = time.perf_counter()
    with inductor_config.patch(opts_inductor) if opts_inductor else contextlib.nullcontext():
        step, args, grads, settings = build(torch, meta)
        compile_s = round(time.perf_counter() - t, 2)
        result = time_it(torch, step, args, grads, bench)
    result.update(bench="triton.testing.do_bench" if bench == "do_bench" else "stand-in (wall clock, no triton)",
                  run=str(opts.run), model=meta.get("model"), settings=settings, compile_and_first_calls_s=compile_s,
                  warmup_ms=WARMUP_MS, rep_ms=REP_MS, quantiles=list(QUANTILES), pid=os.getpid(),
                  torch=torch.__version__, debug_env=os.environ.get("TORCH_COMPILE_DEBUG"),
                  device_name=torch.cuda.get_device_name() if torch.cuda.is_available() else None)
    Path(opts.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in ("model", "bench", "median_ms", "q20_ms", "q80_ms", "cpu_per_call_ms")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
