"""Run independent jobs in this process and in forked copies of it, on the CPUs it may use.

For command-line work that is several independent pieces (`compile-viz parse --json`: one graph
each). A forked child starts with everything already imported and read, runs its share of the
jobs and sends back their results, pickled, through a pipe; the results come back in the jobs'
order, the same as running them one by one. A child that fails or dies costs time, not the
answer: its share is run again here. Nothing is forked where fork is unsafe or unavailable (not
Linux, other threads running) or where one process is all there is to use.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Iterator, Sequence

MAX_WORKERS = 8


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
    return sys.platform.startswith("linux") and hasattr(os, "fork") and (threading is None or threading.active_count() == 1)


def share(weights: Sequence[int], workers: int) -> list[list[int]]:
    """The job indices split into `workers` lists of about equal total weight (heaviest first,
    each to the lightest list so far); each list in the jobs' order."""
    bins: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        k = loads.index(min(loads))
        bins[k].append(i)
        loads[k] += weights[i]
    return [sorted(b) for b in bins if b]


def run_shared(fn: Callable, jobs: Sequence, weights: Sequence[int], workers: int) -> Iterator:
    """`fn(job)` for every job, in order, as an iterator: one at a time in this process when one
    process is used; else shared out by weight between this process and `workers - 1` forked ones.
    This process takes the lightest share, and a result of its own is given as soon as every
    result before it is: what comes first can be written while the other shares still run."""
    workers = min(workers, len(jobs), MAX_WORKERS)
    if workers <= 1 or not can_fork():
        return (fn(job) for job in jobs)
    shares = sorted(share(weights, workers), key=lambda s: sum(weights[i] for i in s))
    return _forked(fn, jobs, shares[0], shares[1:])


def _forked(fn: Callable, jobs: Sequence, mine: list[int], theirs: list[list[int]]) -> Iterator:
    children = [_start(fn, jobs, indices) for indices in theirs]
    owner = {i: k for k, indices in enumerate(theirs) for i in indices}
    unread = {fd for _, fd in children}
    todo = list(reversed(mine))  # this process's jobs, next one last
    done: dict[int, object] = {}
    try:
        for i in range(len(jobs)):
            if i in owner:
                while todo:  # a child's result is next: first finish this process's share while it runs
                    j = todo.pop()
                    done[j] = fn(jobs[j])
                k = owner[i]
                if (fd := children[k][1]) in unread:
                    unread.discard(fd)
                    done.update(_receive(fd) or {j: fn(jobs[j]) for j in theirs[k]})
            elif todo and todo[-1] == i:
                done[todo.pop()] = fn(jobs[i])
            yield done.pop(i)
    finally:
        for fd in unread:  # left unread (this process failed): a child blocked writing to it gets EPIPE and exits
            os.close(fd)
        for pid, _ in children:  # reaped last: a child's exit (freeing its memory) is not waited for before
            os.waitpid(pid, 0)


def _start(fn: Callable, jobs: Sequence, indices: list[int]) -> tuple[int, int]:
    """Fork a child that runs `fn` on the jobs at `indices` and writes {index: result} to a pipe;
    return its pid and the pipe's reading end."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return pid, read_fd
    code = 1
    try:  # the child: never returns into the caller's code
        os.close(read_fd)
        data = _pack({i: fn(jobs[i]) for i in indices})
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(data)
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent runs this share itself
        pass
    finally:
        os._exit(code)


def _receive(fd: int) -> dict | None:
    """A child's results, or None when it failed (it sent nothing, or a cut message: the child
    writes only once every result of its share is made)."""
    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    try:
        return _unpack(data) if data else None
    except Exception:  # noqa: BLE001 - a cut message: run the share here
        return None


# Results go through marshal when it can write them (texts, numbers, tuples, dicts: what `parse
# --json` sends; no module to load, ~2 ms of a child's time), else through pickle.
def _pack(results: dict) -> bytes:
    try:
        return b"M" + marshal.dumps(results)
    except ValueError:
        import pickle

        return b"P" + pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)


def _unpack(data: bytes) -> dict:
    if data[:1] == b"M":
        return marshal.loads(data[1:])
    import pickle

    return pickle.loads(data[1:])
