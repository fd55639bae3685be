"""Steady-state latency in rounds, in the capture child: eager and compiled interleaved, warm-up discarded.

A round times `n` calls of each variant in turn (the order alternates from round to round), so a
drift of the machine (clocks, another process, the CPU's caches) lands on both variants alike; the
speedup of a round is eager's median over compiled's median in that round. `spread.py` turns the
rounds into a median and the range the middle rounds fall in (issue 17).

On a GPU a call is timed like `triton.testing.do_bench`: the L2 flushed before it, CUDA events
around it, one synchronize at the end of the round; on a CPU, wall time around it. The CPU time to
issue one call (`host_ms`) is timed apart, with the GPU idle before each call: set against the GPU's
summed kernel time it says whether the launches, not the kernels, set the pace.

`COMPILE_VIZ_TIMING_LOCK=PATH` makes the timing hold an exclusive flock on PATH, so that captures
running side by side on one GPU (scripts/timing-check.sh) never time at the same moment.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import statistics
import time

from compile_viz.verify.spread import CPU_FLOOR, median_interval

ROUNDS = 7
MIN_CALLS = 50  # per variant, over all rounds
MAX_CALLS = 1000
TIMING_BUDGET_S = 2.0  # per variant, beyond the minimum number of calls
CPU_CAP_S = 30.0  # a CPU model slower than CPU_CAP_S / MIN_CALLS a call gets fewer calls (noted)
WARMUP_S = 0.2
HOST_CALLS = 30
L2_FLUSH_BYTES = 256 * 1024 * 1024  # what do_bench zeroes before each call
LOCK_ENV = "COMPILE_VIZ_TIMING_LOCK"


def is_cuda(device: str) -> bool:
    return device.startswith("cuda")


def reset_grads(tensors) -> None:
    for t in tensors:
        t.grad = None


@contextlib.contextmanager
def exclusive():
    """Hold the flock named by $COMPILE_VIZ_TIMING_LOCK while timing; yield the seconds waited (None: no lock)."""
    path = os.environ.get(LOCK_ENV)
    if not path:
        yield None
        return
    import fcntl

    with open(path, "a") as f:
        t = time.perf_counter()
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield round(time.perf_counter() - t, 3)
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _warm_up(step, args, grads, sync) -> tuple[int, float]:
    """Return (calls made, seconds per call): at least 3 calls and WARMUP_S, at most 100 calls."""
    warm, t0 = 0, time.perf_counter()
    while warm < 3 or time.perf_counter() - t0 < WARMUP_S:
        reset_grads(grads)
        step(args)
        sync()
        warm += 1
        if warm >= 100:
            break
    return warm, (time.perf_counter() - t0) / warm


def _calls_per_round(estimate: float, cuda: bool, rounds: int, min_calls: int, budget_s: float) -> tuple[int, str]:
    floor = math.ceil(min_calls / rounds)
    n = int(min(MAX_CALLS, max(min_calls, budget_s / max(estimate, 1e-6))) / rounds)
    n = max(floor, n)
    if not cuda and estimate * min_calls > CPU_CAP_S:
        n = max(1, int(CPU_CAP_S / estimate / rounds))
        return n, f"{n * rounds} calls (one call takes {estimate:.2f} s on this CPU)"
    return n, ""


def time_rounds(torch, steps: dict, args, device: str, *, grads=(), rounds: int = ROUNDS,
                min_calls: int = MIN_CALLS, budget_s: float = TIMING_BUDGET_S) -> dict[str, dict]:
    """Return name -> latency stats (ms) of each step(args), timed in `rounds` interleaved rounds."""
    cuda = is_cuda(device)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    plan = {}
    for name, step in steps.items():
        warm, estimate = _warm_up(step, args, grads, sync)
        plan[name] = (warm, *_calls_per_round(estimate, cuda, rounds, min_calls, budget_s))
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=device) if cuda else None
    times: dict[str, list[list[float]]] = {name: [] for name in steps}
    order = list(steps)
    gc_was_on = gc.isenabled()
    gc.disable()  # a collection inside a timed call is noise, not the model's cost
    try:
        for r in range(rounds):
            for name in order[r % len(order):] + order[: r % len(order)]:
                n = plan[name][1]
                times[name].append(_cuda_times(torch, steps[name], args, grads, n, flush) if cuda
                                   else _wall_times(steps[name], args, grads, n))
    finally:
        if gc_was_on:
            gc.enable()
    method = "cuda events, L2 flushed before each call" if cuda else "wall clock"
    return {name: _stats(times[name], plan[name][0], plan[name][2], method) for name in steps}


def time_calls(torch, step, args, device: str, *, grads=(), min_calls: int = MIN_CALLS,
               budget_s: float = TIMING_BUDGET_S, rounds: int = ROUNDS) -> dict:
    """Return steady-state latency stats (ms) of one step(args): warm-up discarded, >= min_calls timed."""
    return time_rounds(torch, {"x": step}, args, device, grads=grads, rounds=rounds, min_calls=min_calls,
                       budget_s=budget_s)["x"]


def _cuda_times(torch, step, args, grads, n: int, flush) -> list[float]:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    torch.cuda.synchronize()
    for i in range(n):
        reset_grads(grads)
        flush.zero_()
        starts[i].record()
        step(args)
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


def _wall_times(step, args, grads, n: int) -> list[float]:
    times = []
    for _ in range(n):
        reset_grads(grads)
        t = time.perf_counter()
        step(args)
        times.append((time.perf_counter() - t) * 1e3)
    return times


def _stats(rounds: list[list[float]], warmup: int, note: str, method: str) -> dict:
    times = [t for r in rounds for t in r]
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    round_medians = [statistics.median(r) for r in rounds]
    median, lo, hi = median_interval(round_medians, floor=_floor(method))
    return {"median_ms": median, "ci_low_ms": lo, "ci_high_ms": hi, "p10_ms": q[0], "p90_ms": q[-1],
            "min_ms": min(times), "mean_ms": statistics.fmean(times),
            "stdev_ms": statistics.stdev(times) if len(times) > 1 else 0.0, "calls": len(times),
            "rounds": len(rounds), "calls_per_round": len(rounds[0]), "round_medians_ms": round_medians,
            "warmup_calls": warmup, "method": method, "note": note}


def _floor(method: str) -> float:
    """The interval's least half-width: spread.CPU_FLOOR for a wall-clock (CPU) timing, else none."""
    return CPU_FLOOR if method.startswith("wall clock") else 0.0


def speedup_rounds(eager: dict, compiled: dict) -> dict | None:
    """Return {"speedup", "low", "high", "rounds"}: eager over compiled per round (paired), median and interval."""
    pairs = [(e, c) for e, c in zip(eager.get("round_medians_ms") or [], compiled.get("round_medians_ms") or [],
                                    strict=False) if e and c]
    if not pairs:
        return None
    ratios = [e / c for e, c in pairs]
    mid, lo, hi = median_interval(ratios, floor=_floor(eager.get("method") or ""))
    return {"speedup": round(mid, 4), "low": round(lo, 4), "high": round(hi, 4),
            "rounds": [round(x, 4) for x in ratios]}


def host_ms(torch, step, args, device: str, *, grads=(), calls: int = HOST_CALLS) -> dict | None:
    """Return the CPU time (ms) to issue one call with the GPU idle before it: median, p10, p90 over `calls`."""
    if not is_cuda(device):
        return None
    times = []
    for _ in range(calls):
        reset_grads(grads)
        torch.cuda.synchronize()
        t = time.perf_counter()
        step(args)
        times.append((time.perf_counter() - t) * 1e3)
    torch.cuda.synchronize()
    q = statistics.quantiles(times, n=10)
    return {"median_ms": statistics.median(times), "p10_ms": q[0], "p90_ms": q[-1], "calls": calls}


def load_average() -> float | None:
    """Return the 1-minute load average (None where the OS has none): other work on the CPU while timing."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None
