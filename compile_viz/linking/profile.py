"""Join a job's own profile to its graphs: each launch of each graph gets the device time it took.

A profile's compiled regions (artifacts/profile.py) are calls of compiled graphs; which graph, the
region does not say (its key is the FX cache key, `None` with caches off). Its kernels do: the
region is the graph whose generated kernels it ran, in the same order (on a GPU, the Triton names;
on the CPU, `graph_0_cpp_fused_add_0` is the C++ kernel `cpp_fused_add_0`). Within a region, the
launches of the graph are walked in `call()` order: a generated kernel takes the next kernel of its
name; the kernels met before it belong to the extern calls launched since the last generated kernel
(a GEMM launches one or more library kernels; on the CPU, an extern call is its aten op). A launch
that ran in no region, or found nothing, says why. Only a rank's own graphs join its profile.
Stdlib only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from compile_viz.artifacts.model import GraphParse
from compile_viz.artifacts.profile import Profile, ProfileKernel, ProfileRegion

CPU_KERNEL = re.compile(r"^graph_\d+_(cpp_\w+)$")
NOT_RUN = "no profiled call of this graph (it ran before or after the profiled steps, or not at all)"
NO_KERNEL = "its calls ran no device kernel of their own (a view, a copy folded away, or an op on the host)"
NOT_FOUND = "its kernel was not in the profiled calls of this graph"


@dataclass(frozen=True, slots=True)
class LaunchTime:
    calls: int
    total_us: float

    @property
    def mean_us(self) -> float:
        return self.total_us / self.calls if self.calls else 0.0

    def to_json(self) -> dict:
        return {"calls": self.calls, "total_us": round(self.total_us, 3), "mean_us": round(self.mean_us, 3)}


@dataclass(frozen=True)
class GraphTime:
    """One graph's launches timed: index -> LaunchTime, or index -> why it has none."""

    calls: int  # profiled calls of the graph (regions joined to it)
    times: dict[int, LaunchTime]
    reasons: dict[int, str]
    region_us: float  # the host time of its regions
    unattributed_us: float  # device time in its regions that no launch took

    def launch_json(self, index: int) -> dict:
        t = self.times.get(index)
        return t.to_json() if t is not None else {"reason": self.reasons.get(index, NOT_RUN)}


@dataclass(frozen=True)
class RunTime:
    graphs: dict[str, GraphTime]
    profiles: tuple[Profile, ...]
    unjoined_regions: int
    summary: dict = field(default_factory=dict)
    # (profile path, kernel start, kernel name) -> (graph id, launch index): what the export annotates
    owners: dict = field(default_factory=dict, repr=False)


def _name(k: ProfileKernel) -> str:
    if k.on_device:
        return k.name
    m = CPU_KERNEL.match(k.name)
    return m.group(1) if m else k.name


def _extern_op(kernel: str) -> str:
    """The aten op an extern call runs on the CPU: extern_kernels.addmm -> aten::addmm."""
    name = kernel.rsplit(".", 1)[-1] if kernel.startswith("extern_kernels.") else kernel
    if name.startswith("torch.ops.aten."):
        name = name.split(".")[3]
    return f"aten::{name.removesuffix('.default')}"


def _generated(graph: GraphParse) -> list[str]:
    oc = graph.output_code
    return [la.kernel for la in oc.launches if not la.is_extern] if oc else []


def _region_names(region: ProfileRegion) -> list[str]:
    return [_name(k) for k in region.kernels]


def _score(names: list[str], gen: list[str]) -> int:
    """How many of the graph's generated launches the region's kernels hold, in order."""
    i, hits = 0, 0
    for kernel in gen:
        try:
            i = names.index(kernel, i) + 1
            hits += 1
        except ValueError:
            continue
    return hits


def _graph_of(region: ProfileRegion, graphs: Sequence[GraphParse], gens: dict[str, list[str]]) -> GraphParse | None:
    """The graph whose generated kernels the region ran: the most of them in order, a graph all of
    whose kernels it ran first among equals; None below half of that graph's kernels."""
    names = _region_names(region)
    scored = [((hits := _score(names, gens[g.id]), hits == len(gens[g.id])), g) for g in graphs]
    if not scored:
        return None
    (hits, _), best = max(scored, key=lambda item: item[0])  # the first of the best, as graphs come
    return best if hits >= max(1, len(gens[best.id]) // 2) else None


def _walk(graph: GraphParse, region: ProfileRegion, totals: dict, calls: dict, missing: set, owners: dict) -> float:
    """Share one region's kernels among the graph's launches (each kernel's launch noted in
    `owners`, by its start and name); return the device time no launch took."""
    oc = graph.output_code
    kernels = list(region.kernels)
    names = [_name(k) for k in kernels]
    if not region.kernels or kernels[0].on_device is False:  # CPU: only the graph's own ops count
        wanted = {la.kernel for la in oc.launches if not la.is_extern} | {_extern_op(la.kernel) for la in oc.launches if la.is_extern}
        keep = [i for i, n in enumerate(names) if n in wanted]
        kernels, names = [kernels[i] for i in keep], [names[i] for i in keep]
    i, pending, left = 0, [], 0.0
    for la in oc.launches:
        if la.is_extern:
            pending.append(la.index)
            continue
        try:
            k = names.index(la.kernel, i)
        except ValueError:
            missing.add(la.index)
            continue
        left += _give(kernels[i:k], pending, totals, calls, owners)
        totals[la.index] += kernels[k].dur_us
        calls[la.index] += 1
        owners[(kernels[k].ts, kernels[k].name)] = la.index
        i, pending = k + 1, []
    return left + _give(kernels[i:], pending, totals, calls, owners)


def _give(kernels: list[ProfileKernel], externs: list[int], totals: dict, calls: dict, owners: dict) -> float:
    """Kernels met between two generated launches: one each to the extern calls launched there, the
    rest to the last of them. With no extern call there, nobody's: returned as unattributed."""
    if not kernels:
        return 0.0
    if not externs:
        return sum(k.dur_us for k in kernels)
    for n, k in enumerate(kernels):
        target = externs[min(n, len(externs) - 1)]
        owners[(k.ts, k.name)] = target
        totals[target] += k.dur_us
        if n < len(externs):  # a call counted once, at its first kernel
            calls[target] += 1
    return 0.0


def join_profiles(graphs: Sequence[GraphParse], profiles: Sequence[Profile], rank_of=lambda g: None) -> RunTime:
    """Every launch of every graph timed from the profiles; `rank_of(graph)` keeps a rank's profile
    to its own graphs when the run has several."""
    gens = {g.id: _generated(g) for g in graphs if g.output_code is not None}
    timed = [g for g in graphs if g.id in gens]
    per_graph: dict[str, dict] = defaultdict(lambda: {"calls": 0, "totals": defaultdict(float),
                                                     "counts": defaultdict(int), "missing": set(),
                                                     "region_us": 0.0, "left": 0.0})
    unjoined, in_regions, owners = 0, 0.0, {}
    ranks = {rank_of(g) for g in timed} - {None}
    for profile in profiles:
        mine = [g for g in timed if not ranks or profile.rank is None or rank_of(g) == profile.rank]
        for region in profile.regions:
            graph = _graph_of(region, mine, gens)
            if graph is None:
                unjoined += 1
                continue
            acc = per_graph[graph.id]
            acc["calls"] += 1
            acc["region_us"] += region.dur_us - region.compile_us  # a call that compiled: its compile apart
            mine_owned: dict = {}
            acc["left"] += _walk(graph, region, acc["totals"], acc["counts"], acc["missing"], mine_owned)
            owners.update({(profile.path, *key): (graph.id, launch) for key, launch in mine_owned.items()})
            in_regions += sum(k.dur_us for k in region.kernels)
    out = {}
    for g in timed:
        acc = per_graph.get(g.id)
        times, reasons = {}, {}
        for la in g.output_code.launches:
            if acc and acc["counts"].get(la.index):
                times[la.index] = LaunchTime(acc["counts"][la.index], acc["totals"][la.index])
            elif not acc:
                reasons[la.index] = NOT_RUN
            else:
                reasons[la.index] = NO_KERNEL if la.is_extern else NOT_FOUND
        out[g.id] = GraphTime(acc["calls"] if acc else 0, times, reasons, acc["region_us"] if acc else 0.0,
                              acc["left"] if acc else 0.0)
    joined_us = sum(t.total_us for gt in out.values() for t in gt.times.values())
    device_us = sum(p.device_us for p in profiles)
    summary = {
        "files": [p.path for p in profiles], "device": profiles[0].device if profiles else None,
        "steps": max((p.steps for p in profiles), default=0),
        "total_us": round(device_us, 3), "in_compiled_us": round(in_regions, 3),
        "joined_us": round(joined_us, 3),
        "compiled_share": round(in_regions / device_us, 4) if device_us else None,
        "regions": sum(len(p.regions) for p in profiles), "unjoined_regions": unjoined,
        "launches_timed": sum(len(gt.times) for gt in out.values()),
        "launches": sum(len(gt.times) + len(gt.reasons) for gt in out.values()),
    }
    work = [p.compile for p in profiles if p.compile is not None]
    if work:  # the window spanned a compile: what was set apart, and where
        names: dict[str, float] = defaultdict(float)
        for w in work:
            for name, us in w.names:
                names[name] += us
        summary["compile"] = {
            "host_us": round(sum(w.host_us for w in work), 3), "device_us": round(sum(w.device_us for w in work), 3),
            "kernels": sum(w.kernels for w in work), "steps": sorted({s for w in work for s in w.steps}),
            "calls_compiled": sum(1 for p in profiles for r in p.regions if r.compile_us),
            "top": [[name, round(us, 3)] for name, us in sorted(names.items(), key=lambda i: -i[1])[:5]],
        }
    return RunTime(out, tuple(profiles), unjoined, summary, owners)
