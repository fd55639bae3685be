"""Verify the win, in the capture child: steady-state latency, kernel counts, per-kernel cost, correctness.

Called by `child.py` after the capture when `--measure` is on. torch is passed in (the child
imports it); nothing here imports streamlit, plotly or the generated output_code.py.
Correctness is `correctness.py` (PyTorch's accuracy-harness rules, randomness made equal).
Timing is `timing.py`: rounds of eager and compiled interleaved, a median and an interval
(issue 17); the method goes into measure.json beside the numbers.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from compile_viz.measurements import Measurement, headline_note, next_step
from compile_viz.verify import kernel_costs, spread
from compile_viz.verify.correctness import check_correctness
from compile_viz.verify.ladder import run_ladder
from compile_viz.verify.timing import (  # noqa: F401  (time_calls: bench/gpu_measure_check.py)
    exclusive,
    host_ms,
    load_average,
    speedup_rounds,
    time_calls,
    time_rounds,
)
from compile_viz.verify.timing import is_cuda as _is_cuda
from compile_viz.verify.timing import reset_grads as _reset_grads

PROFILE_STEPS = 3
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")  # torch.compile modes that record CUDA graphs


def make_step(torch, fn, settings: dict, loss_fn):
    """Return step(args) -> output: one call of `fn` as the capture ran it (autocast, backward)."""
    device, train, ac = settings["device"], settings["train"], settings.get("autocast_dtype")

    def step(args):
        autocast = torch.autocast(device.split(":")[0], dtype=getattr(torch, ac)) if ac else contextlib.nullcontext()
        with (contextlib.nullcontext() if train else torch.no_grad()), autocast:
            out = fn(*args)
            if train:
                loss_fn(out).backward()
        return out

    return step


def _grad_tensors(torch, model, args) -> list:
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    return [t for t in params + [a for a in args if isinstance(a, torch.Tensor)] if t.requires_grad]


# --------------------------------------------------------------------------- profiler


def profile_calls(torch, step, args, device: str, *, grads=(), steps: int = PROFILE_STEPS) -> dict:
    """Return kernel counts per call and plain per-kernel records from torch.profiler over `steps` calls."""
    from torch.profiler import ProfilerActivity, profile

    cuda = _is_cuda(device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    _reset_grads(grads)
    step(args)
    if cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        for _ in range(steps):
            _reset_grads(grads)
            step(args)
        if cuda:
            torch.cuda.synchronize()
    events = list(prof.events())
    records = _gpu_records(events) if cuda else _cpu_records(events)
    kernels = [r for r in records if r["counted"]]
    return {"records": records, "steps": steps,
            "kernels_per_call": round(len(kernels) / steps, 2),
            "kernels_in_graphs_per_call": round(sum(1 for r in kernels if r["region"] is not None) / steps, 2),
            "device_time_per_call_us": round(sum(r["dur_us"] for r in kernels) / steps, 3),
            "memcpy_memset_per_call": round(sum(1 for r in records if not r["counted"]) / steps, 2),
            "graph_calls_per_call": round(len({r["region"] for r in records if r["region"] is not None}) / steps, 2)}


def _marked(evt) -> bool:
    return evt.name.startswith(kernel_costs.REGION_MARK)


def _region_and_top(evt) -> tuple[int | None, str]:
    """Return (id of the enclosing compiled-graph call, the op right under it) or (None, outermost op)."""
    chain, node = [], evt
    while node is not None:
        if _marked(node):
            return node.id, (chain[-1].name if chain else evt.name)
        chain.append(node)
        node = node.cpu_parent
    return None, chain[-1].name


def _gpu_records(events) -> list[dict]:
    records = []
    for evt in events:
        if not getattr(evt, "kernels", None) or str(evt.device_type).endswith("CUDA"):
            continue
        region, top = _region_and_top(evt)
        for k in evt.kernels:
            copy = k.name.startswith(("Memcpy", "Memset"))
            records.append({"name": k.name, "op": top, "dur_us": float(k.duration), "region": region,
                            "counted": not copy, "start": evt.time_range.start})
    records.sort(key=lambda r: r["start"])
    return records


CPU_NO_COST = ("aten::empty", "aten::as_strided", "aten::view", "aten::reshape", "aten::detach", "aten::lift",
               "aten::alias", "aten::_reshape_alias", "aten::resize_", "TorchDynamo", "Torch-Compiled")


def _has_marked(evt, depth: int = 0) -> bool:
    return _marked(evt) or (depth < 12 and any(_has_marked(c, depth + 1) for c in evt.cpu_children))


def _cpu_records(events) -> list[dict]:
    """On a CPU the "kernels" are the ops right under each compiled-graph call (C++ kernels show up
    under cpp.enable_kernel_profile) and, outside compiled graphs, the outermost ops."""
    records = []
    for evt in events:
        parent = evt.cpu_parent
        if parent is not None and _marked(parent):
            region = parent.id
        elif parent is None and not _has_marked(evt):
            region = None
        else:
            continue
        records.append({"name": evt.name, "op": evt.name, "dur_us": float(evt.cpu_time_total), "region": region,
                        "counted": not evt.name.startswith(CPU_NO_COST), "start": evt.time_range.start})
    records.sort(key=lambda r: r["start"])
    return records


# --------------------------------------------------------------------------- bandwidth


def copy_bandwidth_gbps(torch, device: str, nbytes: int = 256 * 1024 * 1024) -> float | None:
    """Return the measured bandwidth of a large device-to-device copy (bytes read + written per second, GB/s)."""
    cuda = _is_cuda(device)
    if not cuda:
        nbytes = 64 * 1024 * 1024
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    reps = 10
    for _ in range(2):
        dst.copy_(src)
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(reps):
            dst.copy_(src)
        end.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(end) / 1e3
    else:
        t = time.perf_counter()
        for _ in range(reps):
            dst.copy_(src)
        seconds = time.perf_counter() - t
    return round(2 * nbytes * reps / seconds / 1e9, 1) if seconds > 0 else None


# --------------------------------------------------------------------------- the whole measurement


def load_graphs(debug_dir: Path) -> list[kernel_costs.GraphCode]:
    """Return each graph's parsed output_code.py and input dtypes (our parsers; the file is never run)."""
    from compile_viz.artifacts.fx_graph import parse_fx_graph
    from compile_viz.artifacts.output_code import parse_output_code

    graphs = []
    for path in sorted(debug_dir.glob("**/torchinductor/*/output_code.py")):
        code = parse_output_code(path.read_text(encoding="utf-8", errors="replace"), path=str(path))
        dtypes = {}
        fx = path.parent / "fx_graph_transformed.py"
        if fx.is_file():
            graph = parse_fx_graph(fx.read_text(encoding="utf-8", errors="replace"), path=str(fx))
            dtypes = {n.name: n.dtype for n in graph.nodes if n.op == "placeholder" and n.dtype}
        graphs.append(kernel_costs.GraphCode(path.parent.name, code, dtypes))
    return graphs


def run_measurement(torch, *, model, compiled, calls, settings: dict, loss_fn, run_dir: Path,
                    hardware: dict, compile_s: float | None, emit=lambda *a, **k: None,
                    ladder: bool = False) -> tuple[dict, dict]:
    """Measure eager vs compiled on the last input set; return (full measure.json data, meta summary).
    When correctness is wrong, or `ladder` asks, the backend ladder goes into correctness.ladder."""
    device = settings["device"]
    args = calls[-1]
    steps = {"eager": make_step(torch, model, settings, loss_fn), "compiled": make_step(torch, compiled, settings, loss_fn)}
    grads = _grad_tensors(torch, model, args) if settings["train"] else []
    full: dict = {"schema": 2, "device": device, "device_name": hardware.get("gpu") or hardware.get("cpu"),
                  "train": settings["train"], "dtype": settings["dtype"], "compile_s": compile_s,
                  "input_set": len(calls) - 1, "errors": []}

    def section(name, fn):
        try:
            return fn()
        except Exception as e:  # one failed part must not lose the others
            full["errors"].append(f"{name}: {type(e).__name__}: {e}"[:400])
            return None

    emit("measuring", "steady-state latency: eager and compiled in interleaved rounds")
    quiesce_compile_workers(torch)
    with exclusive() as waited:
        load = load_average()
        latency = _time_both(torch, steps, args, device, grads, section)
        for key in steps:
            full[key] = {"latency": latency.get(key)}
        full["cpu_per_call"] = section("CPU time per call", lambda: host_ms(torch, steps["compiled"], args, device, grads=grads))
        emit("measuring", "profiler: kernels per call")
        for key, step in steps.items():
            _profile(torch, key, step, args, device, grads, full, section, run_dir)
        peak = kernel_costs.peak_bandwidth_gbps(hardware.get("gpu")) if _is_cuda(device) else None
        full["bandwidth"] = {"peak_gbps": peak, "peak_source": "data sheet table" if peak else None,
                             "copy_gbps": section("copy bandwidth", lambda: copy_bandwidth_gbps(torch, device))}
    _reset_grads(grads)
    # after the timing, so that the check's own compile (if any) cannot touch what was timed
    emit("measuring", "correctness: eager vs compiled, same seed")
    full["correctness"] = section("correctness", lambda: check_correctness(
        torch, model=model, compiled=compiled, args=args, settings=settings, emit=emit,
        make_step=lambda fn, s: make_step(torch, fn, s, loss_fn)))
    _reset_grads(grads)
    corr = full["correctness"]
    if corr and (ladder or corr.get("status") == "wrong"):
        corr["ladder"] = section("ladder", lambda: run_ladder(
            torch, model=model, args=args, settings=settings, emit=emit,
            make_step=lambda fn, s: make_step(torch, fn, s, loss_fn)))
        _reset_grads(grads)
        _hint_from_ladder(corr)
    full["method"] = timing_method(torch, settings, latency, waited=waited, load=load)
    full["speedup"], full["speedup_interval"] = _speedup(full)
    return full, summarize(full)


def _hint_from_ladder(corr: dict) -> None:
    """Give a wrong result's note and first failure the ladder's next step as their hint: the hint
    written before the ladder ran is chosen from the tensor alone (the after-AOT minifier)."""
    first = (corr.get("ladder") or {}).get("first")
    if corr.get("status") != "wrong" or not (step := next_step(first)):
        return
    corr["note"] = headline_note(corr.get("note"), first)
    if isinstance(corr.get("first_failure"), dict):
        corr["first_failure"]["hint"] = step


def quiesce_compile_workers(torch) -> bool:
    """Stop Inductor's pool of compile worker processes before timing: left alone it keeps starting
    and warming processes after the compile, and on a machine of few cores it takes the cores the
    timing runs on (two CPU captures of pointwise_chain: speedups 1.5-3.0x with the pool still
    starting, 3.5-3.7x without). A later compile starts it again. Return whether it was stopped."""
    try:
        from torch._inductor.async_compile import shutdown_compile_workers

        shutdown_compile_workers()
        return True
    except Exception:  # an older or newer torch without it: time as before
        return False


def _time_both(torch, steps: dict, args, device: str, grads, section) -> dict:
    """Return {"eager": stats, "compiled": stats}, interleaved; each alone when the pair fails (one is then missing)."""
    both = section("latency", lambda: time_rounds(torch, steps, args, device, grads=grads))
    if both:
        return both
    return {key: section(f"{key} latency", lambda step=step: time_calls(torch, step, args, device, grads=grads))
            for key, step in steps.items()}


def _profile(torch, key: str, step, args, device: str, grads, full: dict, section, run_dir: Path) -> None:
    prof = section(f"{key} profile", lambda: profile_calls(torch, step, args, device, grads=grads))
    if not prof:
        return
    records = prof.pop("records")
    full[key]["profile"] = prof
    if key == "compiled":
        full["kernels"] = section("per-kernel attribution", lambda: kernel_costs.attribute(
            records, load_graphs(run_dir / "debug"), steps=prof["steps"]))


def timing_method(torch, settings: dict, latency: dict, *, waited: float | None, load: float | None) -> dict:
    """Return how the latency was measured, stored beside the numbers so that two runs can be compared."""
    cuda = _is_cuda(settings["device"])
    stats = latency.get("compiled") or latency.get("eager") or {}
    try:
        graphs_on = bool(torch._inductor.config.triton.cudagraphs)
    except AttributeError:
        graphs_on = False
    what = "training step: forward, loss and backward" if settings["train"] else "forward under no_grad"
    if settings.get("autocast_dtype"):
        what += f", autocast {settings['autocast_dtype']}"
    return {
        "timed": f"one call of the model as captured ({what}), on the last input set",
        "clock": "CUDA events around each call" if cuda else "wall clock around each call",
        "rounds": stats.get("rounds"), "calls_per_round": {k: (v or {}).get("calls_per_round") for k, v in latency.items()},
        "interleaved": len(latency) > 1, "warmup": "at least 3 calls and 0.2 s per variant, discarded",
        "l2_flushed": cuda, "cuda_graphs": cuda and (settings.get("mode") in CUDA_GRAPH_MODES or graphs_on),
        "interval": spread.INTERVAL if cuda else spread.INTERVAL_CPU, "gc": "off while timing",
        "allocator": _allocator(), "compile_workers": "stopped before timing",
        "cpu_time": "CPU time to issue one compiled call with the GPU idle before it" if cuda else None,
        "exclusive": waited is not None, "lock_waited_s": waited, "load_avg_1m": load,
    }


def _allocator() -> str:
    mmap, trim = os.environ.get("MALLOC_MMAP_THRESHOLD_"), os.environ.get("MALLOC_TRIM_THRESHOLD_")
    if mmap is None and trim is None:
        return "glibc malloc defaults (a moving mmap threshold)"
    return f"glibc malloc, MALLOC_MMAP_THRESHOLD_={mmap}, MALLOC_TRIM_THRESHOLD_={trim}"


def _speedup(full: dict) -> tuple[float | None, dict | None]:
    e, c = (full.get(k, {}).get("latency") or {} for k in ("eager", "compiled"))
    paired = speedup_rounds(e, c)
    if paired:
        return round(paired["speedup"], 3), paired
    if e.get("median_ms") and c.get("median_ms"):
        return round(e["median_ms"] / c["median_ms"], 3), None
    return None, None


def summarize(full: dict) -> dict:
    """Return the small summary that goes into meta.json's `measure` (the rest stays in measure.json)."""
    return Measurement.from_json(full).summary().to_json()
