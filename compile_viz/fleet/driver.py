"""Run a sweep's cells as Ray tasks: a local Ray started here and stopped after (the embedded
default), or the cluster at an address. Ray is imported when a sweep runs, never before, so the
dashboard and the other commands neither need it nor pay for it.

Faults: a cell whose capture fails or times out is a failed run (capture stores it) and stops
nothing else; a worker lost mid-cell is retried once (max_retries=1; the task is idempotent, see
task.py); a task Ray gives up on is recorded in the sweep's `errors` with its one-line reason.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compile_viz.fleet.records import (
    FleetError,
    SweepRecord,
    cell_runs,
    load_record,
    now,
    record_path,
    save_record,
)
from compile_viz.fleet.sweep_file import Cell, Sweep
from compile_viz.record.reasons import one_line
from compile_viz.store import RunStore

LOCAL_OBJECT_STORE_BYTES = 96 * 1024**2  # cells return a few hundred bytes; the runs go to the store
# "0": Ray takes 127.0.0.1 as this node's address instead of the outward one (its name is historical)
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
MAX_RETRIES = 1  # a worker lost mid-cell: once more, then the cell is an error of the sweep
# Ray ends a worker after each task that asked for a GPU (max_calls=1 by default, to free what the task
# took on the device). A cell's worker never touches the GPU (its capture child does, and exits), so its
# workers are kept: no worker start per cell, and the warm capture child it started is used (task.py).
MAX_CALLS = 0  # no limit


@dataclass(frozen=True)
class Event:
    """One cell finished (or was skipped): what a progress line says."""

    cell: Cell
    status: str  # complete | failed | error (Ray could not run it) | skipped (--resume: already complete)
    run: str | None
    reason: str | None
    done: int
    running: int  # cells sent to Ray and not ended: running, or waiting for a CPU or GPU
    failed: int
    total: int
    elapsed_s: float


@dataclass
class SweepResult:
    record: SweepRecord
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # cell key -> run_cell's answer

    @property
    def failed(self) -> list[str]:
        return [k for k, r in self.results.items() if r["status"] != "complete"]


def ray_runtime_env(cell: Cell) -> dict[str, Any] | None:
    """Return the runtime environment of a cell: for a torch version, a pip env with that torch
    (Ray builds it once per node and version; the capture child runs its Python); else None."""
    if not cell.torch:
        return None
    return {"pip": {"packages": [f"torch=={cell.torch}"], "pip_check": False}}


def plan(sweep: Sweep, store: RunStore, name: str, *, resume: bool) -> tuple[SweepRecord, list[Cell], list[Cell]]:
    """Return (the record, the cells to run, the cells already complete) for a new sweep or a resumed one."""
    exists = record_path(store, name).is_file()
    if exists and not resume:
        raise FleetError(f"sweep {name!r} exists; --resume {name} runs its missing cells, or pick another --name")
    if resume and not exists:
        raise FleetError(f"no sweep {name!r} to resume in {record_path(store, name).parent}")
    record = load_record(store, name) if resume else SweepRecord(name, [], started=now())
    cells = {c.key: c for c in record.cells}
    cells.update({c.key: c for c in sweep.cells()})
    record.cells = list(cells.values())
    complete = {k for k, runs in cell_runs(store, name).items() if any(r.ok for r in runs)}
    todo = [c for c in record.cells if c.key not in complete]
    return record, todo, [c for c in record.cells if c.key in complete]


def run_sweep(sweep: Sweep | None, *, name: str, store: RunStore, address: str | None = None,
              resume: bool = False, source: str = "", local_cpus: int | None = None,
              on_event: Callable[[Event], None] | None = None) -> SweepResult:
    """Return the sweep's result once every cell has ended; its record is saved as it goes.
    `sweep` may be None with `resume` (the recorded cells are run)."""
    record, todo, skipped = plan(sweep or Sweep((), ()), store, name, resume=resume)
    record.source = source or record.source
    record.address = address
    record.finished, record.errors = None, {k: v for k, v in record.errors.items() if k not in {c.key for c in todo}}
    save_record(store, record)
    result = SweepResult(record)
    started = time.monotonic()
    counts = {"done": 0, "failed": 0}
    total = len(record.cells)

    def emit(cell: Cell, answer: dict[str, Any], running: int) -> None:
        result.results[cell.key] = answer
        counts["done"] += 1
        counts["failed"] += answer["status"] not in ("complete", "skipped")
        if on_event is not None:
            on_event(Event(cell, answer["status"], answer.get("run"), answer.get("reason"), counts["done"],
                           running, counts["failed"], total, time.monotonic() - started))

    for cell in skipped:
        emit(cell, {"key": cell.key, "status": "skipped", "run": None, "reason": None}, len(todo))
    if todo:
        _run_on_ray(todo, name, store, address, local_cpus, record, emit)
    record.finished = now()
    record.wall_s = round(time.monotonic() - started, 3)
    save_record(store, record)
    return result


def keep_to_loopback(address: str | None) -> None:
    """For a local Ray, or a cluster named at 127.0.0.1/localhost: have Ray bind and dial the loopback,
    not the machine's outward address (Ray reads this when it is imported, so it is set first)."""
    host = (address or "127.0.0.1").removeprefix("ray://").rpartition(":")[0]
    if host in ("127.0.0.1", "localhost", "[::1]", "::1"):
        os.environ.setdefault(LOOPBACK_ENV, "0")


def _run_on_ray(todo: list[Cell], name: str, store: RunStore, address: str | None, local_cpus: int | None,
                record: SweepRecord, emit: Callable[[Cell, dict[str, Any], int], None]) -> None:
    keep_to_loopback(address)
    try:
        import ray
    except ImportError:
        raise FleetError("Ray is not installed: pip install 'compile-viz[fleet]' (or ray)") from None
    from compile_viz.fleet.task import run_cell

    started_here = not ray.is_initialized()
    if started_here:
        _init(ray, address, local_cpus)
    try:
        remote = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False, max_calls=MAX_CALLS)(run_cell)
        pending = {}
        for cell in todo:
            opts: dict[str, Any] = {"num_cpus": cell.setting.cpus, "num_gpus": cell.setting.gpus}
            if env := ray_runtime_env(cell):
                opts["runtime_env"] = env
            ref = remote.options(name=f"compile-viz {cell.key}", **opts).remote(cell.to_json(), name, str(store.home))
            pending[ref] = cell
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            cell = pending.pop(ready[0])
            try:
                answer = ray.get(ready[0])
            except Exception as e:  # the worker died twice, the runtime env failed, the task raised
                reason = one_line(f"Ray could not run the cell: {type(e).__name__}: {e}")
                record.errors[cell.key] = reason
                answer = {"key": cell.key, "status": "error", "run": None, "reason": reason}
            emit(cell, answer, len(pending))
            save_record(store, record)
    finally:
        if started_here:
            ray.shutdown()


def _init(ray, address: str | None, local_cpus: int | None) -> None:
    """Connect to the cluster at `address`, or start a small local Ray: no dashboard, a small object store."""
    if address:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # on the loopback: a sweep's own Ray serves this machine only
    ray.init(address="local", num_cpus=local_cpus or os.cpu_count() or 1, include_dashboard=False,
             object_store_memory=LOCAL_OBJECT_STORE_BYTES, log_to_driver=False, configure_logging=False,
             _node_ip_address="127.0.0.1")
