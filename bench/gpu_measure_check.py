"""Check the measurement against Triton's do_bench on a GPU (issue 6); prints JSON and a table.

For pointwise_chain, layernorm_linear_gelu_residual and gpt_small (the samples' own settings):
  - our compiled median (measure.time_calls) vs triton.testing.do_bench(return_mode="median") on the
    same compiled step, target within 10%;
  - the sum of per-kernel device times from torch.profiler vs the compiled latency, target within 15%
    or the gap explained (launch overhead / CPU time between kernels: the GPU idles);
then pointwise_chain's kernel counts and speedup, and matmul_softmax's true speedup.

    python3 bench/gpu_measure_check.py [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHECKED = ("pointwise_chain", "layernorm_linear_gelu_residual", "gpt_small")
ROUNDS = 3  # alternating rounds of ours and do_bench; --rounds to change
TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "autocast": "float32"}


def _setup(torch, name: str):
    from compile_viz.verify.measure import _grad_tensors, make_step
    from sample_models import get_sample

    spec = get_sample(name)
    dtype, _ = spec.dtype_for("cuda")
    settings = {"device": "cuda", "dtype": dtype, "train": bool(spec.default_train),
                "autocast_dtype": "bfloat16" if dtype == "autocast" else None}
    torch.manual_seed(0)
    model = spec.build("cuda", getattr(torch, TORCH_DTYPES[dtype]))
    if isinstance(model, torch.nn.Module):
        model.train(settings["train"])
    args = spec.calls("cuda", getattr(torch, TORCH_DTYPES[dtype]))[-1]
    compiled = torch.compile(model)
    loss = spec.loss or (lambda out: (out[0] if isinstance(out, (tuple, list)) else out).float().pow(2).mean())
    grads = _grad_tensors(torch, model, args) if settings["train"] else []
    return (make_step(torch, model, settings, loss), make_step(torch, compiled, settings, loss), args, grads,
            settings)


def _enqueue_ms(torch, step, args, grads, n: int = 50) -> float:
    """Return the median CPU time to issue one call with the GPU idle (no sync inside the timing)."""
    import statistics

    times = []
    for _ in range(n):
        for g in grads:
            g.grad = None
        torch.cuda.synchronize()
        t = time.perf_counter()
        step(args)
        times.append((time.perf_counter() - t) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(times)


def check(torch, name: str, rounds: int = ROUNDS) -> dict:
    from triton.testing import do_bench

    from compile_viz.verify.measure import profile_calls, time_calls

    eager, compiled, args, grads, settings = _setup(torch, name)
    t = time.perf_counter()
    compiled(args)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t
    # alternate ours and do_bench: a launch-bound call's latency drifts with the CPU's state
    ours_runs, theirs_runs = [], []
    for _ in range(rounds):
        ours_runs.append(time_calls(torch, compiled, args, "cuda", grads=grads))
        theirs_runs.append(do_bench(lambda: compiled(args), grad_to_none=grads or None, return_mode="median"))
    ours = sorted(ours_runs, key=lambda s: s["median_ms"])[rounds // 2]
    theirs = sorted(theirs_runs)[rounds // 2]
    cpu_ms = _enqueue_ms(torch, compiled, args, grads)
    prof = profile_calls(torch, compiled, args, "cuda", grads=grads)
    eager_lat = time_calls(torch, eager, args, "cuda", grads=grads)
    eager_prof = profile_calls(torch, eager, args, "cuda", grads=grads)
    kernel_ms = prof["device_time_per_call_us"] / 1e3
    median = ours["median_ms"]
    return {"model": name, "settings": settings, "compile_s": round(compile_s, 2),
            "ours_median_ms": round(median, 4), "ours_p10_ms": round(ours["p10_ms"], 4),
            "ours_p90_ms": round(ours["p90_ms"], 4), "calls": ours["calls"],
            "do_bench_median_ms": round(theirs, 4), "ours_vs_do_bench": round(median / theirs - 1, 4),
            "kernel_sum_ms": round(kernel_ms, 4), "kernel_sum_vs_latency": round(kernel_ms / median - 1, 4),
            "gap_ms": round(median - kernel_ms, 4), "cpu_enqueue_ms": round(cpu_ms, 4),
            "max_cpu_gpu_vs_latency": round(max(cpu_ms, kernel_ms) / median - 1, 4),
            "ours_rounds_ms": [round(r["median_ms"], 4) for r in ours_runs],
            "do_bench_rounds_ms": [round(t, 4) for t in theirs_runs], "kernels_per_call": prof["kernels_per_call"],
            "gap_per_kernel_us": round((median - kernel_ms) * 1e3 / max(prof["kernels_per_call"], 1), 2),
            "eager_median_ms": round(eager_lat["median_ms"], 4), "eager_kernels_per_call": eager_prof["kernels_per_call"],
            "speedup": round(eager_lat["median_ms"] / median, 3)}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="also write the results as JSON here")
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--rounds", type=int, default=ROUNDS, help="alternating rounds (median round is compared)")
    opts = p.parse_args(argv)
    import torch

    gpu = torch.cuda.get_device_name()
    results = {"gpu": gpu, "torch": torch.__version__, "checks": []}
    for name in opts.only or (*CHECKED, "matmul_softmax"):
        r = check(torch, name, opts.rounds)
        results["checks"].append(r)
        print(json.dumps(r), flush=True)
    print(f"\n{gpu}, torch {torch.__version__}")
    print(f"{'model':34} {'ours ms':>9} {'do_bench':>9} {'diff':>7} {'kern ms':>9} {'k/lat':>7} {'gap/k us':>8}"
          f" {'cpu ms':>8} {'max/lat':>7} {'kernels e->c':>13} {'speedup':>8}")
    for r in results["checks"]:
        print(f"{r['model']:34} {r['ours_median_ms']:9.4f} {r['do_bench_median_ms']:9.4f} {r['ours_vs_do_bench']:+7.1%}"
              f" {r['kernel_sum_ms']:9.4f} {r['kernel_sum_vs_latency']:+7.1%} {r['gap_per_kernel_us']:8.2f}"
              f" {r['cpu_enqueue_ms']:8.4f} {r['max_cpu_gpu_vs_latency']:+7.1%} {r['eager_kernels_per_call']:>6g}->{r['kernels_per_call']:<6g} {r['speedup']:8.3f}")
    if opts.out:
        Path(opts.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
