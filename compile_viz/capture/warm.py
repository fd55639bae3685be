"""The warm child: a capture child started ahead of time, torch already imported, waiting for its request.

torch reads TORCH_COMPILE_DEBUG, TORCH_COMPILE_DEBUG_DIR, TORCH_TRACE, INDUCTOR_PROVENANCE and
TORCHINDUCTOR_FORCE_DISABLE_CACHES when it is imported, so a warm child cannot be pointed at a run
folder after the fact. Instead it is single-use: prewarm() allocates the next run's `.tmp-` folder,
starts the child with that folder's whole environment, and the child imports torch and blocks on
stdin. capture(warm=True) takes it (only one caller can), writes the request and sends its path;
anything that does not match (dead, too old, another store, another environment) is discarded and
the capture goes cold. Torch-free, like the rest of the parent side.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from compile_viz.capture.options import CaptureOptions
from compile_viz.record.process import child_env, kill_group
from compile_viz.store import RunStore

MAX_AGE_S = 15 * 60  # older than this counts as stale: code or packages on disk may have changed
READY_FILE = "warm.json"  # in logs/: written by the child once its imports are done
DISABLE_ENV = "COMPILE_VIZ_WARM"  # "0": never keep a warm child (each capture starts cold)


@dataclass
class WarmChild:
    proc: subprocess.Popen
    tmp: Path  # the run folder it was started in (debug/, trace/, logs/ made)
    key: str
    started: float

    def alive(self) -> bool:
        return self.proc.poll() is None and self.tmp.is_dir()

    def ready(self) -> bool:
        return (self.tmp / "logs" / READY_FILE).is_file()

    def send(self, request_path: Path) -> bool:
        """Return True once the child holds its request; False if it is gone (the caller goes cold)."""
        try:
            self.proc.stdin.write(str(request_path).encode("utf-8") + b"\n")
            self.proc.stdin.close()
        except (OSError, ValueError):  # BrokenPipeError: it died since alive() was checked
            return False
        return self.proc.poll() is None


_lock = threading.Lock()
_current: WarmChild | None = None


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


def warm_key(store: RunStore, extra_env: tuple[tuple[str, str], ...] = ()) -> str:
    """Return what a warm child must have been started with to serve a capture: store, env, interpreter."""
    env = sorted(os.environ.items()) + [("\0extra", repr(tuple(sorted(extra_env))))]
    text = json.dumps([str(store.runs_dir.resolve()), sys.executable, env])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prewarm(store: RunStore | None = None, options: CaptureOptions | None = None) -> bool:
    """Return True when a warm child for this store and environment is waiting or now starting.

    A cheap no-op when one is already warm; otherwise the old one is discarded and a new one
    started (the spawn returns at once; the child imports torch in the background). The device
    does not matter: the child only imports torch and Inductor's config; CUDA starts after the request.
    """
    if not enabled():
        return False
    store = store or RunStore()
    extra_env = options.extra_env if options else ()
    key = warm_key(store, extra_env)
    global _current
    with _lock:
        if _current is not None and _usable(_current, key):
            return True
        old, _current = _current, None
        try:
            _current = _spawn(store, extra_env, key)
        except OSError:
            _current = None
    if old is not None:
        discard(old)
    return _current is not None


def take(store: RunStore, options: CaptureOptions) -> WarmChild | None:
    """Return the warm child if it can serve this capture (it is then the caller's alone), else None."""
    if not enabled():
        return None
    global _current
    with _lock:
        child, _current = _current, None
    if child is None:
        return None
    if not _usable(child, warm_key(store, options.extra_env)):
        discard(child)
        return None
    return child


def current() -> WarmChild | None:
    """Return the warm child waiting now, if any (for tests and the bench)."""
    return _current


def wait_ready(timeout_s: float = 120.0) -> bool:
    """Return True once the waiting warm child has finished its imports (bench and tests only)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        child = _current
        if child is None or child.proc.poll() is not None:
            return False
        if child.ready():
            return True
        time.sleep(0.05)
    return False


def shutdown() -> None:
    """Discard the waiting warm child and its run folder (atexit does this too)."""
    global _current
    with _lock:
        child, _current = _current, None
    if child is not None:
        discard(child)


def discard(child: WarmChild) -> None:
    """Kill an unused warm child's process group and remove its `.tmp-` run folder."""
    try:
        child.proc.stdin.close()
    except (OSError, ValueError):
        pass
    kill_group(child.proc, grace_s=2.0)
    if child.proc.stdout is not None:
        child.proc.stdout.close()
    shutil.rmtree(child.tmp, ignore_errors=True)


def _usable(child: WarmChild, key: str) -> bool:
    return child.key == key and child.alive() and time.monotonic() - child.started < MAX_AGE_S


def _spawn(store: RunStore, extra_env: tuple[tuple[str, str], ...], key: str) -> WarmChild:
    _, tmp = store.begin("warm")  # renamed to the real run id when the run is committed
    env = child_env(tmp)
    env.update(dict(extra_env))
    try:
        with open(tmp / "logs" / "stderr.txt", "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "compile_viz.capture.child", "--warm"],
                                    cwd=tmp, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, start_new_session=True)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return WarmChild(proc, tmp, key, time.monotonic())


# A parent that exits normally removes its unused warm child; one that is killed closes the
# child's stdin, and the child then removes its own folder and exits.
atexit.register(shutdown)
