"""What to call a graph so that a person knows it: `rank 1 · [0/1] forward · backward (2 of 3)`.

A graph's id is its folder (`run_..-pid_4319/model__0_forward_1.0`) or its place in a trace
(`rank 0 [0/0] forward 2`); neither says which rank compiled it, from which frame, or which piece of
a frame DDP's optimizer split it into. This joins a run's graphs to its TORCH_TRACE logs: the rank
from the id or the folder (`debug/rank_R/` in a recorded job), the compile id and frame from the
rank's log (a trace graph names its compile id; a debug folder's graph is found by its AOT id),
and the piece from the graphs of the same rank, compile id and kind, in order. Stdlib only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from compile_viz.artifacts.model import GraphParse
from compile_viz.artifacts.trace.discover import AOT_ID_IN_FOLDER
from compile_viz.artifacts.trace.model import CompileRecord, TraceLog

RANK_IN_ID = re.compile(r"^rank (\d+) ")
RANK_DIR = re.compile(r"(?:^|/)rank_(\d+)(?:/|$)")
TRACE_GRAPH_ID = re.compile(r"^(?:rank \d+ )?\[([^\]]+)\] ")


@dataclass(frozen=True)
class GraphLabel:
    rank: int | None
    compile_id: str  # "" when the logs do not say
    frame: str  # the compiled function's name, "" when unknown
    kind: str
    piece: int  # 1-based among the graphs of the same rank, compile id and kind
    pieces: int
    text: str


def graph_rank(graph: GraphParse) -> int | None:
    """The rank that compiled `graph`: from a trace graph's id, or a `rank_R` folder above it."""
    m = RANK_IN_ID.match(graph.id) or RANK_DIR.search(graph.folder.location)
    return int(m.group(1)) if m else None


def compile_of(logs: Sequence[TraceLog], graph: GraphParse) -> tuple[TraceLog, CompileRecord] | None:
    """The log and the compile id a graph came from, or None when the logs do not say for sure.

    A graph read from a trace names its compile id (`[0/1] forward`) and its log (its location);
    a debug folder's graph is found by the AOT id in its name (`model__0_forward_1.0`), among the
    logs of its rank when it has one, when exactly one compile id there compiled that AOT id."""
    m = TRACE_GRAPH_ID.match(graph.id)
    log_path = graph.folder.location.rsplit(":", 1)[0]
    if m:
        for log in logs:
            if log.path == log_path and (c := log.compile(m.group(1))) is not None:
                return log, c
    aot = AOT_ID_IN_FOLDER.search(graph.folder.name)
    if aot is None:
        return None
    rank = graph_rank(graph)
    mine = [log for log in logs if log.rank == rank] if rank is not None and len(logs) > 1 else logs
    found = [(log, c) for log in mine for c in log.compiles if any(g.aot_id == aot.group(1) for g in c.graphs)]
    return found[0] if len(found) == 1 else None


def graph_labels(graphs: Sequence[GraphParse], logs: Sequence[TraceLog] = ()) -> dict[str, GraphLabel]:
    """Graph id -> its label, for every graph; the rank is named only when the run has several."""
    facts = []
    for g in graphs:
        found = compile_of(logs, g) if logs else None
        rank = graph_rank(g)
        if rank is None and found is not None:
            rank = found[0].rank
        cid, frame = (found[1].id, found[1].co_name) if found else ("", "")
        facts.append((g, rank, cid, frame))
    ranks = {rank for _, rank, _, _ in facts if rank is not None}
    groups: dict[tuple, list[str]] = defaultdict(list)
    for g, rank, cid, _ in facts:
        if cid:
            groups[(rank, cid, g.kind)].append(g.id)
    out = {}
    for g, rank, cid, frame in facts:
        same = groups.get((rank, cid, g.kind), [g.id])
        piece, pieces = same.index(g.id) + 1, len(same)
        parts = [f"rank {rank}"] if len(ranks) > 1 and rank is not None else []
        parts.append(f"[{cid}] {frame}".strip() if cid else g.folder.name)
        parts.append(f"{g.kind} ({piece} of {pieces})" if pieces > 1 else g.kind)
        out[g.id] = GraphLabel(rank, cid, frame, g.kind, piece, pieces, " · ".join(parts))
    return out
