"""Bring what PyTorch users already have into the run store: a TORCH_TRACE log (plain or gzip), a
folder of them (one per rank, with or without a torch_compile_debug tree beside them), a zip of
such a folder, or a run zip written by `compile-viz export`.

A trace becomes a run folder like a captured one: its logs in trace/ (file names kept: a log's rank
is in its name), the debug tree found beside them in debug/, and a meta.json that says where it
came from and what the logs hold. The Viewer, the Compiles page and `compile-viz runs` then treat
it like any other run. Importing the same logs again returns the run already stored.
Stdlib only: no torch, no streamlit.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import mmap
import os
import shutil
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from compile_viz.artifacts import devices
from compile_viz.artifacts.discover import SKIP_DIRS, ArtifactReader, DiscoveryError, find_graphs
from compile_viz.artifacts.package import (
    PACKAGE_SUFFIX,
    is_package,
    open_package,
    package_graphs,
    slim_package,
)
from compile_viz.artifacts.trace.discover import SUFFIXES, is_trace_file, parse_logs, trace_logs
from compile_viz.artifacts.trace.index import LAZY_FILE_BYTES, MappedLog
from compile_viz.artifacts.trace.model import TraceLog
from compile_viz.store import (
    MAX_IMPORT_BYTES,
    MAX_IMPORT_ENTRIES,
    Run,
    RunStore,
    StoreError,
    extract_zip,
    is_run_zip,
)

DIGEST_ENDS = 1 << 20  # a big log's digest reads its first and last MB
SOURCE_KIND = "torch_trace"  # meta["source"]["kind"] of a run made from a trace or a debug tree
NOTHING_HERE = ("{path} holds no TORCH_TRACE log and no Inductor debug folder: give a log written with "
                "TORCH_TRACE=DIR (plain or .gz), the folder of them, a zip of that folder, or a run zip "
                "from `compile-viz export`")


@dataclass(frozen=True)
class Imported:
    """What an import gave: the run, whether it is new, and one line on what it holds."""

    run: Run
    new: bool  # False: the same logs were in the store already, and `run` is that run
    summary: str


def import_path(store: RunStore, path: str | os.PathLike[str], *, label: str | None = None) -> Imported:
    """Import a run zip, a TORCH_TRACE log or folder, or a zip of one; StoreError (one line) if unusable.

    `label` is what the run and the messages call the source (default: the path; an upload gives
    the name it was uploaded under); the run's model name is its base name."""
    src = Path(path).expanduser()
    label = label or str(src)
    if not src.exists():
        raise StoreError(f"no such file or folder: {src}")
    name = run_name(label)
    if is_package(src):
        return _import_package(store, src, name=name, origin=label)
    if src.is_file() and zipfile.is_zipfile(src):
        if is_run_zip(src):
            run = store.import_zip(src)
            return Imported(run, True, f"a compile-viz run of {run.model}")
        with tempfile.TemporaryDirectory(prefix=".tmp-unzip-", dir=store.runs_dir) as tmp:
            extract_zip(src, Path(tmp) / "zip")
            return _import_tree(store, Path(tmp) / "zip", name=name, origin=label)
    return _import_tree(store, src, name=name, origin=label)


def is_bare_trace(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is TORCH_TRACE logs alone: a log, or a folder or zip holding logs and no
    Inductor graph folder (what `import_path` turns into a run; a debug tree opens as it is)."""
    path = str(path)
    if is_trace_file(path):
        return True
    try:
        if not os.path.isdir(path) and not zipfile.is_zipfile(path):
            return False
        reader = ArtifactReader(path)
        try:
            if find_graphs(reader)[0]:
                return False
        finally:
            reader.close()
        return bool(trace_logs(path))
    except (OSError, DiscoveryError):
        return False


def run_name(path: str) -> str:
    """A run's model name from the file or folder it came from: `rank_0.log.gz` -> `rank_0`."""
    stem = os.path.basename(os.path.normpath(path))
    for suffix in (".zip", ".gz", *SUFFIXES):
        stem = stem.removesuffix(suffix)
    return stem or "trace"


def _import_tree(store: RunStore, src: Path, *, name: str, origin: str) -> Imported:
    try:
        logs = trace_logs(str(src))
        if src.is_file():  # one log: named as its source is (an upload's own name, not where it was kept)
            logs = [(os.path.basename(origin), data) for _, data in logs]
        graph_dirs = _graph_dirs(src)
        debug = _debug_files(src, {rel for rel, _ in logs}) if graph_dirs else []
    except DiscoveryError as e:
        raise StoreError(str(e)) from None
    if not logs and not debug:
        raise StoreError(NOTHING_HERE.format(path=origin))
    stored = _stored_names([rel for rel, _ in logs])
    digest = _digest(logs, src, debug)
    parsed = parse_logs([(stored_name, data) for stored_name, (_, data) in zip(stored, logs, strict=True)])
    summary = summarize(parsed, len(graph_dirs) if debug else 0)
    existing = _already_stored(store, digest)
    if existing is not None:
        return Imported(existing, False, summary)
    run_id, tmp = store.begin(name)
    try:
        for stored_name, (_, data) in zip(stored, logs, strict=True):
            if isinstance(data, MappedLog):
                _link_or_copy(data.path, tmp / "trace" / stored_name)
            else:
                (tmp / "trace" / stored_name).write_bytes(data)
        for rel in debug:
            target = tmp / "debug" / src.name / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, target)
        meta = _meta(name, origin, digest, parsed, summary, graphs=graph_dirs if debug else [])
        device, dtype = code_facts(tmp)
        meta["resolved"] = {"device": device or "?", "dtype": dtype}
        return Imported(store.commit(run_id, tmp, meta), True, summary)
    except BaseException:
        store.abandon(tmp)
        raise


def _import_package(store: RunStore, src: Path, *, name: str, origin: str) -> Imported:
    """An AOTInductor .pt2 made a run: its text members in package/model.pt2 (the shared library,
    cubins and weights left out; nothing in it is loaded or run). StoreError when it is refused."""
    try:
        with open_package(src) as zf:
            models = package_graphs(zf, str(src))
    except DiscoveryError as e:
        raise StoreError(str(e)) from None
    if not models:
        raise StoreError(f"{origin} holds no AOTInductor model nor exported program: give the .pt2 that "
                         "aoti_compile_and_package or torch.export.save wrote")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    compiled = sum(m.kind != "export" for m in models)
    summary = "a .pt2 archive: " + ", ".join(
        f"{n} {what}{'s' * (n != 1)}" for n, what in ((compiled, "AOTInductor model"),
                                                    (len(models) - compiled, "exported program only")) if n)
    existing = _already_stored(store, digest)
    if existing is not None:
        return Imported(existing, False, summary)
    run_id, tmp = store.begin(name.removesuffix(PACKAGE_SUFFIX))
    try:
        (tmp / "package").mkdir()
        left_out = slim_package(src, tmp / "package" / f"model{PACKAGE_SUFFIX}")
        dev, dt = Counter(), Counter()
        with open_package(tmp / "package" / f"model{PACKAGE_SUFFIX}") as zf:
            for info in zf.infolist():
                if info.filename.endswith(".wrapper.cpp"):
                    devices.tally(zf.read(info), dev, dt)
        device, dtype = devices.summary(dev, dt)
        meta = {"model": name.removesuffix(PACKAGE_SUFFIX), "title": name, "status": "complete", "reason": None,
                "created": _dt.datetime.now(_dt.UTC).isoformat(), "graphs": [m.location.rsplit(":", 1)[1] for m in models],
                "source": {"kind": "aoti_package", "path": origin, "sha256": digest, "summary": summary,
                           "left_out": len(left_out)}, "package": f"package/model{PACKAGE_SUFFIX}",
                "resolved": {"compiler": "aoti", "device": device or "?", "dtype": dtype}}
        return Imported(store.commit(run_id, tmp, meta), True, summary)
    except BaseException:
        store.abandon(tmp)
        raise


def _stored_names(rels: list[str]) -> list[str]:
    """The name each log gets in trace/: its base name (a .gz one unpacked), unless two logs share
    one; then its path with `__` for `/`. One level, so the Viewer's join of trace/ finds it."""
    bases = [rel.rsplit("/", 1)[-1] for rel in rels]
    out = []
    for rel, base in zip(rels, bases, strict=True):
        flat = base if bases.count(base) == 1 else rel.replace("/", "__")
        flat = flat.removesuffix(".gz")
        out.append(flat if flat.endswith(SUFFIXES) else flat + ".log")
    return out


def _debug_files(src: Path, trace_rels: set[str]) -> list[str]:
    """The files (relative POSIX paths) of the folder `src` that holds an Inductor debug tree, trace
    logs left out. StoreError when it is too big to copy."""
    files, total = [], 0
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for fname in sorted(filenames):
            path = Path(dirpath) / fname
            rel = path.relative_to(src).as_posix()
            if rel in trace_rels or path.is_symlink() or not path.is_file():
                continue
            files.append(rel)
            total += path.stat().st_size
    if len(files) > MAX_IMPORT_ENTRIES or total > MAX_IMPORT_BYTES:
        raise StoreError(f"refusing {src}: {len(files)} files, {total} bytes (limits {MAX_IMPORT_ENTRIES} "
                         f"files, {MAX_IMPORT_BYTES} bytes); point at the torch_compile_debug folder itself")
    return files


def _graph_dirs(src: Path) -> list[str]:
    if not src.is_dir():
        return []
    reader = ArtifactReader(str(src))
    try:
        return [f.location for f in find_graphs(reader)[0]]
    finally:
        reader.close()


def _link_or_copy(source: str, target: Path) -> None:
    """A big log goes into the store as a hard link to the user's file where both are on one file
    system (a log written by TORCH_TRACE is never rewritten), else as a copy made by the kernel."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _digest(logs: list[tuple[str, bytes]], src: Path, debug: list[str]) -> str:
    """What tells one import from another: the logs' bytes; a big (mapped) log by its size and its
    first and last MB, whose glog prefixes carry the time of day to the microsecond."""
    h = hashlib.sha256()
    for rel, data in logs:
        h.update(f"{rel}\0{len(data)}\0".encode())
        if isinstance(data, MappedLog):
            h.update(data[:DIGEST_ENDS])
            h.update(data[-DIGEST_ENDS:])
        else:
            h.update(data)
    for rel in debug:
        h.update(f"{rel}\0".encode())
        with open(src / rel, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _already_stored(store: RunStore, digest: str) -> Run | None:
    for run in store.list_runs():
        if (run.meta.get("source") or {}).get("sha256") == digest:
            return run
    return None


def summarize(logs: list[TraceLog], debug_graphs: int = 0) -> str:
    """One line: the logs (and ranks), their compile ids by status, graphs, warnings."""
    if not logs:
        return f"an Inductor debug folder ({debug_graphs} graphs), no TORCH_TRACE log"
    ranks = sorted(log.rank for log in logs if log.rank is not None)
    statuses = Counter(c.status for log in logs for c in log.compiles)
    n_ids = sum(statuses.values())
    graphs = sum(len(c.graphs) for log in logs for c in log.compiles)
    warnings = sum(len(log.warnings) for log in logs)
    parts = [f"TORCH_TRACE: {len(logs)} log{'s' if len(logs) != 1 else ''}"
             + (f" (ranks {', '.join(map(str, ranks))})" if ranks else ""),
             f"{n_ids} compile id{'s' if n_ids != 1 else ''}"
             + (f" ({', '.join(f'{n} {s}' for s, n in statuses.most_common())})" if statuses else ""),
             f"{graphs} graph{'s' if graphs != 1 else ''}"]
    if debug_graphs:
        parts.append(f"debug folder with {debug_graphs} graphs")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''} (`compile-viz parse` lists them)")
    return ", ".join(parts)


def _meta(name: str, origin: str, digest: str, logs: list[TraceLog], summary: str, *, graphs: list[str]) -> dict:
    trace = _trace_fields(logs)
    meta = {
        "model": name, "title": name, "status": "complete", "reason": None,
        "created": _dt.datetime.now(_dt.UTC).isoformat(),
        "source": {"kind": SOURCE_KIND, "path": origin, "sha256": digest, "summary": summary},
        "trace": {k: v for k, v in trace.items() if k != "compile_s"},
        "graphs": graphs,
    }
    if trace.get("compile_s"):
        meta["timings"] = {"compile_s": trace["compile_s"]}  # Dynamo's whole-frame time, slowest rank
    return meta


def _trace_fields(logs: list[TraceLog]) -> dict:
    statuses = Counter(c.status for log in logs for c in log.compiles)
    per_rank = [sum((c.metrics.get("compilation_metrics") or {}).get("entire_frame_compile_time_s") or 0
                    for c in log.compiles) for log in logs]
    fields = {"logs": [log.path for log in logs], "ranks": [log.rank for log in logs],
              "compile_ids": sum(statuses.values()), "statuses": dict(statuses),
              "graphs": sum(len(c.graphs) for log in logs for c in log.compiles),
              "warnings": sum(len(log.warnings) for log in logs)}
    if any(per_rank):
        fields["compile_s"] = round(max(per_rank), 3)
    return fields


def code_facts(run_dir: Path) -> tuple[str | None, str | None]:
    """(device, dtype) of a run folder from its generated code: the debug tree's output_code.py
    files, else the trace logs (whose payloads carry the same code); see artifacts/devices.py."""
    dev, dt = Counter(), Counter()
    for path in sorted(p for name in ("output_code.py", "output_code.cpp") for p in (run_dir / "debug").glob(f"**/{name}")):
        devices.tally(path.read_bytes(), dev, dt)
    if not dev:
        for path in sorted((run_dir / "trace").glob("*")):
            if path.is_file():
                _tally_head(path, dev, dt)
    return devices.summary(dev, dt)


def _tally_head(path: Path, dev: Counter, dt: Counter) -> None:
    """Tally a log's first LAZY_FILE_BYTES (a big log's first graphs say it), read in place where
    the log is bigger: mapped, not copied (20 ms of a 535 MB log's import)."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size <= LAZY_FILE_BYTES:
            devices.tally(fh.read(), dev, dt)
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped, memoryview(mapped) as whole:
            with whole[:LAZY_FILE_BYTES] as head:
                devices.tally(head, dev, dt)


def trace_fields(folder: Path) -> dict:
    """meta.json's `trace` of a run's trace/ folder (its logs, ranks, compile ids by status, graphs,
    warnings, and `compile_s`: Dynamo's whole-frame compile time of the slowest rank); {} when the
    folder holds no log."""
    try:
        logs = trace_logs(str(folder))
    except DiscoveryError:
        return {}
    parsed = parse_logs(logs)
    return _trace_fields(parsed) if parsed else {}


def graph_count(meta: dict) -> int:
    """How many graphs the Viewer can show for a run (the trace's, else the debug folder's)."""
    return int((meta.get("trace") or {}).get("graphs") or 0) or len(meta.get("graphs") or [])
