"""Where a job's time went: its profile joined to its graphs (linking/profile.py), launch by launch,
with what each launch fused, the module it belongs to and the source lines it came from; summed
per module and per source line. Reads a run (folder, zip, debug tree) through the artifacts layer.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from compile_viz.artifacts import parse_path, read_profiles
from compile_viz.artifacts.model import DebugParse
from compile_viz.artifacts.trace.module_paths import read_dynamo_inputs_by_rank
from compile_viz.linking import build_index
from compile_viz.linking.graph_labels import graph_labels, graph_rank
from compile_viz.linking.hierarchy import graph_launch_modules
from compile_viz.linking.model import GraphIndex
from compile_viz.linking.profile import RunTime, join_profiles


@dataclass(frozen=True)
class TimeRow:
    graph: str  # graph id
    label: str  # the graph as a person names it
    launch: int
    kernel: str
    kind: str
    calls: int
    total_us: float
    mean_us: float
    share: float  # of the time joined to launches
    fusion_group: str
    module: str  # "" when unknown
    source_lines: tuple[tuple[str, int], ...]
    fx_nodes: tuple[str, ...]

    def to_json(self) -> dict:
        return {"graph": self.graph, "label": self.label, "launch": self.launch, "kernel": self.kernel,
                "kind": self.kind, "calls": self.calls, "total_us": round(self.total_us, 3),
                "mean_us": round(self.mean_us, 3), "share": round(self.share, 4), "fusion_group": self.fusion_group,
                "module": self.module, "source_lines": [list(x) for x in self.source_lines],
                "fx_nodes": list(self.fx_nodes)}


@dataclass(frozen=True)
class TimeReport:
    parse: DebugParse
    runtime: RunTime
    rows: tuple[TimeRow, ...]  # every timed launch, the longest first
    indexes: dict[str, GraphIndex]  # of the graphs the profile timed (parse --json writes their links)

    @property
    def summary(self) -> dict:
        return self.runtime.summary

    def by_module(self) -> list[tuple[str, float]]:
        return _summed((r.module or "(no module)", r.total_us) for r in self.rows)

    def by_line(self) -> list[tuple[str, float]]:
        """Each source line's time (a launch's time shared equally among its lines)."""
        pairs = []
        for r in self.rows:
            for file, line in r.source_lines:
                pairs.append((f"{file}:{line}", r.total_us / len(r.source_lines)))
            if not r.source_lines:
                pairs.append(("(no source line)", r.total_us))
        return _summed(pairs)

    def by_graph(self) -> list[tuple[str, float]]:
        return _summed((r.label, r.total_us) for r in self.rows)


def _summed(pairs) -> list[tuple[str, float]]:
    out: dict[str, float] = defaultdict(float)
    for key, us in pairs:
        out[key] += us
    return sorted(out.items(), key=lambda kv: -kv[1])


def time_rows(parse: DebugParse, runtime: RunTime, indexes: dict[str, GraphIndex], labels: dict[str, str],
              modules: dict[str, list[str | None] | None]) -> list[TimeRow]:
    joined = sum(t.total_us for gt in runtime.graphs.values() for t in gt.times.values()) or 1.0
    rows = []
    for g in parse.graphs:
        gt, index = runtime.graphs.get(g.id), indexes.get(g.id)
        if gt is None or index is None:
            continue
        mods = modules.get(g.id) or []
        for la in index.launches:
            t = gt.times.get(la.index)
            if t is None:
                continue
            module = mods[la.index] if la.index < len(mods) and mods[la.index] else ""
            rows.append(TimeRow(g.id, labels.get(g.id, g.id), la.index, la.kernel, la.kind, t.calls, t.total_us,
                                t.mean_us, t.total_us / joined, la.fusion_group or "", module,
                                tuple(la.source_lines), tuple(la.post_grad_nodes)))
    return sorted(rows, key=lambda r: -r.total_us)


def time_report(path: str, *, parse: DebugParse | None = None, logs=None) -> TimeReport | None:
    """The time report of a run, or None when it holds no profile. `parse` and `logs` (the run's
    TORCH_TRACE logs, for naming graphs; read from the run when None) may be given when already read."""
    profiles = read_profiles(path)
    if not profiles:
        return None
    parse = parse or parse_path(path)
    runtime = join_profiles(parse.graphs, profiles, graph_rank)
    indexes = {g.id: build_index(g) for g in parse.graphs if g.id in runtime.graphs}
    inputs = read_dynamo_inputs_by_rank(path)  # a rank's graphs take its own log's inputs
    modules = {gid: graph_launch_modules(parse.graphs, parse.graph(gid), index,
                                         inputs.get(graph_rank(parse.graph(gid)), inputs.get(None, [])))
               for gid, index in indexes.items()}
    if logs is None:
        logs = _trace_logs(path)
    labels = {gid: label.text for gid, label in graph_labels(parse.graphs, logs).items()}
    return TimeReport(parse, runtime, tuple(time_rows(parse, runtime, indexes, labels, modules)), indexes)


def _trace_logs(path: str) -> list:
    """The run's TORCH_TRACE logs (its trace/, not its debug tree), read; [] when it has none."""
    from compile_viz.artifacts.trace.discover import parse_logs, trace_logs

    return parse_logs(trace_logs(path, skip_dirs=("debug",)))
