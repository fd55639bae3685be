"""The capture child's process: its environment, and how its whole process group is stopped.
Shared by a cold capture (runner.py) and the warm child started ahead of time (warm.py)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # holds compile_viz/ and sample_models/
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest: allocations below it come from the heap
TRIM_THRESHOLD = 4 * 1024 * 1024 * 1024  # freed heap memory kept rather than given back at once


def compile_env(tmp: Path, base: Mapping[str, str] | None = None, *, path_first: Path,
                caches_off: bool = True) -> dict[str, str]:
    """Return `base` (default: ours) plus what makes torch write every artifact into `tmp`: the debug
    tree, TORCH_TRACE, Inductor's provenance, a fresh Inductor and Triton cache (disabled unless
    `caches_off` is False), and `path_first` first on PYTHONPATH. Shared by a capture's child and a
    recorded job."""
    env = dict(os.environ if base is None else base)
    env.setdefault("INDUCTOR_PROVENANCE", "1")  # the provenance JSON the linker takes as ground truth
    cache = tmp / "inductor_cache"
    env.update(
        TORCH_COMPILE_DEBUG="1",
        TORCH_COMPILE_DEBUG_DIR=str(tmp / "debug"),
        TORCH_TRACE=str(tmp / "trace"),
        TORCHINDUCTOR_CACHE_DIR=str(cache),
        TRITON_CACHE_DIR=str(cache / "triton"),
        PYTHONPATH=os.pathsep.join(p for p in (str(path_first), env.get("PYTHONPATH", "")) if p),
    )
    if caches_off:
        env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"  # a cache hit writes no debug folder
    return env


def child_env(tmp: Path) -> dict[str, str]:
    """Return the capture child's environment: debug output in the run folder, caches off and fresh,
    the repository root on PYTHONPATH."""
    env = compile_env(tmp, path_first=REPO_ROOT)
    # glibc's malloc with fixed thresholds: eager's large CPU temporaries are reused, not mapped and
    # unmapped per call, whose cost flips from round to round and process to process with glibc's
    # moving threshold (pointwise_chain on a CPU: eager 3.5 or 9.4 ms a call). A user's own settings win.
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD))
    env.setdefault("MALLOC_TRIM_THRESHOLD_", str(TRIM_THRESHOLD))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def file_tail(path: Path, limit: int) -> str:
    """The last `limit` bytes of a file as text ("" when it cannot be read): a process's stderr."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def kill_group(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """Terminate the child's whole process group (compile workers included), then kill it."""
    if os.name != "posix":
        proc.kill()
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        pass
    kill_leftovers(proc)


def kill_leftovers(proc: subprocess.Popen) -> None:
    """Kill what is left of the child's process group: workers that outlive the child (e.g.
    Inductor's compile pool) share it."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
