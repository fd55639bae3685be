"""One cell of a sweep, as a Ray task runs it: the same child-process capture as `compile-viz capture`,
stored in the run store once.

Idempotent by sweep name and cell key: the capture's options carry both as labels, which
meta.json keeps, so a task that finds its cell's complete run returns it instead of capturing again
(a worker lost after the run was stored and retried by Ray, or a `--resume`). A failed earlier run of
the cell is deleted once the new one is stored: one run a cell. Torch-free (the child imports torch).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from compile_viz.capture.runner import capture
from compile_viz.fleet.records import CELL_LABEL, SWEEP_LABEL, cell_runs
from compile_viz.fleet.sweep_file import Cell
from compile_viz.store import Run, RunStore, StoreError


def run_cell(cell_json: dict[str, Any], sweep: str, home: str) -> dict[str, Any]:
    """Return {"key", "run", "status", "reason", "reused", "wall_s", "node"} of one cell, capturing it
    unless the store already holds its complete run."""
    cell = Cell.from_json(cell_json)
    store = RunStore(home)
    started = time.monotonic()
    earlier = cell_runs(store, sweep).get(cell.key, [])
    done = next((r for r in earlier if r.ok), None)
    if done is not None:
        return _result(cell, done, reused=True, wall_s=0.0)
    options = replace(cell.setting.options, labels=((CELL_LABEL, cell.key), (SWEEP_LABEL, sweep)))
    # a worker runs cells back to back (driver.py: max_calls=0): the next cell's capture child imports
    # torch while this one compiles, so only a worker's first cell waits for torch's import
    run = capture(cell.ref or cell.model, options, store=store, warm=True, warm_ahead=True)
    for old in earlier:  # failed attempts: the new run stands for the cell
        try:
            store.delete(old.id)
        except (StoreError, OSError):
            pass
    return _result(cell, run, reused=False, wall_s=time.monotonic() - started)


def _result(cell: Cell, run: Run, *, reused: bool, wall_s: float) -> dict[str, Any]:
    return {"key": cell.key, "run": run.id, "status": run.status, "reason": run.reason, "reused": reused,
            "wall_s": round(wall_s, 3), "node": os.uname().nodename,
            "gpus": os.environ.get("CUDA_VISIBLE_DEVICES")}
