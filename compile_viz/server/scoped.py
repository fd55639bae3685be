"""The store a signed-in person sees: the runs of their projects, nothing else.

The dashboard runs each session's script in its own thread; the sign-in gate (ui/team.py) sets the
person's projects for that thread before any page runs, and every listing or lookup here is cut to
them. A thread with no projects set sees nothing (closed by default)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from compile_viz.store import Run, RunStore, StoreError
from compile_viz.store_index import RunIndex


class ScopedStore(RunStore):
    def __init__(self, home, *, index: RunIndex | None = None):
        super().__init__(home, index=index)
        self._scope = threading.local()

    def set_projects(self, projects: Sequence[str] | None) -> None:
        """The projects this thread's person may see (None: nobody signed in, nothing seen)."""
        self._scope.projects = tuple(projects) if projects is not None else None

    def projects(self) -> tuple[str, ...]:
        return getattr(self._scope, "projects", None) or ()

    def list_runs(self, query=None, *, projects=None, **kw) -> list[Run]:
        allowed = self.projects()
        projects = list(allowed) if projects is None else [p for p in projects if p in allowed]
        return super().list_runs(query, projects=projects, **kw)

    def get(self, run_id: str) -> Run:
        """The run if it is one of this person's projects' (by exact id or unique prefix among
        theirs); StoreError otherwise, worded as for a run that does not exist."""
        allowed = self.projects()
        if "/" not in run_id and "\\" not in run_id and ".." not in run_id and not run_id.startswith("."):
            try:
                run = super().get(run_id) if (self.runs_dir / run_id).is_dir() else None
            except StoreError:
                run = None
            if run is None:
                ids = [r.id for r in self.list_runs() if r.id.startswith(run_id)]
                run = super().get(ids[0]) if len(ids) == 1 else None
            if run is not None and not run.bundled and run.meta.get("project") in allowed:
                return run
        raise StoreError(f"no run {run_id!r} in your projects")
