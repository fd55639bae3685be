"""A job's profiles as one Perfetto / Chrome trace: every rank's events in one file, each rank a
process of its own, and each kernel that joined a launch annotated with what compile_viz knows of
it (graph, launch, kernel, fusion group, module, FX nodes, source lines). Opens in ui.perfetto.dev
and chrome://tracing. A pure function: JSON values in, JSON values out."""

from __future__ import annotations

import json
from collections.abc import Sequence

from compile_viz.linking.time_report import TimeReport

RANK_PID = 10_000_000  # rank r's processes become r * RANK_PID + pid: ranks never share a track


def perfetto_trace(files: Sequence[tuple[str, bytes]], report: TimeReport) -> dict:
    """The combined trace of `files` (path in the run, bytes: the run's profile files)."""
    facts = {(r.graph, r.launch): r for r in report.rows}
    owners = report.runtime.owners
    ranks = {p.path: p.rank for p in report.runtime.profiles}
    events: list[dict] = []
    for i, (path, data) in enumerate(files):
        try:
            doc = json.loads(data)
        except ValueError:
            continue
        raw = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
        rank = ranks.get(path)
        shift = (rank if rank is not None else i) * RANK_PID
        seen_pids = set()
        for e in raw:
            if not isinstance(e, dict):
                continue
            e = dict(e)
            if isinstance(e.get("pid"), int):
                seen_pids.add(e["pid"])
                e["pid"] += shift
            owner = owners.get((path, e.get("ts"), e.get("name"))) if e.get("ph") == "X" else None
            if owner is not None and (row := facts.get(owner)) is not None:
                e["args"] = {**(e.get("args") or {}), "compile_viz": _annotation(row)}
            events.append(e)
        label = f"rank {rank}" if rank is not None else path
        events += [{"ph": "M", "name": "process_name", "pid": pid + shift, "tid": 0,
                    "args": {"name": f"{label} · pid {pid}"}} for pid in sorted(seen_pids)]
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"compile_viz": {"files": [p for p, _ in files], "summary": report.summary}}}


def _annotation(row) -> dict:
    return {"graph": row.label, "launch": row.launch, "kernel": row.kernel, "kind": row.kind,
            "fusion_group": row.fusion_group, "module": row.module, "fx_nodes": list(row.fx_nodes),
            "source_lines": [f"{file}:{line}" for file, line in row.source_lines]}
