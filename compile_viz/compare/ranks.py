"""Ranks of one job side by side: what each rank compiled, and where ranks differ.

In a torchrun job every rank should compile the same frames to the same graphs, with the same
guards, the same collectives in the same order and the same cache outcome. Where one rank does not,
it runs other code or takes another time to get there, and the others wait for it at the next
collective, or hang. This module reads the ranks' TORCH_TRACE logs (one TraceLog a rank) and
lists, compile id by compile id, each way a minority of ranks differs from the rest, with a line on
what it means for the job. The majority is the largest group of ranks that agree (a tie: the group
holding the lowest rank). Stdlib only.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compile_viz.artifacts.discover import DiscoveryError
from compile_viz.artifacts.trace.discover import parse_logs, trace_logs
from compile_viz.artifacts.trace.model import CompileRecord, TraceGraph, TraceLog
from compile_viz.compare.sides import CompareError, run_path

OP = re.compile(r"torch\.ops\.([\w.]+)")
COLLECTIVE = re.compile(r"(?:_c10d_functional|c10d_functional|c10d|_dtensor)\.\w+")
# what differs between processes in a guard but says nothing: object ids, addresses, and each
# rank's own device (rank 1's tensors are on cuda:1)
VOLATILE = re.compile(r"0x[0-9a-f]+|\b\d{10,}\b|(?<=device=)\d+|(?<=cuda:)\d+|(?<=, )\d{6,}(?=\))")  # ..., 764762208)
TIMING_LINES = ("Guard latency", "Guard eval latency")

MEANING = {
    "compile_id": "the ranks without it did not compile this frame again: while the others compile, "
                  "they wait at the next collective (a recompile on some ranks only usually means their "
                  "inputs differ: shapes, a data-dependent branch, a Python value)",
    "status": "this frame's compile ended differently on these ranks (a graph break, a failure): they run "
              "other code from here on",
    "graphs": "the same frame compiled to other graphs on these ranks: other kernels, other timings, and, "
              "if their collectives differ, a hang",
    "guards": "the ranks guard this frame on different conditions: a later call may recompile on some ranks only",
    "collectives": "the collectives are issued in another order on these ranks: NCCL matches them by order, "
                   "so the job can hang or mix up tensors",
    "cache": "these ranks hit or missed Inductor's caches differently: they spend another time compiling, "
             "and the others wait for them",
}


@dataclass(frozen=True)
class Divergence:
    """One way some ranks differ from the rest at one compile id."""

    kind: str  # compile_id | status | graphs | guards | collectives | cache
    compile_id: str
    ranks: tuple[int, ...]  # the ranks that differ from the majority
    detail: str  # one line: what differs
    meaning: str  # one line: what it means for the job

    def to_json(self) -> dict:
        return {"kind": self.kind, "compile_id": self.compile_id, "ranks": list(self.ranks),
                "detail": self.detail, "meaning": self.meaning}


@dataclass(frozen=True)
class RankSummary:
    rank: int
    compile_ids: int
    graphs: int
    kernels: int
    launches: int
    statuses: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"rank": self.rank, "compile_ids": self.compile_ids, "graphs": self.graphs,
                "kernels": self.kernels, "launches": self.launches, "statuses": self.statuses}


@dataclass(frozen=True)
class RankReport:
    ranks: tuple[int, ...]
    summaries: tuple[RankSummary, ...]
    compile_ids: tuple[str, ...]  # every compile id of any rank, in the order they first appear
    grid: dict[str, dict[int, str]]  # compile id -> rank -> status ("" where the rank has none)
    divergences: tuple[Divergence, ...]

    def to_json(self) -> dict:
        return {"ranks": list(self.ranks), "per_rank": [s.to_json() for s in self.summaries],
                "divergences": [d.to_json() for d in self.divergences],
                "grid": {cid: {str(r): s for r, s in row.items()} for cid, row in self.grid.items()}}


def _ops(payload) -> tuple[str, ...]:
    return tuple(OP.findall(payload.text)) if payload is not None else ()


def graph_ops(g: TraceGraph) -> tuple[str, ...]:
    """The ops of a graph in order: its post-grad graph's, else its AOT graph's."""
    return _ops(g.post_grad_graph) or _ops(g.aot_graph)


def collectives(record: CompileRecord) -> tuple[str, ...]:
    """The collective ops of a compile's graphs, in the order its graphs issue them."""
    return tuple(op for g in record.graphs for op in graph_ops(g) if COLLECTIVE.fullmatch(op))


def _graph_shape(record: CompileRecord) -> tuple:
    """Each graph's kind and its ops as a multiset (hashable: sorted (op, count) pairs)."""
    return tuple((g.kind, tuple(sorted(Counter(graph_ops(g)).items()))) for g in record.graphs)


def _guards(record: CompileRecord) -> frozenset[str]:
    """The guard lines, less what differs between processes anyway (ids, addresses, the latency line)."""
    return frozenset(VOLATILE.sub("N", g.strip()) for g in record.guards
                     if g.strip() and not g.startswith(TIMING_LINES))


def kernel_counts(g: TraceGraph) -> tuple[int, int]:
    """(kernels, launches) of a graph's output code."""
    if g.output_code is None:
        return 0, 0
    from compile_viz.artifacts.output_code import parse_output_code

    code = parse_output_code(g.output_code.text, path="output_code.py")
    return len(code.kernels), len(code.launches)


def _majority(values: dict[int, object]) -> tuple[object, list[int]]:
    """(the majority's value, the ranks outside it)."""
    groups: dict[object, list[int]] = defaultdict(list)
    for rank in sorted(values):
        groups[values[rank]].append(rank)
    best = max(groups.values(), key=lambda ranks: (len(ranks), -ranks[0]))
    value = values[best[0]]
    return value, [r for r in sorted(values) if values[r] != value]


def _by_rank(logs: Sequence[TraceLog]) -> dict[int, dict[str, CompileRecord]]:
    out: dict[int, dict[str, CompileRecord]] = {}
    for i, log in enumerate(logs):
        rank = log.rank if log.rank is not None else i
        out.setdefault(rank, {}).update({c.id: c for c in log.compiles})
    return out


def rank_report(logs: Sequence[TraceLog], *, count_kernels: Callable[[TraceGraph], tuple[int, int]] = kernel_counts) -> RankReport:
    """What each rank compiled, and every divergence between ranks, from one log per rank."""
    by_rank = _by_rank(logs)
    ranks = tuple(sorted(by_rank))
    ids: list[str] = []
    for rank in ranks:
        ids.extend(cid for cid in by_rank[rank] if cid not in ids)
    summaries = []
    for rank in ranks:
        records = by_rank[rank].values()
        counts = [count_kernels(g) for c in records for g in c.graphs]
        summaries.append(RankSummary(rank, len(records), sum(len(c.graphs) for c in records),
                                     sum(k for k, _ in counts), sum(n for _, n in counts),
                                     dict(Counter(c.status for c in records))))
    grid = {cid: {r: by_rank[r][cid].status if cid in by_rank[r] else "" for r in ranks} for cid in ids}
    divergences = _divergences(by_rank, ranks, ids) if len(ranks) > 1 else []
    return RankReport(ranks, tuple(summaries), tuple(ids), grid, tuple(divergences))


def _divergences(by_rank: dict[int, dict[str, CompileRecord]], ranks: tuple[int, ...], ids: list[str]) -> list[Divergence]:
    out: list[Divergence] = []
    for cid in ids:
        have = [r for r in ranks if cid in by_rank[r]]
        if len(have) != len(ranks):
            out.append(_presence(cid, have, ranks, by_rank))
        records = {r: by_rank[r][cid] for r in have}
        if len(records) < 2:
            continue
        out += _compare(cid, records)
    return out


def _presence(cid: str, have: list[int], ranks: tuple[int, ...], by_rank) -> Divergence:
    lack = [r for r in ranks if r not in have]
    minority = have if len(have) <= len(lack) else lack
    record = by_rank[have[0]][cid]
    reason = f" ({record.recompile_reasons[0]})" if record.recompile_reasons else ""
    frame = f" {record.co_name}" if record.co_name else ""
    if minority == have:
        detail = f"[{cid}]{frame} compiled on rank{_s(have)} {_list(have)} only{reason}"
    else:
        detail = f"[{cid}]{frame} missing on rank{_s(lack)} {_list(lack)} (compiled on {_list(have)}){reason}"
    return Divergence("compile_id", cid, tuple(minority), detail, MEANING["compile_id"])


def _compare(cid: str, records: dict[int, CompileRecord]) -> list[Divergence]:
    out = []
    status, odd = _majority({r: (c.status, c.co_name) for r, c in records.items()})
    if odd:
        what = ", ".join(f"rank {r}: {records[r].status} in {records[r].co_name or '?'}" for r in odd)
        out.append(Divergence("status", cid, tuple(odd), f"[{cid}] {what}; the others: {status[0]} in {status[1] or '?'}",
                              MEANING["status"]))
        return out  # another frame or outcome: its graphs and guards differ as a matter of course
    shape, odd = _majority({r: _graph_shape(c) for r, c in records.items()})
    if odd:
        out.append(Divergence("graphs", cid, tuple(odd), _graph_detail(cid, records, shape, odd), MEANING["graphs"]))
    guards, odd = _majority({r: _guards(c) for r, c in records.items()})
    if odd:
        extra = sorted(_guards(records[odd[0]]) - guards)
        missing = sorted(guards - _guards(records[odd[0]]))
        parts = ([f"{len(extra)} more, e.g. {extra[0][:120]}"] if extra else []) + \
                ([f"{len(missing)} fewer, e.g. {missing[0][:120]}"] if missing else [])
        out.append(Divergence("guards", cid, tuple(odd), f"[{cid}] rank {odd[0]}'s guards: {'; '.join(parts)}",
                              MEANING["guards"]))
    order, odd = _majority({r: collectives(c) for r, c in records.items()})
    if odd:
        out.append(Divergence("collectives", cid, tuple(odd),
                              f"[{cid}] rank {odd[0]}: {_seq(collectives(records[odd[0]]))}; the others: {_seq(order)}",
                              MEANING["collectives"]))
    cache, odd = _majority({r: tuple(c.cache) for r, c in records.items()})
    if odd:
        out.append(Divergence("cache", cid, tuple(odd),
                              f"[{cid}] rank {odd[0]}: {', '.join(records[odd[0]].cache) or 'no cache entry'}; "
                              f"the others: {', '.join(cache) or 'no cache entry'}", MEANING["cache"]))
    return out


def _graph_detail(cid: str, records: dict[int, CompileRecord], shape: tuple, odd: list[int]) -> str:
    theirs = _graph_shape(records[odd[0]])
    if len(theirs) != len(shape):
        return (f"[{cid}] rank {odd[0]}: {len(theirs)} graph{'s' if len(theirs) != 1 else ''}; "
                f"the others: {len(shape)} (a frame split differently, e.g. by DDP's buckets)")
    for i, ((kind, ops), (_, other)) in enumerate(zip(shape, theirs, strict=True)):
        ops, other = Counter(dict(ops)), Counter(dict(other))
        if ops != other:
            more, fewer = other - ops, ops - other
            parts = ([f"+{sum(more.values())} ops ({_top(more)})"] if more else []) + \
                    ([f"-{sum(fewer.values())} ops ({_top(fewer)})"] if fewer else [])
            where = f"{kind} graph" + (f" {i + 1} of {len(shape)}" if len(shape) > 1 else "")
            return f"[{cid}] rank {odd[0]}'s {where}: {', '.join(parts) or 'the same ops in another order'}"
    return f"[{cid}] rank {odd[0]}: graphs of other kinds"


def _top(ops: Counter) -> str:
    return ", ".join(f"{op} x{n}" if n > 1 else op for op, n in ops.most_common(3))


def _seq(ops: tuple[str, ...]) -> str:
    return " -> ".join(op.rsplit(".", 2)[-2] if op.count(".") >= 2 else op for op in ops) or "none"


def _s(ranks: list[int]) -> str:
    return "s" if len(ranks) > 1 else ""


def _list(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))


def rank_logs(ref: str, store=None) -> list[TraceLog]:
    """The TORCH_TRACE logs, one per rank, of a run named by `ref` (a run id or folder, a run zip,
    a log, a folder of logs or a zip of one). CompareError (one line) when there is none."""
    path = Path(ref).expanduser()
    where = str(path) if path.is_file() and not zipfile.is_zipfile(path) else run_path(ref, store)
    if os.path.isdir(os.path.join(where, "trace")):  # a run folder: its trace/, not its debug tree
        where = os.path.join(where, "trace")
    try:
        logs = trace_logs(where)
    except DiscoveryError as e:
        raise CompareError(str(e)) from None
    if not logs:
        raise CompareError(f"{ref} holds no TORCH_TRACE log: record the job with `compile-viz record -- torchrun ...` "
                           "or give the folder of its dedicated_log_torch_trace_rank_*.log files")
    return parse_logs(logs)  # big logs: indexed once (and kept), in forked copies, payloads left in the file
