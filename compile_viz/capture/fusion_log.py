"""The fusion log of a capture: what `TORCH_LOGS="+fusion"` shows, kept in `logs/fusion.log`.

Inductor's scheduler logs every fusion round, every pair it fused and every pair it considered
and refused, with the reason, to the `fusion` artifact logger. The capture child sends that one
logger, and only it, to a file of its own: torch's other logging (stderr, the TORCH_TRACE
handler) is left as it was, and nothing more is printed. Each line is what torch's own
formatter writes (`V1123 ... scheduler.py:5748] [0/0] [__fusion] fusing op2 with op3`); a line
`# graph: model__0_forward_1.0` marks where the log of each graph's compile begins, since the
forward and the backward graph of one frame share a compile id. Runs in the child only
(imports torch).
"""

from __future__ import annotations

import logging
from pathlib import Path

FUSION_LOGGER = "torch._inductor.scheduler.__fusion"  # getArtifactLogger("torch._inductor.scheduler", "fusion")
GRAPH_MARK = "# graph: "


class _FusionFile(logging.Handler):
    """Writes the fusion records, each preceded by a graph mark when the graph changes."""

    def __init__(self, path: Path) -> None:
        super().__init__(logging.DEBUG)
        self.stream = open(path, "a", encoding="utf-8")  # noqa: SIM115  (closed in close())
        self.graph = None
        try:  # torch's own line format: prefix, compile id, artifact name
            from torch._logging._internal import TorchLogsFormatter

            self.setFormatter(TorchLogsFormatter())
        except Exception:
            self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            graph = _current_graph()
            if graph != self.graph:
                self.graph = graph
                self.stream.write(f"{GRAPH_MARK}{graph}\n")
            self.stream.write(self.format(record) + "\n")
        except Exception:  # the log must never break a compile
            pass

    def flush(self) -> None:
        try:
            self.stream.flush()
        except Exception:
            pass

    def close(self) -> None:
        try:
            self.stream.close()
        finally:
            super().close()


def _current_graph() -> str:
    """The graph folder (`model__0_forward_1.0`) of the compile in progress, or "" when unknown."""
    try:
        from torch._inductor.virtualized import V

        path = getattr(V.debug, "_path", None)
        return Path(path).name if path else ""
    except Exception:
        return ""


def install(run_dir: Path) -> logging.Handler | None:
    """Send Inductor's fusion log to `run_dir/logs/fusion.log`; None when torch has no such logger."""
    try:
        import torch._inductor.scheduler  # noqa: F401  (creates the artifact logger)
    except Exception:
        return None
    logs = run_dir / "logs"
    logs.mkdir(exist_ok=True)
    handler = _FusionFile(logs / "fusion.log")
    logger = logging.getLogger(FUSION_LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False  # not to torch's stderr handler: the log goes to its file only
    return handler
