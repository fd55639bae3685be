"""A sweep read as a fleet: one row per cell with the numbers of its run (`compile-viz fleet NAME`).

The counts of kernels and launches come from parsing the run (compare's Side: the same parse and
linking as the Viewer); they are kept beside the sweep records by run id (a stored run never changes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from compile_viz.compare.sides import CompareError, Side, load_side
from compile_viz.fleet.records import FleetError, SweepRecord, cell_runs, load_record, sweeps_dir
from compile_viz.fleet.sweep_file import Cell
from compile_viz.measurements import MeasureSummary
from compile_viz.store import Run, RunStore

FIELDS = ("model", "setting", "torch", "status", "reason", "run", "compile_s", "graphs", "graph_breaks",
          "recompiles", "kernels", "launches", "speedup", "verdict")
_STATUS_ORDER = {"error": 0, "failed": 1, "missing": 2, "complete": 3}


def split_ref(ref: str) -> tuple[str, str | None]:
    """Return (sweep name, torch version or None) of "NAME" or "NAME@VERSION" (one version's cells)."""
    name, _, version = ref.partition("@")
    return name, version or None


def fleet_report(store: RunStore, ref: str) -> dict[str, Any]:
    """Return {"sweep", "engine", "address", "started", "finished", "wall_s", "cells": [...]} of a sweep,
    failed cells first; `ref` is NAME or NAME@TORCH. FleetError (one line) when there is no such sweep."""
    name, version = split_ref(ref)
    record = load_record(store, name)
    runs = cell_runs(store, name)
    cells = [cell_row(c, record, runs.get(c.key, []), store) for c in record.cells
             if version is None or c.torch == version]
    if version is not None and not cells:
        raise FleetError(f"sweep {name!r} has no cells of torch {version}")
    cells.sort(key=lambda r: _STATUS_ORDER.get(r["status"], 9))
    return {"sweep": ref, "engine": record.engine, "address": record.address, "started": record.started,
            "finished": record.finished, "wall_s": record.wall_s, "cells": cells}


def cell_row(cell: Cell, record: SweepRecord, runs: list[Run], store: RunStore) -> dict[str, Any]:
    """Return one cell's row (FIELDS): its run's numbers, or why there is none."""
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(model=cell.model, setting=cell.setting.name, torch=cell.torch)
    run = next((r for r in runs if r.ok), runs[0] if runs else None)
    if run is None:
        error = record.errors.get(cell.key)
        row.update(status="error" if error else "missing",
                   reason=error or ("not run yet" if record.finished is None else "no run: --resume runs it"))
        return row
    meta = run.meta
    summary = MeasureSummary.from_json(meta.get("measure"))
    row.update(status=run.status, reason=run.reason, run=run.id,
               compile_s=(meta.get("timings") or {}).get("compile_s"), graphs=len(meta.get("graphs") or ()),
               graph_breaks=len(meta.get("graph_breaks") or ()), recompiles=len(meta.get("recompiles") or ()),
               speedup=summary.speedup if summary else None, verdict=summary.correctness if summary else None,
               torch=cell.torch or (meta.get("versions") or {}).get("torch"))
    row.update(run_counts(store, run))
    return row


def run_counts(store: RunStore, run: Run) -> dict[str, int | None]:
    """Return {"kernels", "launches"} of a run's compiled graphs, parsed once and kept by run id."""
    cache = _cache_path(store, run.id)
    try:
        return json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    try:
        side = load_side(str(run.path), store)
    except (CompareError, OSError, ValueError):
        return {"kernels": None, "launches": None}
    counts = side_counts(side)
    cache.parent.mkdir(parents=True, exist_ok=True)
    part = cache.with_name(cache.name + f".{os.getpid()}.part")
    part.write_text(json.dumps(counts), encoding="utf-8")
    os.replace(part, cache)
    return counts


def side_counts(side: Side) -> dict[str, int]:
    summaries = [side.indexes[g.id].summary for g in side.parse.graphs]
    return {"kernels": sum(s.kernels for s in summaries), "launches": sum(s.launches for s in summaries)}


def _cache_path(store: RunStore, run_id: str) -> Path:
    return sweeps_dir(store) / ".counts" / f"{run_id}.json"
