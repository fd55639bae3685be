"""Read a torch.profiler (Kineto) trace: the JSON `export_chrome_trace` and `tensorboard_trace_handler`
write (`*.pt.trace.json`), into the compiled regions it saw and the kernels each ran.

Inductor wraps every call of a compiled graph in a record_function, `## Call CompiledFxGraph <key> ##`.
On a GPU, the kernels a region ran are found through the launches made on its thread inside it
(`cuLaunchKernel`, `cudaLaunchKernel`...), each tied to its device kernel by the `correlation` id.
On the CPU, with Inductor's `cpp.enable_kernel_profile` on, each C++ kernel is a record_function of
its own (`graph_0_cpp_fused_add_0`) inside the region, beside the aten ops of the extern calls.
Stdlib only; a file it cannot read gives an empty Profile with a warning, never an exception.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass

from compile_viz.artifacts.model import ParseWarning

REGION = re.compile(r"^## Call CompiledFxGraph (.*) ##$")
STEP = re.compile(r"^ProfilerStep#\d+$")
RANK_IN_NAME = re.compile(r"rank_?(\d+)")
DEVICE_CATS = frozenset({"kernel", "gpu_memset", "gpu_memcpy"})
LAUNCH_CATS = frozenset({"cuda_runtime", "cuda_driver"})
COMPILE_SUFFIX = " (dynamo_timed)"  # torch._dynamo.utils.dynamo_timed's record_function
OPTIMIZER_STEP = re.compile(r"^Optimizer\.step#")


@dataclass(frozen=True, slots=True)
class ProfileKernel:
    name: str
    dur_us: float
    ts: float
    on_device: bool  # a GPU kernel (or memset/memcpy); False: a CPU op (a C++ kernel, an aten op)


@dataclass(frozen=True, slots=True)
class ProfileRegion:
    """One call of a compiled graph, and what ran in it, in order."""

    key: str  # what Inductor put in the region's name (the FX graph cache key, or "None")
    ts: float
    dur_us: float
    tid: int
    kernels: tuple[ProfileKernel, ...]
    compile_us: float = 0.0  # host time of compile work inside the call (a recompile, lazy autotuning)


@dataclass(frozen=True, slots=True)
class CompileWork:
    """What a profile holds of torch's compile work: set apart, not counted as launches."""

    host_us: float  # the outermost compile ranges' time on the host
    device_us: float  # the device kernels launched inside them (autotuning)
    kernels: int
    steps: tuple[int, ...]  # the steps they fell in (ProfilerStep#N, else optimizer steps counted from 1)
    names: tuple[tuple[str, float], ...]  # the outermost ranges by name, host microseconds, the longest first


@dataclass(frozen=True, slots=True)
class Profile:
    path: str
    rank: int | None
    device: str  # "cuda" when it holds device kernels, else "cpu"
    steps: int  # ProfilerStep#N annotations
    step_us: float  # their summed duration (the profiled steps' wall time on the host)
    device_us: float  # every device kernel's time (GPU); on the CPU the regions' time
    regions: tuple[ProfileRegion, ...]
    warnings: tuple[ParseWarning, ...]
    compile: CompileWork | None = None  # None: the profiled window compiled nothing


def parse_profile(data: bytes | str, *, path: str) -> Profile:
    """The compiled regions of a Kineto trace and their kernels; never raises on content."""
    try:
        doc = json.loads(data)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        if not isinstance(events, list):
            raise ValueError("traceEvents is not a list")
    except (ValueError, KeyError, TypeError) as e:
        reason = f"not a readable torch.profiler trace ({type(e).__name__}: {str(e)[:120]}); nothing joined from it"
        return Profile(path, _rank(None, path), "cpu", 0, 0.0, 0.0, (), (ParseWarning(path, 0, reason),))
    xs = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    ranges = _compile_ranges(xs)
    device, compile_kernels = _split_device(xs, ranges)
    steps = [e for e in xs if STEP.match(str(e.get("name", "")))]
    regions = _regions([e for e in xs if not _is_compile(e)], device, ranges)
    on_gpu = bool(device) or bool(compile_kernels)
    total = sum(float(e.get("dur") or 0) for e in device) if on_gpu else sum(r.dur_us for r in regions)
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    rank = info.get("rank") if isinstance(info, dict) and isinstance(info.get("rank"), int) else None
    # record --profile profiles from inside Optimizer.step: it says how many steps in a key of its own
    marked = doc.get("compile_viz_steps") if isinstance(doc, dict) else None
    n_steps = marked if isinstance(marked, int) and not steps else len(steps)
    first = doc.get("compile_viz_first_step") if isinstance(doc, dict) else None
    work = _compile_work(ranges, compile_kernels, steps, xs, first if isinstance(first, int) else 1)
    return Profile(path, _rank(rank, path), "cuda" if on_gpu else "cpu", n_steps,
                   sum(float(e.get("dur") or 0) for e in steps), total, regions, (), work)


def _is_compile(e: dict) -> bool:
    return str(e.get("name", "")).endswith(COMPILE_SUFFIX)


def _compile_ranges(xs: list[dict]) -> dict[object, list[tuple[float, float, str]]]:
    """tid -> the outermost compile ranges on that thread, (start, end, name), in order."""
    by_tid: dict[object, list[tuple[float, float, str]]] = defaultdict(list)
    for e in sorted((e for e in xs if _is_compile(e)), key=lambda e: (e["ts"], -float(e.get("dur") or 0))):
        start, end = e["ts"], e["ts"] + float(e.get("dur") or 0)
        mine = by_tid[e.get("tid")]
        if mine and start < mine[-1][1]:
            continue  # nested in the previous one
        mine.append((start, end, str(e["name"])[: -len(COMPILE_SUFFIX)]))
    return by_tid


def _inside(ranges: list[tuple[float, float, str]], starts: list[float], ts: float) -> bool:
    i = bisect_right(starts, ts) - 1
    return i >= 0 and ts < ranges[i][1]


def _split_device(xs: list[dict], ranges: dict) -> tuple[list[dict], list[dict]]:
    """The device events (kernels, memsets, copies) of the program, and those launched from inside
    a compile range (autotuning)."""
    device = [e for e in xs if e.get("cat") in DEVICE_CATS]
    if not ranges:
        return device, []
    starts = {tid: [r[0] for r in rs] for tid, rs in ranges.items()}
    compiled = {(e.get("args") or {}).get("correlation") for e in xs
                if e.get("cat") in LAUNCH_CATS and e.get("tid") in ranges
                and _inside(ranges[e.get("tid")], starts[e.get("tid")], e["ts"])} - {None}
    if not compiled:
        return device, []
    keep, apart = [], []
    for e in device:
        (apart if (e.get("args") or {}).get("correlation") in compiled else keep).append(e)
    return keep, apart


def _compile_work(ranges: dict, kernels: list[dict], steps: list[dict], xs: list[dict], first: int) -> CompileWork | None:
    flat = [r for rs in ranges.values() for r in rs]
    if not flat:
        return None
    names: dict[str, float] = defaultdict(float)
    for start, end, name in flat:
        names[name] += end - start
    return CompileWork(sum(end - start for start, end, _ in flat), sum(float(e.get("dur") or 0) for e in kernels),
                       len(kernels), _steps_of([r[0] for r in flat], steps, xs, first),
                       tuple(sorted(names.items(), key=lambda item: -item[1])))


def _steps_of(times: list[float], steps: list[dict], xs: list[dict], first: int) -> tuple[int, ...]:
    """The steps holding these times: the ProfilerStep#N range around each, else the optimizer step
    it came before (record --profile's window starts at optimizer step `first`)."""
    if steps:
        out = {int(str(s["name"]).rsplit("#", 1)[1]) for s in steps for t in times
               if s["ts"] <= t < s["ts"] + float(s.get("dur") or 0)}
        return tuple(sorted(out))
    ends: list[float] = []  # one per step: a step's ranges on several threads overlap, and count once
    for e in sorted((e for e in xs if OPTIMIZER_STEP.match(str(e.get("name", "")))), key=lambda e: e["ts"]):
        end = e["ts"] + float(e.get("dur") or 0)
        if ends and e["ts"] < ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            ends.append(end)
    return tuple(sorted({first + bisect_right(ends, t) for t in times}))


def _rank(rank: int | None, path: str) -> int | None:
    if rank is not None:
        return rank
    m = RANK_IN_NAME.search(path.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


def _regions(xs: list[dict], device: list[dict], ranges: dict) -> tuple[ProfileRegion, ...]:
    by_tid: dict[object, list[dict]] = defaultdict(list)
    for e in xs:
        if e.get("cat") not in DEVICE_CATS:
            by_tid[e.get("tid")].append(e)
    kernels_of = defaultdict(list)  # correlation -> device events
    for e in device:
        corr = (e.get("args") or {}).get("correlation")
        if corr is not None:
            kernels_of[corr].append(e)
    out = []
    for tid, events in by_tid.items():
        events.sort(key=lambda e: (e["ts"], -float(e.get("dur") or 0)))
        starts = [e["ts"] for e in events]
        for e in events:
            m = REGION.match(str(e.get("name", "")))
            if m is None:
                continue
            end = e["ts"] + float(e.get("dur") or 0)
            lo, hi = bisect_right(starts, e["ts"]), bisect_left(starts, end)
            inside = events[lo:hi]
            ran = _device_kernels(inside, kernels_of) if kernels_of else _children(e, inside, ranges.get(tid, ()))
            compiling = sum(min(b, end) - max(a, e["ts"]) for a, b, _ in ranges.get(tid, ()) if a < end and b > e["ts"])
            out.append(ProfileRegion(m.group(1), e["ts"], float(e.get("dur") or 0), _int(tid), tuple(ran), compiling))
    return tuple(sorted(out, key=lambda r: r.ts))


def _device_kernels(inside: list[dict], kernels_of: dict) -> list[ProfileKernel]:
    """The device kernels launched from inside a region, in launch order."""
    out = []
    for e in inside:
        if e.get("cat") in LAUNCH_CATS:
            for k in kernels_of.get((e.get("args") or {}).get("correlation"), ()):
                out.append(ProfileKernel(str(k.get("name", "")), float(k.get("dur") or 0), k["ts"], True))
    return out


def _children(region: dict, inside: list[dict], ranges) -> list[ProfileKernel]:
    """The CPU ops directly inside a region (not inside another op of it, nor in compile work), in order."""
    out, end = [], 0.0
    for e in inside:
        if e["ts"] < end or any(a <= e["ts"] < b for a, b, _ in ranges):
            continue  # nested in the previous child, or compile work
        dur = float(e.get("dur") or 0)
        out.append(ProfileKernel(str(e.get("name", "")), dur, e["ts"], False))
        end = e["ts"] + dur
    return out


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
