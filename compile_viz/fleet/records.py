"""A sweep as it is kept: its record (`<store>/sweeps/<name>.json`: the cells asked for, the engine,
times, errors Ray reported) and its runs, found in the run store by the tag each cell's capture
carries (meta.json's options.extra_env), so a run is the truth of its cell and never stored twice.
Stdlib only."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compile_viz.fleet.sweep_file import Cell
from compile_viz.store import Run, RunStore

# a cell's run carries both in its options' labels (meta.json), so the store alone says which cell it is
SWEEP_LABEL = "COMPILE_VIZ_SWEEP"  # the sweep's name
CELL_LABEL = "COMPILE_VIZ_SWEEP_CELL"  # and the cell's key
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$")


class FleetError(Exception):
    """A sweep cannot be run or read; str() is one line for the user."""


@dataclass
class SweepRecord:
    """What `<store>/sweeps/<name>.json` holds."""

    name: str
    cells: list[Cell]
    source: str = ""  # the sweep file's path, as given
    engine: str = "ray"
    address: str | None = None  # the Ray cluster, None for a local one started by the sweep
    started: str = ""
    finished: str | None = None
    errors: dict[str, str] = field(default_factory=dict)  # cell key -> why Ray could not run it
    wall_s: float | None = None
    pushed: dict[str, str] = field(default_factory=dict)  # cell key -> its run's URL on the team server

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "name": self.name, "source": self.source, "engine": self.engine,
                "address": self.address, "started": self.started, "finished": self.finished,
                "wall_s": self.wall_s, "errors": self.errors, "pushed": self.pushed,
                "cells": [c.to_json() for c in self.cells]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SweepRecord:
        return cls(str(d["name"]), [Cell.from_json(c) for c in d.get("cells") or ()], d.get("source") or "",
                   d.get("engine") or "ray", d.get("address"), d.get("started") or "", d.get("finished"),
                   dict(d.get("errors") or {}), d.get("wall_s"), dict(d.get("pushed") or {}))


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise FleetError(f"sweep name {name!r} is not letters, digits and _ . + - (at most 100)")
    return name


def sweeps_dir(store: RunStore) -> Path:
    return store.home / "sweeps"


def record_path(store: RunStore, name: str) -> Path:
    return sweeps_dir(store) / f"{check_name(name)}.json"


def save_record(store: RunStore, record: SweepRecord) -> None:
    """Write the record whole (a temporary file renamed into place)."""
    path = record_path(store, record.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + f".{os.getpid()}.part")
    part.write_text(json.dumps(record.to_json(), indent=1), encoding="utf-8")
    os.replace(part, path)


def load_record(store: RunStore, name: str) -> SweepRecord:
    """Return the record of sweep `name`; FleetError (one line) when there is none."""
    path = record_path(store, name)
    try:
        return SweepRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        known = ", ".join(sweep_names(store)[:5]) or "none yet"
        raise FleetError(f"no sweep {name!r} in {sweeps_dir(store)} (sweeps: {known})") from None
    except (ValueError, KeyError, TypeError) as e:
        raise FleetError(f"sweep record {path} is unreadable: {e}") from None


def sweep_names(store: RunStore) -> list[str]:
    """Return the names of the recorded sweeps, newest first."""
    try:
        paths = [p for p in sweeps_dir(store).glob("*.json")]
    except OSError:
        return []
    return [p.stem for p in sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True)]


def cell_tag(run: Run) -> tuple[str, str] | None:
    """Return (sweep, cell key) of a run a sweep made, else None."""
    options = run.meta.get("options") or {}
    # labels since the warm children (2026-11-26); the child's environment before
    tags = options.get("labels") or options.get("extra_env") or {}
    sweep, cell = tags.get(SWEEP_LABEL), tags.get(CELL_LABEL)
    return (sweep, cell) if sweep and cell else None


def cell_runs(store: RunStore, name: str) -> dict[str, list[Run]]:
    """Return cell key -> the runs the sweep's cell left in the store (newest first)."""
    out: dict[str, list[Run]] = {}
    for run in store.list_runs():
        tag = cell_tag(run)
        if tag and tag[0] == name:
            out.setdefault(tag[1], []).append(run)
    return out


def unpushed(store: RunStore, name: str) -> list[tuple[str, Run]]:
    """Return (cell key, complete run) of the sweep's cells not yet sent to the team server, in order."""
    record, runs = load_record(store, name), cell_runs(store, name)
    out = []
    for cell in record.cells:
        run = next((r for r in runs.get(cell.key, []) if r.ok), None)
        if run is not None and cell.key not in record.pushed:
            out.append((cell.key, run))
    return out


def mark_pushed(store: RunStore, name: str, key: str, url: str) -> None:
    """Record that the cell's run is on the team server at `url` (a later --push skips it)."""
    record = load_record(store, name)
    record.pushed[key] = url
    save_record(store, record)


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
