"""A pushed run received whole or not at all: the body streamed to a dot-named file in the store,
checked and unpacked as `compile-viz import` does (store.extract_run_zip: the same refusals and
size caps), stamped with the token's project and user, then renamed into place by store.commit."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from pathlib import Path

from compile_viz.server.tokens import Grant
from compile_viz.store import (
    _TMP_PREFIX,
    MAX_IMPORT_BYTES,
    Run,
    RunStore,
    StoreError,
    extract_run_zip,
    new_run_id,
)

MAX_PUSH_BYTES = MAX_IMPORT_BYTES  # the zip as sent; unpacked, import's own cap holds


class PushRefused(Exception):
    """A push the server will not keep: `status` for HTTP, str() one line for the user."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def part_path(store: RunStore) -> Path:
    """Where a push's body is written while it arrives: dot-named, so never listed as a run."""
    return store.runs_dir / f"{_TMP_PREFIX}push-{secrets.token_hex(6)}.zip"


def disk_full(e: OSError) -> PushRefused:
    return PushRefused(507, "the server's disk is full: the push was refused and nothing of it was kept")


def accept_zip(store: RunStore, part: Path, grant: Grant, *, max_bytes: int = MAX_IMPORT_BYTES) -> Run:
    """Unpack the received zip at `part` into a new run of the grant's project; remove `part`.
    PushRefused when it is unsafe, too big, or the disk fills."""
    tmp = store.runs_dir / f"{_TMP_PREFIX}import-{secrets.token_hex(4)}"
    try:
        meta = extract_run_zip(part, tmp, max_bytes=max_bytes)
        meta = dict(meta, project=grant.project, pushed_by=grant.user)
        run_id = str(meta.get("id") or "")
        if not safe_run_id(run_id) or (store.runs_dir / run_id).exists():
            run_id = new_run_id(str(meta.get("model", "pushed")))
        return store.commit(run_id, tmp, meta)
    except StoreError as e:
        raise PushRefused(413 if "cap" in str(e) else 400, str(e).replace(str(part), "the pushed zip")) from None
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise disk_full(e) from None
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass


def safe_run_id(run_id: str) -> bool:
    """A run id the API accepts: no path separators, no '..', no leading dot, printable, short."""
    return (0 < len(run_id) <= 200 and run_id.isprintable() and not run_id.startswith(".")
            and "/" not in run_id and "\\" not in run_id and ".." not in run_id)


def sweep_parts(store: RunStore) -> int:
    """Remove what pushes left behind when the server was killed mid-push; return how many."""
    n = 0
    for name in os.listdir(store.runs_dir):
        if name.startswith((f"{_TMP_PREFIX}push-", f"{_TMP_PREFIX}import-")):
            path = store.runs_dir / name
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
            n += 1
    return n
