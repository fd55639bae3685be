"""Verify the win, in the capture child: steady-state latency, kernel counts, per-kernel cost, correctness.

Called by `child.py` after the capture when `--measure` is on. torch is passed in (the child
imports it); nothing here imports streamlit, plotly or the generated output_code.py.
Correctness is `correctness.py` (PyTorch's accuracy-harness rules, randomness made equal).
Timing follows `triton.testing.do_bench` on a GPU: L2 flushed before every call, CUDA events
around each call, one synchronize at the end; on a CPU, wall time around each call.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from pathlib import Path

from compile_viz.capture import kernel_costs
from compile_viz.capture.correctness import check_correctness
from compile_viz.measurements import Measurement

MIN_CALLS = 50
MAX_CALLS = 1000
TIMING_BUDGET_S = 2.0  # per variant (eager, compiled), beyond the minimum number of calls
CPU_CAP_S = 30.0  # a CPU model slower than CPU_CAP_S / MIN_CALLS a call gets fewer calls (noted)
WARMUP_S = 0.2
PROFILE_STEPS = 3
L2_FLUSH_BYTES = 256 * 1024 * 1024  # what do_bench zeroes before each call


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


def _reset_grads(tensors) -> None:
    for t in tensors:
        t.grad = None


# --------------------------------------------------------------------------- latency


def _is_cuda(device: str) -> bool:
    return device.startswith("cuda")


def time_calls(torch, step, args, device: str, *, grads=(), min_calls: int = MIN_CALLS,
               budget_s: float = TIMING_BUDGET_S) -> dict:
    """Return steady-state latency stats (ms) of step(args): warm-up discarded, >= min_calls timed."""
    cuda = _is_cuda(device)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    warm, t0 = 0, time.perf_counter()
    while warm < 3 or time.perf_counter() - t0 < WARMUP_S:
        _reset_grads(grads)
        step(args)
        sync()
        warm += 1
        if warm >= 100:
            break
    estimate = (time.perf_counter() - t0) / warm
    n = int(min(MAX_CALLS, max(min_calls, budget_s / max(estimate, 1e-6))))
    note = ""
    if not cuda and estimate * min_calls > CPU_CAP_S:
        n = max(5, int(CPU_CAP_S / estimate))
        note = f"{n} calls (one call takes {estimate:.2f} s on this CPU)"
    gc_was_on = gc.isenabled()
    gc.disable()  # a collection inside a timed call is noise, not the model's cost
    try:
        times = _cuda_times(torch, step, args, grads, n) if cuda else _wall_times(step, args, grads, n)
    finally:
        if gc_was_on:
            gc.enable()
    return _stats(times, warm, note, "cuda events, L2 flushed before each call" if cuda else "wall clock")


def _cuda_times(torch, step, args, grads, n: int) -> list[float]:
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    torch.cuda.synchronize()
    for i in range(n):
        _reset_grads(grads)
        flush.zero_()
        starts[i].record()
        step(args)
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def _wall_times(step, args, grads, n: int) -> list[float]:
    times = []
    for _ in range(n):
        _reset_grads(grads)
        t = time.perf_counter()
        step(args)
        times.append((time.perf_counter() - t) * 1e3)
    return times


def _stats(times: list[float], warmup: int, note: str, method: str) -> dict:
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    return {"median_ms": statistics.median(times), "p10_ms": q[0], "p90_ms": q[-1], "min_ms": min(times),
            "mean_ms": statistics.fmean(times), "stdev_ms": statistics.stdev(times) if len(times) > 1 else 0.0,
            "calls": len(times), "warmup_calls": warmup, "method": method, "note": note}


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
                    hardware: dict, compile_s: float | None, emit=lambda *a, **k: None) -> tuple[dict, dict]:
    """Measure eager vs compiled on the last input set; return (full measure.json data, meta summary)."""
    device = settings["device"]
    args = calls[-1]
    eager_step = make_step(torch, model, settings, loss_fn)
    compiled_step = make_step(torch, compiled, settings, loss_fn)
    grads = _grad_tensors(torch, model, args) if settings["train"] else []
    full: dict = {"schema": 1, "device": device, "device_name": hardware.get("gpu") or hardware.get("cpu"),
                  "train": settings["train"], "dtype": settings["dtype"], "compile_s": compile_s,
                  "input_set": len(calls) - 1, "errors": []}

    def section(name, fn):
        try:
            return fn()
        except Exception as e:  # one failed part must not lose the others
            full["errors"].append(f"{name}: {type(e).__name__}: {e}"[:400])
            return None

    emit("measuring", "steady-state latency")
    full["eager"] = {"latency": section("eager latency", lambda: time_calls(torch, eager_step, args, device, grads=grads))}
    full["compiled"] = {"latency": section("compiled latency",
                                           lambda: time_calls(torch, compiled_step, args, device, grads=grads))}
    emit("measuring", "profiler: kernels per call")
    for key, step in (("eager", eager_step), ("compiled", compiled_step)):
        prof = section(f"{key} profile", lambda step=step: profile_calls(torch, step, args, device, grads=grads))
        if prof:
            records = prof.pop("records")
            full[key]["profile"] = prof
            if key == "compiled":
                full["kernels"] = section("per-kernel attribution", lambda records=records, steps=prof["steps"]:
                                          kernel_costs.attribute(records, load_graphs(run_dir / "debug"),
                                                                 steps=steps))
    _reset_grads(grads)
    # after the timing, so that the check's own compile (if any) cannot touch what was timed
    emit("measuring", "correctness: eager vs compiled, same seed")
    full["correctness"] = section("correctness", lambda: check_correctness(
        torch, model=model, compiled=compiled, args=args, settings=settings, emit=emit,
        make_step=lambda fn, s: make_step(torch, fn, s, loss_fn)))
    _reset_grads(grads)
    peak = kernel_costs.peak_bandwidth_gbps(hardware.get("gpu")) if _is_cuda(device) else None
    full["bandwidth"] = {"peak_gbps": peak, "peak_source": "data sheet table" if peak else None,
                         "copy_gbps": section("copy bandwidth", lambda: copy_bandwidth_gbps(torch, device))}
    full["speedup"] = _speedup(full)
    return full, summarize(full)


def _speedup(full: dict) -> float | None:
    e, c = (full.get(k, {}).get("latency") or {} for k in ("eager", "compiled"))
    if e.get("median_ms") and c.get("median_ms"):
        return round(e["median_ms"] / c["median_ms"], 3)
    return None


def summarize(full: dict) -> dict:
    """Return the small summary that goes into meta.json's `measure` (the rest stays in measure.json)."""
    return Measurement.from_json(full).summary().to_json()
