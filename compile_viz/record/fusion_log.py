"""The fusion log of a capture: what `TORCH_LOGS="+fusion"` shows, kept in a file of its own.

Inductor's scheduler logs every fusion round, every pair it fused and every pair it considered
and refused, with the reason, to the `fusion` artifact logger. The capture child (and every
process of a recorded job, through the record hook) sends that one logger, and only it, to a file
of its own: torch's other logging (stderr, the TORCH_TRACE handler) is left as it was, and nothing
more is printed. Each line is what torch's own formatter writes (`V1123 ... scheduler.py:5748]
[0/0] [__fusion] fusing op2 with op3`); a line `# graph: model__0_forward_1.0` marks where the log
of each graph's compile begins, since the forward and the backward graph of one frame share a
compile id.

Where the file goes: a capture keeps one per run (`logs/fusion.log`); a recorded job keeps one per
process, `fusion.log` in that process's own `torch_compile_debug/run_*-pid_*` folder, so the log
sits above the graph folders it speaks of and ranks never mix. Imports torch only inside functions
(the record hook loads this file by path, before torch is imported).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

FUSION_LOGGER = "torch._inductor.scheduler.__fusion"  # getArtifactLogger("torch._inductor.scheduler", "fusion")
GRAPH_MARK = "# graph: "
FILE_NAME = "fusion.log"


class _FusionFile(logging.Handler):
    """Writes the fusion records, each preceded by a graph mark when the graph changes. The file
    is `where(graph folder path or "")`, opened on the first record (a process that compiles
    nothing writes nothing)."""

    def __init__(self, where: Callable[[str], str]) -> None:
        super().__init__(logging.DEBUG)
        self.where = where
        self.stream = None
        self.path = None
        self.graph = None
        try:  # torch's own line format: prefix, compile id, artifact name
            from torch._logging._internal import TorchLogsFormatter

            self.setFormatter(TorchLogsFormatter())
        except Exception:
            self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            graph_path = _current_graph_path()
            graph = os.path.basename(graph_path)
            path = self.where(graph_path)
            if path != self.path:
                self.close_stream()
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                self.stream, self.path, self.graph = open(path, "a", encoding="utf-8"), path, None  # noqa: SIM115
            if graph != self.graph:
                self.graph = graph
                self.stream.write(f"{GRAPH_MARK}{graph}\n")
            self.stream.write(self.format(record) + "\n")
        except Exception:  # the log must never break a compile
            pass

    def flush(self) -> None:
        try:
            if self.stream is not None:
                self.stream.flush()
        except Exception:
            pass

    def close_stream(self) -> None:
        if self.stream is not None:
            try:
                self.stream.close()
            except Exception:
                pass
            self.stream = None

    def close(self) -> None:
        try:
            self.close_stream()
        finally:
            super().close()


def _current_graph_path() -> str:
    """The graph folder (`.../torchinductor/model__0_forward_1.0`) of the compile in progress, or ""."""
    try:
        from torch._inductor.virtualized import V

        return str(getattr(V.debug, "_path", None) or "")
    except Exception:
        return ""


def beside_graphs(fallback: str) -> Callable[[str], str]:
    """Where a recorded process's log goes: `fusion.log` in the torch debug run folder above the
    graph folder (`run_*-pid_*/torchinductor/<graph>` -> `run_*-pid_*/fusion.log`), else `fallback`."""

    def where(graph_path: str) -> str:
        if graph_path:
            return os.path.join(os.path.dirname(os.path.dirname(graph_path)), FILE_NAME)
        return fallback

    return where


def attach(where: Callable[[str], str]) -> logging.Handler:
    """Send the fusion logger (torch has created it) to the files `where` names, and only there."""
    handler = _FusionFile(where)
    logger = logging.getLogger(FUSION_LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False  # not to torch's stderr handler: the log goes to its file only
    return handler


def install(run_dir) -> logging.Handler | None:
    """Send Inductor's fusion log to `run_dir/logs/fusion.log`; None when torch has no such logger."""
    try:
        import torch._inductor.scheduler  # noqa: F401  (creates the artifact logger)
    except Exception:
        return None
    path = os.path.join(str(run_dir), "logs", FILE_NAME)
    return attach(lambda _graph: path)
