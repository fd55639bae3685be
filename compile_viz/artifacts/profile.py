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
    device = [e for e in xs if e.get("cat") in DEVICE_CATS]
    steps = [e for e in xs if STEP.match(str(e.get("name", "")))]
    regions = _regions(xs, device)
    on_gpu = bool(device)
    total = sum(float(e.get("dur") or 0) for e in device) if on_gpu else sum(r.dur_us for r in regions)
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    rank = info.get("rank") if isinstance(info, dict) and isinstance(info.get("rank"), int) else None
    # record --profile profiles from inside Optimizer.step: it says how many steps in a key of its own
    marked = doc.get("compile_viz_steps") if isinstance(doc, dict) else None
    n_steps = marked if isinstance(marked, int) and not steps else len(steps)
    return Profile(path, _rank(rank, path), "cuda" if on_gpu else "cpu", n_steps,
                   sum(float(e.get("dur") or 0) for e in steps), total, regions, ())


def _rank(rank: int | None, path: str) -> int | None:
    if rank is not None:
        return rank
    m = RANK_IN_NAME.search(path.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


def _regions(xs: list[dict], device: list[dict]) -> tuple[ProfileRegion, ...]:
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
            lo, hi = bisect_right(starts, e["ts"]), bisect_left(starts, e["ts"] + float(e.get("dur") or 0))
            inside = events[lo:hi]
            ran = _device_kernels(inside, kernels_of) if kernels_of else _children(e, inside)
            out.append(ProfileRegion(m.group(1), e["ts"], float(e.get("dur") or 0), _int(tid), tuple(ran)))
    return tuple(sorted(out, key=lambda r: r.ts))


def _device_kernels(inside: list[dict], kernels_of: dict) -> list[ProfileKernel]:
    """The device kernels launched from inside a region, in launch order."""
    out = []
    for e in inside:
        if e.get("cat") in LAUNCH_CATS:
            for k in kernels_of.get((e.get("args") or {}).get("correlation"), ()):
                out.append(ProfileKernel(str(k.get("name", "")), float(k.get("dur") or 0), k["ts"], True))
    return out


def _children(region: dict, inside: list[dict]) -> list[ProfileKernel]:
    """The CPU ops directly inside a region (not inside another op of it), in order."""
    out, end = [], 0.0
    for e in inside:
        if e["ts"] < end:
            continue  # nested in the previous child
        dur = float(e.get("dur") or 0)
        out.append(ProfileKernel(str(e.get("name", "")), dur, e["ts"], False))
        end = e["ts"] + dur
    return out


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
