"""Fork where it is safe: the CPUs this process may use, whether forking it is safe, and a list of
independent pieces of reading done in forked copies of this process. Stdlib only.

cli/forked.py shares out `parse --json`'s graphs with these; trace/discover.py indexes several
big TORCH_TRACE logs (one per rank) at once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence


def cpus() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Linux, and no other thread running (a thread is started through `threading`: if it was
    never imported, there is none)."""
    threading = sys.modules.get("threading")
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(os, "memfd_create")
            and (threading is None or threading.active_count() == 1))


def map_forked(fn: Callable, items: Sequence, workers: int) -> list:
    """[fn(item) for item in items], shared between this process and up to `workers - 1` forked
    ones (item i to share i % workers); results come back pickled. Run here alone where forking is
    unsafe or one process is all there is; a child that fails has its share run here again."""
    workers = min(workers, len(items))
    if workers <= 1 or not can_fork():
        return [fn(item) for item in items]
    import pickle  # here: `parse --json` imports this module for cpus() and can_fork() alone
    import tempfile

    children = []
    for k in range(1, workers):
        out = tempfile.TemporaryFile()
        pid = os.fork()
        if pid == 0:  # the child: its share, pickled into the shared file, then gone
            code = 1
            try:
                pickle.dump([fn(item) for item in items[k::workers]], out, protocol=pickle.HIGHEST_PROTOCOL)
                out.flush()
                code = 0
            finally:
                os._exit(code)
        children.append((k, pid, out))
    results: list = [None] * len(items)
    results[0::workers] = [fn(item) for item in items[0::workers]]
    for k, pid, out in children:
        _, status = os.waitpid(pid, 0)
        share = None
        if os.waitstatus_to_exitcode(status) == 0:
            out.seek(0)
            try:
                share = pickle.load(out)
            except (EOFError, pickle.UnpicklingError):
                share = None
        out.close()
        results[k::workers] = share if share is not None else [fn(item) for item in items[k::workers]]
    return results
