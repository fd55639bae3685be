"""One side of a comparison: a run's parse, its indexes, its meta and measurement, from whatever names it.

A run is named as `compile-viz export` and `compile-viz parse` name one: a store run id (or a unique
part of it), a run folder, a run zip (`compile-viz export`), a debug folder or zip (a
torch_compile_debug tree at any level), or a bundled run (`bundled:NAME`, or NAME when the store has none).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from compile_viz.artifacts import DebugParse, DiscoveryError, parse_path
from compile_viz.linking import build_index
from compile_viz.linking.model import GraphIndex
from compile_viz.measurements import FILE as MEASURE_FILE
from compile_viz.measurements import Measurement, MeasureSummary, read_run
from compile_viz.store import META, RunStore, StoreError, check_run_zip, open_bundled, read_meta

BUNDLED = "bundled:"


class CompareError(Exception):
    """A run to compare cannot be found or read; str() is one line for the user."""


@dataclass(frozen=True)
class Side:
    """Everything a comparison reads of one run."""

    key: str  # as the user named it
    title: str
    parse: DebugParse
    indexes: dict[str, GraphIndex]  # graph id -> index
    meta: dict = field(default_factory=dict, repr=False)
    measurement: Measurement | None = None
    summary: MeasureSummary | None = None

    @property
    def graph_breaks(self) -> int:
        """Return the graph breaks: the capture's records when there are any, else debug.log's."""
        return len(self.meta.get("graph_breaks") or ()) or len(self.parse.graph_breaks)

    @property
    def failed(self) -> str | None:
        """The run's one-line reason when it failed (its graphs are those compiled before it did), else None."""
        if self.meta.get("status") != "failed":
            return None
        return str(self.meta.get("reason") or "no reason recorded")

    @property
    def compile_s(self) -> float | None:
        value = (self.meta.get("timings") or {}).get("compile_s")
        return value if isinstance(value, (int, float)) else None


def make_side(key: str, title: str, parse: DebugParse, meta: dict | None = None,
              measurement: Measurement | None = None, summary: MeasureSummary | None = None,
              indexes: dict[str, GraphIndex] | None = None) -> Side:
    """Return a Side, indexing every graph of `parse` unless `indexes` are given."""
    if indexes is None:
        indexes = {g.id: build_index(g) for g in parse.graphs}
    if summary is None and measurement is not None:
        summary = measurement.summary()
    return Side(key, title, parse, indexes, dict(meta or {}), measurement, summary)


def load_side(ref: str, store: RunStore | None = None) -> Side:
    """Return the Side of a run named by `ref`; CompareError (one line) when there is none or it is unreadable."""
    debug, meta, folder, zip_path = locate_run(ref, store)
    try:
        parse = parse_path(str(debug))
    except DiscoveryError as e:
        raise CompareError(str(e)) from None
    summary, measurement = read_run(folder, meta) if folder else (MeasureSummary.from_json(meta.get("measure")), None)
    if zip_path is not None:
        measurement = _zip_measurement(zip_path)
        summary = summary or (measurement.summary() if measurement else None)
    title = str(meta.get("title") or meta.get("model") or Path(ref).name or ref)
    return make_side(ref, title, parse, meta, measurement, summary)


def locate_run(ref: str, store: RunStore | None) -> tuple[Path, dict, Path | None, Path | None]:
    """Return (its debug tree, meta, run folder or None, run zip or None) of a run named by `ref`:
    a run id (or a unique part), a run folder or its debug/, a run zip, a debug folder or zip, or
    bundled:NAME. CompareError (one line) when there is none."""
    path = Path(ref).expanduser()
    if ref.startswith(BUNDLED):
        return _run_folder(_bundled(ref[len(BUNDLED):], store))
    if path.is_dir():
        for folder in (path, path.parent):  # a run folder, or its debug/ folder
            if (folder / META).is_file():
                return _run_folder(folder)
        return path, {}, None, None
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise CompareError(f"{ref} is neither a folder nor a zip: name a run id, a run folder, or a debug folder or zip")
        try:
            zf, root = check_run_zip(path)
        except StoreError:  # no meta.json: a zip of a bare debug tree
            return path, {}, None, None
        with zf:
            meta = json.loads(zf.read(root + META))
        return path, meta if isinstance(meta, dict) else {}, None, path
    try:
        return _run_folder((store or RunStore()).get(ref).path)
    except StoreError as e:
        try:
            return _run_folder(_bundled(ref, store))
        except CompareError:
            raise CompareError(str(e)) from None


def run_path(ref: str, store: RunStore | None = None) -> str:
    """What parse_path reads for a run named by `ref`: a stored run's whole folder (its debug/ tree,
    logs/, trace/ and profile/), else the zip or debug tree. CompareError (one line) when there is none."""
    debug, _, folder, _ = locate_run(ref, store)
    return str(folder or debug)


def _bundled(name: str, store: RunStore | None) -> Path:
    try:
        return open_bundled(name, store).path
    except (StoreError, OSError) as e:
        raise CompareError(str(e)) from None


def _run_folder(folder: Path) -> tuple[Path, dict, Path, None]:
    try:
        meta = read_meta(folder)
    except (OSError, ValueError) as e:
        raise CompareError(f"cannot read {folder / META}: {e}") from None
    debug = folder / "debug"
    return (debug if debug.is_dir() else folder), meta if isinstance(meta, dict) else {}, folder, None


def _zip_measurement(zip_path: Path) -> Measurement | None:
    try:
        zf, root = check_run_zip(zip_path)
        with zf:
            data = json.loads(zf.read(root + MEASURE_FILE))
    except (StoreError, KeyError, ValueError, OSError):
        return None
    return Measurement.from_json(data) if isinstance(data, dict) else None
