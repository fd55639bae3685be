"""A graph's parse as a job: what `parse_path` runs for each graph, handed out so that a caller
may run the jobs in several processes (`compile-viz parse --json`, compile_viz/cli/forked.py)."""

from __future__ import annotations

from dataclasses import replace


class GraphJob:
    """One graph's parse, not yet done: `job()` returns its GraphParse. `size` is the bytes of
    text it will read, for sharing jobs out between processes. A job holds what it reads from
    (a reader, a log's payloads) and runs in the process that calls it.

    A job with a `check` (a TORCH_TRACE graph: its payloads' MD5s) can be run without it
    (`unchecked()`), the check made apart (`intact()`): by another process, while this one parses
    (cli/parse.py)."""

    __slots__ = ("fn", "args", "size", "kwargs", "check", "prepare")

    def __init__(self, fn, args: tuple, size: int, *, check=None, prepare=None, kwargs: dict | None = None) -> None:
        self.fn = fn
        self.args = args
        self.size = size
        self.check = check  # check(*args): whether what the parse reads is as logged; fn then takes `checks`
        # prepare(*args): a part of the parse another process can make first and hand over (None:
        # none to make), which fn then takes as `given` (a function returning it, or None)
        self.prepare = prepare
        self.kwargs = kwargs or {}

    def __call__(self):
        return self.fn(*self.args, **self.kwargs)

    def unchecked(self, given=None) -> GraphJob:
        """This job with its parser told to leave its check to `intact()` (no warning of it), and
        to take what `given()` returns, made by `prepare` in another process, when not None."""
        kwargs = {"checks": False} if self.check is not None else {}
        if given is not None and self.prepare is not None:
            kwargs["given"] = given
        return GraphJob(self.fn, self.args, self.size, check=self.check, prepare=self.prepare, kwargs=kwargs)

    def intact(self) -> bool:
        """Whether the check an `unchecked()` job left out passes (True: nothing to check)."""
        return self.check is None or self.check(*self.args)

    def __repr__(self) -> str:
        return f"GraphJob({getattr(self.fn, '__name__', self.fn)}, {self.size} bytes)"


def run_here(run, jobs: tuple[GraphJob, ...]):
    """`run` (a DebugParse with no graphs yet) with the GraphParse of every job, in order, all
    parsed in this process."""
    return replace(run, graphs=tuple(job() for job in jobs))
