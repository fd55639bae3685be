"""A capture running in a background thread, polled by the Compile page.

The thread only calls compile_viz.capture.capture (which runs torch in a child process) and
appends to lists; it never touches streamlit.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from compile_viz.capture import CaptureOptions, Progress, capture, prewarm  # noqa: F401  (prewarm: the page's)
from compile_viz.store import Run, RunStore

MAX_LOG_LINES = 200


@dataclass
class CaptureJob:
    model: str
    options: CaptureOptions
    started: float = field(default_factory=time.monotonic)
    cancel: threading.Event = field(default_factory=threading.Event)
    progress: list[Progress] = field(default_factory=list)
    run: Run | None = None
    error: str = ""
    thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self.thread is not None and not self.thread.is_alive()

    @property
    def phase(self) -> str:
        return self.progress[-1].phase if self.progress else "starting"

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def log_lines(self) -> list[str]:
        return [f"{p.elapsed_s:7.1f}s  {p.phase:<10} {p.message}" for p in self.progress[-MAX_LOG_LINES:]]


def start(model: str, options: CaptureOptions, store: RunStore) -> CaptureJob:
    """Return a started job compiling `model`."""
    job = CaptureJob(model, options)

    def work() -> None:
        try:
            job.run = capture(model, options, store=store, on_progress=job.progress.append, cancel=job.cancel,
                              warm=True)
        except Exception as e:  # capture() stores failures itself; this is its own machinery failing
            job.error = f"{type(e).__name__}: {e}"

    job.thread = threading.Thread(target=work, name=f"capture-{model}", daemon=True)
    job.thread.start()
    return job
