"""The run store: one folder per run under $COMPILE_VIZ_HOME/runs, an index beside it (SQLite in
home/index.sqlite by default, or any RunIndex: the team server's PostgreSQL one).

A run folder holds meta.json, debug/ (the torch_compile_debug tree as torch wrote it),
trace/ (TORCH_TRACE) and logs/ (the child's stdout and stderr). It is written under a
dot-named temporary folder and renamed into place, so a listed run is always complete.
Stdlib only: no torch, no streamlit.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from compile_viz.store_index import SCHEMA_VERSION, SEARCHED, RunIndex, SqliteIndex

__all__ = ["SCHEMA_VERSION", "SEARCHED", "RunIndex", "SqliteIndex"]  # the index interface, from store_index

META = "meta.json"
MAX_IMPORT_BYTES = 2 * 1024**3  # unpacked size cap for an imported zip
MAX_IMPORT_ENTRIES = 200_000
_TMP_PREFIX = ".tmp-"
class StoreError(Exception):
    """A store operation failed; str() is one line for the user."""


@dataclass(frozen=True, eq=False)
class Run:
    """A run folder and its meta.json."""

    id: str
    path: Path
    meta: dict[str, Any] = field(repr=False)
    bundled: bool = False

    @property
    def debug_dir(self) -> Path:
        return self.path / "debug"

    @property
    def trace_dir(self) -> Path:
        return self.path / "trace"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    @property
    def status(self) -> str:
        return self.meta.get("status", "unknown")

    @property
    def ok(self) -> bool:
        return self.status == "complete"

    @property
    def model(self) -> str:
        return self.meta.get("model", "?")

    @property
    def reason(self) -> str | None:
        return self.meta.get("reason")

    @property
    def kind(self) -> str:
        """How the run was made: "job" (compile-viz record), "import" (a TORCH_TRACE log or debug
        tree from elsewhere) or "capture" (a model compiled by compile-viz)."""
        return run_kind(self.meta)

    @property
    def command(self) -> str:
        """A recorded job's command line, as a shell would show it; "" for other runs."""
        return job_command(self.meta)

    @property
    def settings(self) -> dict[str, Any]:
        """Device, dtype and the rest: as resolved in the capture child, else as asked for."""
        return self.meta.get("resolved") or self.meta.get("options") or {}


def run_kind(meta: dict[str, Any]) -> str:
    if meta.get("kind") == "job":
        return "job"
    return "import" if meta.get("source") else "capture"


def job_command(meta: dict[str, Any]) -> str:
    import shlex

    argv = (meta.get("job") or {}).get("argv") or []
    return shlex.join(str(a) for a in argv)


def default_home() -> Path:
    """Return $COMPILE_VIZ_HOME, or ~/.compile_viz."""
    env = os.environ.get("COMPILE_VIZ_HOME")
    return Path(env).expanduser() if env else Path.home() / ".compile_viz"


def new_run_id(model: str) -> str:
    """Return a sortable, unique run id: UTC time, model, random suffix."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in model)[:40] or "run"
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{safe}-{secrets.token_hex(3)}"


def read_meta(folder: Path) -> dict[str, Any]:
    with open(folder / META, encoding="utf-8") as f:
        return json.load(f)


def write_meta(folder: Path, meta: dict[str, Any]) -> None:
    tmp = folder / (META + ".part")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, folder / META)


class RunStore:
    """Runs under `home/runs`, indexed in `index` (default: SQLite in `home/index.sqlite`)."""

    def __init__(self, home: str | os.PathLike[str] | None = None, *, index: RunIndex | None = None):
        self.home = Path(home).expanduser() if home else default_home()
        self.runs_dir = self.home / "runs"
        self.index_path = self.home / "index.sqlite"
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.index = index or SqliteIndex(self.index_path)
        if self.index.open():
            self.reindex()

    # -- writing ---------------------------------------------------------------------------
    def begin(self, model: str) -> tuple[str, Path]:
        """Return (run id, temporary folder) with debug/, trace/ and logs/ made."""
        run_id = new_run_id(model)
        tmp = self.runs_dir / f"{_TMP_PREFIX}{run_id}"
        for sub in ("debug", "trace", "logs"):
            (tmp / sub).mkdir(parents=True)
        return run_id, tmp

    def commit(self, run_id: str, tmp: Path, meta: dict[str, Any]) -> Run:
        """Write meta.json, rename the temporary folder into place, index it; return the Run."""
        meta = dict(meta, id=run_id)
        write_meta(tmp, meta)
        final = self.runs_dir / run_id
        os.rename(tmp, final)
        try:
            self.index.put([index_row(run_id, meta)])
        except Exception:  # noqa: BLE001  (sqlite3's, psycopg's or IndexDbError alike)
            pass  # the folder is the truth; the next sync() indexes it
        return Run(run_id, final, meta)

    def abandon(self, tmp: Path) -> None:
        shutil.rmtree(tmp, ignore_errors=True)

    def delete(self, run_id: str) -> None:
        run = self.get(run_id)
        shutil.rmtree(run.path)
        self.index.remove([run.id])

    # -- reading ---------------------------------------------------------------------------
    def get(self, run_id: str) -> Run:
        """Return the run with this id (or folder path, or unique id prefix); StoreError if none."""
        path = Path(run_id)
        if path.is_dir() and (path / META).is_file():
            return Run(path.name, path.resolve(), read_meta(path))
        if "/" not in run_id and (self.runs_dir / run_id / META).is_file():
            return Run(run_id, self.runs_dir / run_id, read_meta(self.runs_dir / run_id))
        matches = [n for n in self._folders() if n.startswith(run_id) or n.endswith(run_id)]
        if len(matches) == 1:
            return self.get(matches[0])
        if not matches:
            raise StoreError(f"no run {run_id!r} in {self.runs_dir}; `compile-viz runs` lists them")
        raise StoreError(f"{run_id!r} matches {len(matches)} runs; give more of the id")

    def list_runs(self, query: str | None = None, *, status: str | None = None,
                  limit: int | None = None, projects: list[str] | None = None,
                  model: str | None = None, after: str | None = None) -> list[Run]:
        """Return runs newest first; `query` matches any of SEARCHED (id, model, status, device...);
        `projects` (when not None) keeps the runs of those projects only, `model` one model's;
        `after` a run id: the runs listed after it (paging)."""
        self.sync()
        ids = self.index.select(query, status=status, limit=limit, projects=projects, model=model, after=after)
        runs = []
        for run_id in ids:
            try:
                runs.append(Run(run_id, self.runs_dir / run_id, read_meta(self.runs_dir / run_id)))
            except (OSError, ValueError):
                continue  # removed or rewritten since the sync; the next sync fixes the index
        return runs

    def sync(self) -> None:
        """Bring the index in line with the folders (runs copied in or deleted by hand)."""
        folders = set(self._folders())
        indexed = self.index.ids()
        self.index.remove(sorted(indexed - folders))
        self._put(sorted(folders - indexed))

    def reindex(self) -> None:
        """Re-read every folder's meta.json into the index (after a migration that asks for it)."""
        folders = set(self._folders())
        self.index.remove(sorted(self.index.ids() - folders))
        self._put(sorted(folders))

    def _put(self, ids: list[str]) -> None:
        rows = []
        for run_id in ids:
            try:
                rows.append(index_row(run_id, read_meta(self.runs_dir / run_id)))
            except (OSError, ValueError):
                continue
        self.index.put(rows)

    # -- zip -------------------------------------------------------------------------------
    def export_run(self, run_id: str, out: str | os.PathLike[str]) -> Path:
        """Write the run to one zip (meta.json at its root); return the zip's path."""
        run = self.get(run_id)
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        part = out.with_name(out.name + ".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for path in _walk_files(run.path):
                zf.write(path, path.relative_to(run.path).as_posix())
        os.replace(part, out)
        return out

    def import_zip(self, zip_path: str | os.PathLike[str], *, max_bytes: int = MAX_IMPORT_BYTES) -> Run:
        """Import a zip written by export_run; return the new Run. StoreError (one line) if unsafe."""
        run_id, tmp = None, self.runs_dir / f"{_TMP_PREFIX}import-{secrets.token_hex(4)}"
        try:
            meta = extract_run_zip(zip_path, tmp, max_bytes=max_bytes)
            run_id = str(meta.get("id") or new_run_id(str(meta.get("model", "imported"))))
            if not _safe_name(run_id) or (self.runs_dir / run_id).exists():
                run_id = new_run_id(str(meta.get("model", "imported")))
            return self.commit(run_id, tmp, meta)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    # -- internals -------------------------------------------------------------------------
    def _folders(self) -> list[str]:
        try:
            names = os.listdir(self.runs_dir)
        except FileNotFoundError:
            return []
        return [n for n in names if not n.startswith(".") and (self.runs_dir / n / META).is_file()]



def index_row(run_id: str, meta: dict[str, Any]) -> tuple:
    """The index's row of a run (store_index.COLUMNS), read from its meta.json."""
    opts = meta.get("resolved") or meta.get("options") or {}
    return (run_id, meta.get("model"), meta.get("status"), meta.get("created"), opts.get("device"),
            opts.get("mode"), opts.get("dtype"), int(bool(opts.get("train"))), meta.get("reason"),
            len(meta.get("graph_breaks") or []), (meta.get("timings") or {}).get("compile_s"),
            run_kind(meta), job_command(meta), meta.get("project"))


def _walk_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_symlink():
                yield path


def _safe_name(name: str) -> bool:
    return bool(name) and not name.startswith(".") and "/" not in name and "\\" not in name


def _check_entry(info: zipfile.ZipInfo) -> str | None:
    """Return why this zip entry is unsafe, or None."""
    name = info.filename
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return f"absolute path {name!r}"
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return f"'..' in path {name!r}"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return f"symbolic link {name!r}"
    return None


def _zip_root(names: list[str]) -> str:
    """Return the prefix under which meta.json sits: '' or 'one_folder/'."""
    if META in names:
        return ""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and f"{next(iter(tops))}/{META}" in names:
        return next(iter(tops)) + "/"
    raise StoreError("zip has no meta.json at its root: not a compile_viz run export")


def check_zip(zip_path: str | os.PathLike[str], *, max_bytes: int = MAX_IMPORT_BYTES) -> zipfile.ZipFile:
    """Return the open ZipFile after the safety checks (entries, paths, links, unpacked size);
    StoreError (one line) if unsafe."""
    try:
        zf = zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as e:
        raise StoreError(f"cannot open {zip_path}: {e}") from None
    infos = zf.infolist()
    if len(infos) > MAX_IMPORT_ENTRIES:
        zf.close()
        raise StoreError(f"refusing {zip_path}: {len(infos)} entries (limit {MAX_IMPORT_ENTRIES})")
    total = 0
    for info in infos:
        why = _check_entry(info)
        if why:
            zf.close()
            raise StoreError(f"refusing {zip_path}: unsafe entry, {why}")
        total += info.file_size
    if total > max_bytes:
        zf.close()
        raise StoreError(f"refusing {zip_path}: unpacks to {total} bytes, over the {max_bytes}-byte cap")
    return zf


def check_run_zip(zip_path: str | os.PathLike[str], *, max_bytes: int = MAX_IMPORT_BYTES) -> tuple[zipfile.ZipFile, str]:
    """Return (open ZipFile, root prefix) after the safety checks; StoreError (one line) if unsafe."""
    zf = check_zip(zip_path, max_bytes=max_bytes)
    try:
        root = _zip_root(zf.namelist())
    except StoreError:
        zf.close()
        raise
    return zf, root


def is_run_zip(zip_path: str | os.PathLike[str]) -> bool:
    """Whether a zip is a run export (meta.json at its root or under its one folder); no safety checks."""
    try:
        with zipfile.ZipFile(zip_path) as zf:
            _zip_root(zf.namelist())
    except (OSError, zipfile.BadZipFile, StoreError):
        return False
    return True


def extract_run_zip(zip_path: str | os.PathLike[str], dest: Path, *, max_bytes: int = MAX_IMPORT_BYTES) -> dict:
    """Extract a checked run zip into `dest` (created); return its meta. StoreError if unsafe."""
    zf, root = check_run_zip(zip_path, max_bytes=max_bytes)
    _extract(zf, root, zip_path, dest, max_bytes)
    try:
        return read_meta(dest)
    except (OSError, ValueError) as e:
        raise StoreError(f"refusing {zip_path}: unreadable meta.json ({e})") from None


def extract_zip(zip_path: str | os.PathLike[str], dest: Path, *, max_bytes: int = MAX_IMPORT_BYTES) -> None:
    """Extract any zip into `dest` (created) after the safety checks; StoreError (one line) if unsafe."""
    _extract(check_zip(zip_path, max_bytes=max_bytes), "", zip_path, dest, max_bytes)


def _extract(zf: zipfile.ZipFile, root: str, zip_path: str | os.PathLike[str], dest: Path, max_bytes: int) -> None:
    written = 0
    with zf:
        dest.mkdir(parents=True)
        for info in zf.infolist():
            if not info.filename.startswith(root) or info.is_dir():
                continue
            target = dest / info.filename[len(root):]
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                while chunk := src.read(1 << 20):
                    written += len(chunk)  # the header's size can lie; count what really comes out
                    if written > max_bytes:
                        raise StoreError(f"refusing {zip_path}: unpacks past the {max_bytes}-byte cap")
                    out.write(chunk)


# -- bundled runs (sample_runs/*.zip at the repo root), read-only ---------------------------
@dataclass(frozen=True, eq=False)
class BundledRun:
    """A run zip shipped with the repo (captured on a GPU)."""

    name: str
    zip_path: Path
    meta: dict[str, Any] = field(repr=False)


def bundled_dir() -> Path:
    """Return $COMPILE_VIZ_SAMPLE_RUNS, or sample_runs/ at the repository root."""
    env = os.environ.get("COMPILE_VIZ_SAMPLE_RUNS")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "sample_runs"


def bundled_runs(folder: str | os.PathLike[str] | None = None) -> list[BundledRun]:
    """Return the bundled run zips (sorted by name); unreadable or unsafe zips are left out."""
    folder = Path(folder) if folder else bundled_dir()
    out = []
    for zip_path in sorted(folder.glob("*.zip")):
        try:
            zf, root = check_run_zip(zip_path)
            with zf:
                meta = json.loads(zf.read(root + META))
        except (StoreError, ValueError, KeyError):
            continue
        out.append(BundledRun(zip_path.stem, zip_path, meta))
    return out


def open_bundled(name: str | os.PathLike[str], store: RunStore | None = None) -> Run:
    """Return a bundled run unpacked (once, by content hash) under home/bundled; not indexed."""
    zip_path = Path(name)
    if not zip_path.suffix == ".zip":
        zip_path = bundled_dir() / f"{name}.zip"
    if not zip_path.is_file():
        raise StoreError(f"no bundled run {str(name)!r} in {bundled_dir()}")
    store = store or RunStore()
    digest = hashlib.sha256(zip_path.read_bytes()).hexdigest()[:12]
    final = store.home / "bundled" / f"{zip_path.stem}-{digest}"
    if not (final / META).is_file():
        tmp = final.with_name(f"{_TMP_PREFIX}{final.name}-{secrets.token_hex(3)}")
        try:
            extract_run_zip(zip_path, tmp)
            try:
                os.rename(tmp, final)
            except OSError:  # another process unpacked it first
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return Run(f"bundled:{zip_path.stem}", final, read_meta(final), bundled=True)
