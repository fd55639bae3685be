"""A graph's parse as a job: what `parse_path` runs for each graph, handed out so that a caller
may run the jobs in several processes (`compile-viz parse --json`, compile_viz/cli/forked.py)."""

from __future__ import annotations

from dataclasses import replace


class GraphJob:
    """One graph's parse, not yet done: `job()` returns its GraphParse. `size` is the bytes of
    text it will read, for sharing jobs out between processes. A job holds what it reads from
    (a reader, a log's payloads) and runs in the process that calls it."""

    __slots__ = ("fn", "args", "size")

    def __init__(self, fn, args: tuple, size: int) -> None:
        self.fn = fn
        self.args = args
        self.size = size

    def __call__(self):
        return self.fn(*self.args)

    def __repr__(self) -> str:
        return f"GraphJob({getattr(self.fn, '__name__', self.fn)}, {self.size} bytes)"


def run_here(run, jobs: tuple[GraphJob, ...]):
    """`run` (a DebugParse with no graphs yet) with the GraphParse of every job, in order, all
    parsed in this process."""
    return replace(run, graphs=tuple(job() for job in jobs))
