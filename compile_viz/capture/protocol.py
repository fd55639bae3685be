"""What parent and child say to each other: progress lines on stdout, a result file at the end."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PROGRESS_PREFIX = "@@compile_viz "  # a progress line is this prefix + one JSON object
PHASES = ("starting", "loading", "building", "exporting", "compiling", "running", "measuring", "profiling", "done", "stored")
REQUEST_FILE = "request.json"  # in the run's logs/ folder
RESULT_FILE = "result.json"


@dataclass(frozen=True)
class Progress:
    """One step of a capture, relayed to the caller's callback."""

    phase: str
    elapsed_s: float
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def format_progress(phase: str, elapsed_s: float, message: str = "", **data: Any) -> str:
    payload = {"phase": phase, "elapsed": round(elapsed_s, 3), "message": message, **data}
    return PROGRESS_PREFIX + json.dumps(payload, default=str)


def parse_progress(line: str) -> Progress | None:
    """Return the Progress on a child stdout line, or None for any other line."""
    if not line.startswith(PROGRESS_PREFIX):
        return None
    try:
        d = json.loads(line[len(PROGRESS_PREFIX):])
        phase, elapsed = str(d.pop("phase")), float(d.pop("elapsed", 0.0))
        return Progress(phase, elapsed, str(d.pop("message", "")), d)
    except (ValueError, KeyError, TypeError):
        return None
