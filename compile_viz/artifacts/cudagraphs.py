"""Why CUDA graphs were skipped: Inductor's `[__cudagraphs]` warnings in a process's stderr.

Under mode="reduce-overhead", Inductor records a graph's launches as a CUDA graph, unless something in
the graph forbids it; then it logs, once per graph,

    W1126 23:19:00.980000 20201 torch/_inductor/cudagraph_utils.py:207] [__cudagraphs] skipping
        cudagraphs due to mutated inputs (1 instances). Found from :
    W1126 ... [__cudagraphs]    File "/work/m.py", line 11, in forward
    W1126 ... [__cudagraphs]     total.add_(x.relu())

(one line each), and runs the graph's kernels one launch at a time, as mode="default" does. Nothing
else keeps the reason: torch 2.11's compilation metrics leave `cudagraph_skip_reason` null, and the
TORCH_TRACE log has no entry for it. So it is read here from the capture child's (or a recorded
job's) stderr. Stdlib only; a line that does not read as expected is skipped (the reason line alone
is enough).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# torch's line prefix (under torch.distributed with the rank first), then the logger's tag
_LINE = re.compile(r"^(?:\[rank(\d+)\]:)?[VIWEDC]\d{4} [\d:.]+ +\d+ [^\]]*\] (?:\[[^\]]*\] )?\[__cudagraphs\] ?(.*)$")
_SKIP = re.compile(r"^skipping cudagraphs due to (.*?)\.?(?: Found from :)?\s*$")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)\s*$')


@dataclass(frozen=True)
class CudagraphSkip:
    """One graph that ran without CUDA graphs, and why, in Inductor's words."""

    reason: str  # "mutated inputs (1 instances)", "cpu device (arg3_1)", "non-cuda ops", ...
    file: str | None  # the user's line that caused it, when Inductor found one ("Found from :")
    line: int | None
    function: str | None
    code: str | None
    rank: int | None  # a recorded multi-rank job's rank (torch's `[rankN]:` prefix), else None
    log: str  # the stderr file, and its line of the warning
    log_line: int


def cudagraph_skips(text: str, log: str = "stderr.txt") -> tuple[CudagraphSkip, ...]:
    """Return the CUDA-graph skips `text` (a process's stderr) reports, in order, one per warning."""
    out: list[CudagraphSkip] = []
    current: dict | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        m = _LINE.match(raw)
        if m is None:
            continue
        rank, body = m.group(1), m.group(2)
        skip = _SKIP.match(body)
        if skip:
            if current:
                out.append(CudagraphSkip(**current))
            current = {"reason": skip.group(1).strip(), "file": None, "line": None, "function": None, "code": None,
                       "rank": int(rank) if rank is not None else None, "log": log, "log_line": number}
            continue
        if current is None or current["code"] is not None:
            continue
        frame = _FRAME.match(body)
        if frame and current["file"] is None:
            current.update(file=frame.group(1), line=int(frame.group(2)), function=frame.group(3))
        elif current["file"] is not None and body.strip():
            current["code"] = body.strip()
    if current:
        out.append(CudagraphSkip(**current))
    return tuple(out)


def run_cudagraph_skips(run_dir: str | Path) -> tuple[CudagraphSkip, ...]:
    """Return the skips of a stored run: its capture child's logs/stderr.txt, or each stderr file a
    recorded job kept under logs/ (a missing or unreadable file: none)."""
    logs = Path(run_dir) / "logs"
    out: list[CudagraphSkip] = []
    try:
        files = sorted(p for p in logs.rglob("*stderr*") if p.is_file())
    except OSError:
        return ()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "[__cudagraphs]" in text:
            out.extend(cudagraph_skips(text, str(path.relative_to(logs.parent))))
    return tuple(out)
