"""Which run a key names, and where its files are: a thin layer over the run store.

Keys, as they appear in `?run=`: a store run id, `bundled:NAME` for a zip in sample_runs/,
`path:/server/path` for a debug folder or zip given by path (or an upload that had no meta.json).
No streamlit here, so the pages and the tests share it.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from compile_viz.measurements import MeasureSummary
from compile_viz.render.cells import text_cell
from compile_viz.store import Run, RunStore, StoreError, bundled_runs, open_bundled
from compile_viz.trace_import import graph_count, import_path, is_bare_trace

REPO = Path(__file__).resolve().parents[2]
BUNDLED, PATH = "bundled:", "path:"
MAX_SOURCE_BYTES = 2 * 1024**2
SERVER_PATHS_ENV = "COMPILE_VIZ_ALLOW_SERVER_PATHS"
SERVER_PATHS_OFF = (f"Server paths are turned off on this dashboard ({SERVER_PATHS_ENV}=0); "
                    "upload a run .zip on the Runs page instead.")


@dataclass(frozen=True)
class RunInfo:
    """A run as the viewer needs it."""

    key: str
    title: str
    debug_path: str  # what parse_path reads
    meta: dict = field(default_factory=dict, repr=False)
    source_roots: tuple[str, ...] = ()  # folders where the user's source files may be found

    @property
    def ok(self) -> bool:
        return self.meta.get("status", "complete") == "complete"

    @property
    def reason(self) -> str:
        return str(self.meta.get("reason") or "the capture failed (no reason recorded)")

    @property
    def stderr_tail(self) -> str:
        return str(self.meta.get("stderr_tail") or "")

    @property
    def run_dir(self) -> Path | None:
        """Return the run folder (the parent of debug/, holding meta.json), or None for a bare debug tree."""
        path = Path(self.debug_path or "")
        return path.parent if path.name == "debug" and (path.parent / "meta.json").is_file() else None


def teaching_note(meta: dict) -> str:
    """A run's teaching note: for a bundled sample, the sample's current note (our text, kept up to
    date with what its captures show); for any other run, the note stored with it."""
    ref = meta.get("model_ref") or {}
    if ref.get("kind") == "sample":
        try:
            from sample_models import get_sample

            return get_sample(ref.get("name", "")).teaching_note
        except KeyError:
            pass
    return str(meta.get("teaching_note") or "")


def default_run_key(store: RunStore) -> str | None:
    """Return the latest complete run in the store with a graph to show (a trace of a failed compile
    has none), else the first bundled run (gpt_small first)."""
    for run in store.list_runs(status="complete", limit=20):
        if not run.meta.get("trace") or graph_count(run.meta):
            return run.id
    names = [b.name for b in bundled_runs()]
    if not names:
        return None
    return BUNDLED + ("gpt_small" if "gpt_small" in names else names[0])


def server_paths_allowed() -> bool:
    """Return whether `?run=path:...` may name any file on the server (COMPILE_VIZ_ALLOW_SERVER_PATHS)."""
    return os.environ.get(SERVER_PATHS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _is_upload(path: Path, store: RunStore) -> bool:
    """Return whether `path` is a zip that save_upload kept: allowed even with server paths off."""
    try:
        return path.resolve().parent == (store.home / "uploads").resolve()
    except OSError:
        return False


def resolve(key: str, store: RunStore) -> RunInfo:
    """Return the RunInfo of `key`; StoreError (one line) when there is no such run or it is not allowed."""
    if key.startswith(PATH):
        path = Path(key[len(PATH):]).expanduser()
        if not server_paths_allowed() and not _is_upload(path, store):
            raise StoreError(SERVER_PATHS_OFF)
        if not path.exists():
            raise StoreError(f"no such file or folder on the server: {path}")
        roots = [path.parent, path.parent.parent, path.parent.parent.parent] if path.is_dir() else [path.parent]
        return RunInfo(key, path.name, str(path), {}, tuple(str(r) for r in roots))
    run = open_bundled(key[len(BUNDLED):], store) if key.startswith(BUNDLED) else store.get(key)
    meta = dict(run.meta)
    roots = [run.path, run.path / "source"]
    ref = meta.get("model_ref") or {}
    if ref.get("kind") == "sample":
        roots.append(REPO / "sample_models")
    if ref.get("path"):
        roots.append(Path(ref["path"]).parent)
    title = meta.get("title") or meta.get("model") or run.id
    label = f"{title} · {run.id}" if not key.startswith(BUNDLED) else f"{title} · bundled run {key[len(BUNDLED):]}"
    return RunInfo(key, label, str(run.debug_dir), meta, tuple(str(r) for r in roots))


def find_source(file: str, roots: tuple[str, ...]) -> tuple[str, str] | None:
    """Return (path, text) of a user's source file named in a `# File:` comment, or None.

    Only .py files, only small ones: the name comes from an artifact that may not be ours.
    Tried as written, then by base name under each root (the run folder, the samples...).
    """
    if not file.endswith(".py"):
        return None
    candidates = [Path(file)] if os.path.isabs(file) else []
    candidates += [Path(r) / Path(file).name for r in roots]
    for c in candidates:
        try:
            if c.is_file() and c.stat().st_size <= MAX_SOURCE_BYTES:
                return str(c), c.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def save_upload(name: str, data: bytes, store: RunStore) -> str:
    """Return the run key of an upload: a run export (meta.json at its root), a TORCH_TRACE log
    (plain or .gz) or a zip of trace logs are imported into the store; a zip of a debug tree is
    kept as it is and opened by path. StoreError (one line) if unusable."""
    uploads = store.home / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(data).hexdigest()[:16]
    if not name.lower().endswith(".zip"):  # a log: imported, the upload itself not kept
        path = uploads / f"{digest}-{_safe_file_name(name)}"
        path.write_bytes(data)
        try:
            return import_path(store, path, label=name).run.id
        finally:
            path.unlink(missing_ok=True)
    path = uploads / f"{digest}.zip"
    path.write_bytes(data)
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (OSError, zipfile.BadZipFile) as e:
        path.unlink(missing_ok=True)
        raise StoreError(f"{name} is not a zip file ({e}); upload a run exported by compile-viz, "
                         "a zip of a torch_compile_debug folder or a TORCH_TRACE log") from None
    if "meta.json" in names or any(n.count("/") == 1 and n.endswith("/meta.json") for n in names):
        run = store.import_zip(path)
        path.unlink(missing_ok=True)
        return run.id
    if is_bare_trace(str(path)):
        try:
            return import_path(store, path, label=name).run.id
        finally:
            path.unlink(missing_ok=True)
    return PATH + str(path)


def _safe_file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(name))[-80:] or "upload.log"


def server_path_key(path: str, store: RunStore) -> str:
    """Return the run key of a server path: TORCH_TRACE logs alone (a log, or a folder or zip of
    them) are imported into the store; anything else is opened by path. StoreError if unusable."""
    if is_bare_trace(path):
        return import_path(store, path).run.id
    return PATH + path


def first_page(key: str, store: RunStore) -> str:
    """The page a run opens on: the Viewer, or the Compiles page for a trace with no graph (a
    compile that failed before Inductor ran)."""
    if key.startswith((PATH, BUNDLED)):
        return "viewer"
    meta = store.get(key).meta
    return "compiles" if meta.get("trace") and not graph_count(meta) else "viewer"


def upload_details(name: str, data: bytes) -> str:
    """What an upload held, for the details under an error: its size and its files or first lines."""
    head = f"{name}: {len(data)} bytes"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
        return "\n".join([f"{head}, a zip of {len(names)} entries:", *names[:40], *(["…"] if len(names) > 40 else [])])
    except zipfile.BadZipFile:
        pass
    if data[:2] == b"\x1f\x8b":
        return f"{head}, gzip-compressed"
    lines = data[:2000].decode("utf-8", errors="replace").splitlines()[:3]
    return "\n".join([f"{head}; its first lines:", *(line[:200] for line in lines)])


def path_stamp(key: str) -> float:
    """Return the modification time behind a path: key (0 for store and bundled runs, which never change)."""
    if not key.startswith(PATH):
        return 0.0
    try:
        return os.stat(key[len(PATH):]).st_mtime
    except OSError:
        return -1.0


def run_row(run: Run) -> dict:
    """A stored run as a row of the Runs table: a recorded job also shows its command, ranks,
    exit code and wall time; a capture its device and dtype as compiled."""
    job = run.meta.get("job") or {}
    ranks = [r for r in job.get("ranks") or [] if r is not None]
    measured = MeasureSummary.from_json(run.meta.get("measure"))
    row = {"id": run.id, "model": run.model, "kind": run.kind, "status": run.status,
           "result": measured.wrong_badge if measured else "", "created": run.meta.get("created"),
           "device": run.settings.get("device"), "dtype": run.settings.get("dtype"), "ranks": len(ranks) or None,
           "exit": job.get("exit_code"), "wall s": job.get("wall_s"), "command": run.command, "reason": run.reason}
    return {name: text_cell(value) for name, value in row.items()}  # blank for what a run has not
