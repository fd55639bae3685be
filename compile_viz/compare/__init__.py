"""Two runs compared: graphs paired, launches matched by the nodes they cover, numbers side by side.

sides.py loads a run from whatever names it; pairing.py pairs the graphs; match.py groups the
launches and classifies the groups (model.py); summary.py puts the numbers side by side.
Below render/ and ui/: no streamlit, no HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compile_viz.compare.match import match_graph
from compile_viz.compare.model import CLASSES, SAME, GraphMatch, LaunchRef, MatchGroup
from compile_viz.compare.pairing import pair_graphs
from compile_viz.compare.sides import CompareError, Side, load_side, make_side
from compile_viz.compare.summary import Row, failed_note, graph_rows, row_json, run_rows, timing_note
from compile_viz.measurements import GraphCosts

__all__ = ["CLASSES", "SAME", "CompareError", "GraphMatch", "LaunchRef", "MatchGroup", "Row", "RunDiff", "Side",
           "diff_json", "diff_runs", "failed_note", "graph_costs", "graph_rows", "load_side", "make_side", "match_pair",
           "pairs_of", "row_json", "run_rows", "timing_note"]


@dataclass(frozen=True)
class RunDiff:
    a: Side
    b: Side
    graphs: tuple[GraphMatch, ...]


def graph_costs(side: Side, graph_id: str | None) -> GraphCosts | None:
    """Return the measured costs of one graph of a side, or None."""
    if graph_id is None or side.measurement is None:
        return None
    return side.measurement.graph_costs(graph_id)


def pairs_of(a: Side, b: Side, overrides: Mapping[str, str | None] | None = None) -> list[tuple[str | None, str | None]]:
    """Return the graph pairs of two sides (see pairing.pair_graphs)."""
    return pair_graphs([(g.id, g.kind) for g in a.parse.graphs], [(g.id, g.kind) for g in b.parse.graphs], overrides)


def match_pair(a: Side, b: Side, a_id: str | None, b_id: str | None) -> GraphMatch:
    """Return the launch groups of graph `a_id` of A and `b_id` of B (either may be None)."""
    ga = (a.parse.graph(a_id), a.indexes[a_id], graph_costs(a, a_id)) if a_id else None
    gb = (b.parse.graph(b_id), b.indexes[b_id], graph_costs(b, b_id)) if b_id else None
    return match_graph(ga, gb)


def diff_runs(a: Side, b: Side, overrides: Mapping[str, str | None] | None = None) -> RunDiff:
    """Return the comparison of two runs: every pair of graphs with its launch groups."""
    return RunDiff(a, b, tuple(match_pair(a, b, x, y) for x, y in pairs_of(a, b, overrides)))


def _side_json(side: Side) -> dict:
    meta = side.meta
    resolved = meta.get("resolved") or meta.get("options") or {}
    versions = meta.get("versions") or {}
    s = side.summary
    graphs = []
    for g in side.parse.graphs:
        summary = side.indexes[g.id].summary
        costs = graph_costs(side, g.id)
        graphs.append({"id": g.id, "kind": g.kind, "fx_ops": summary.fx_ops, "post_grad_ops": summary.post_grad_ops,
                       "kernels": summary.kernels, "launches": summary.launches, "extern_calls": summary.extern_calls,
                       "fusion_groups": summary.fusion_groups, "ops_per_kernel": round(summary.ops_per_kernel, 4),
                       "gpu_time_ms": costs.time_us / 1000 if costs and costs.time_us is not None else None})
    return {
        "run": side.key, "title": side.title, "model": meta.get("model"),
        "device": resolved.get("device"), "mode": resolved.get("mode"), "dtype": resolved.get("dtype"),
        "inductor_options": (meta.get("options") or {}).get("inductor_options") or {},
        "torch": versions.get("torch"), "compile_s": side.compile_s, "graph_breaks": side.graph_breaks,
        "measured": None if s is None else {"latency_ms": s.compiled_median_ms, "speedup": s.speedup,
                                            "kernels_per_call": s.compiled_kernels_per_call,
                                            "latency_interval_ms": _pair(s.compiled_low_ms, s.compiled_high_ms),
                                            "speedup_interval": _pair(s.speedup_low, s.speedup_high),
                                            "method": side.measurement.timing().line() if side.measurement else None},
        "graphs": graphs,
    }


def _pair(lo: float | None, hi: float | None) -> list[float] | None:
    return None if lo is None or hi is None else [lo, hi]


def _ref_json(ref: LaunchRef) -> dict:
    return {"index": ref.index, "kernel": ref.kernel, "kind": ref.kind}


def diff_json(diff: RunDiff) -> dict:
    """Return the comparison as `compile-viz diff --json` prints it:
    {"a": {...}, "b": {...}, "graphs": [{"a", "b", "groups": [{"class", "fx_nodes", "a_launches",
    "b_launches", "a_time_ms", "b_time_ms"}]}]}."""
    note = timing_note(diff.a, diff.b)
    return {
        "a": _side_json(diff.a),
        "b": _side_json(diff.b),
        "timing_comparable": None if note is None else {"comparable": note[0], "note": note[1]},
        "graphs": [
            {"a": gm.a, "b": gm.b, "groups": [
                {"class": g.cls, "fx_nodes": list(g.fx_nodes), "a_launches": [_ref_json(r) for r in g.a],
                 "b_launches": [_ref_json(r) for r in g.b], "a_time_ms": g.a_time_ms, "b_time_ms": g.b_time_ms}
                for g in gm.groups]}
            for gm in diff.graphs
        ],
    }

