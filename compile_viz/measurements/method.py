"""How a latency was measured (measure.json's `method`), and who sets the pace of a compiled call
(`LaunchBound`): the records. What a measurement says of them, its method inferred for a file
from before issue 17 included, is in measurement.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compile_viz.measurements.json_fields import as_bool, as_dict, as_int, as_num, as_str

# The share of a compiled call the GPU is busy running kernels: below this, launch-bound
LAUNCH_BOUND_BUSY = 0.5
GPU_BOUND_BUSY = 0.8


@dataclass(frozen=True, slots=True)
class Method:
    """measure.json's `method`: what was timed and how (recorded=False: inferred for an older file)."""

    recorded: bool = True
    timed: str | None = None
    clock: str | None = None
    rounds: int | None = None
    calls_per_round: tuple[tuple[str, int], ...] = ()
    interleaved: bool | None = None
    warmup: str | None = None
    l2_flushed: bool | None = None
    cuda_graphs: bool | None = None
    interval: str | None = None
    cpu_time: str | None = None
    exclusive: bool | None = None
    load_avg_1m: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> Method | None:
        if not isinstance(data, dict):
            return None
        calls = data.get("calls_per_round")
        calls = tuple((str(k), v) for k, v in as_dict(calls).items() if as_int(v) is not None)
        return cls(recorded=True, timed=as_str(data.get("timed")), clock=as_str(data.get("clock")),
                   rounds=as_int(data.get("rounds")), calls_per_round=calls,
                   interleaved=as_bool(data.get("interleaved")), warmup=as_str(data.get("warmup")),
                   l2_flushed=as_bool(data.get("l2_flushed")), cuda_graphs=as_bool(data.get("cuda_graphs")),
                   interval=as_str(data.get("interval")), cpu_time=as_str(data.get("cpu_time")),
                   exclusive=as_bool(data.get("exclusive")), load_avg_1m=as_num(data.get("load_avg_1m")))

    def line(self) -> str:
        """Return the method in one sentence, for the Viewer, the CLI and a comparison."""
        if not self.recorded:
            clock = f"; {self.clock}" if self.clock else ""
            flushed = ", L2 flushed before each call" if self.l2_flushed else ""
            return (f"one run of calls per variant, no rounds and no interval (captured before intervals were "
                    f"recorded){clock}{flushed}")
        calls = " / ".join(f"{n} {k}" for k, n in self.calls_per_round)
        parts = [f"{self.rounds or '?'} rounds" + (" of eager and compiled interleaved" if self.interleaved else ""),
                 f"{calls} calls a round" if calls else "", self.clock or ""]
        if "CUDA" in (self.clock or ""):  # a CPU has neither
            parts += ["L2 flushed before each call" if self.l2_flushed else "L2 not flushed",
                      "CUDA graphs" if self.cuda_graphs else "no CUDA graphs"]
        parts += ["warm-up discarded", f"interval: {self.interval}" if self.interval else ""]
        return "; ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class LaunchBound:
    """CPU vs GPU per compiled call: who sets the pace."""

    bound: str  # "launch-bound", "GPU-bound" or "mixed"
    latency_ms: float
    gpu_ms: float  # summed kernel time per call (torch.profiler)
    cpu_ms: float | None  # CPU time to issue one call; None in files from before issue 17
    launches: float | None  # kernels per call
    cuda_graphs: bool | None

    @property
    def idle_ms(self) -> float:
        """Return the time per call the GPU waits for the CPU: latency minus kernel time (>= 0)."""
        return max(0.0, self.latency_ms - self.gpu_ms)

    @property
    def busy(self) -> float:
        """Return the share of a call the GPU spends running kernels."""
        return min(1.0, self.gpu_ms / self.latency_ms) if self.latency_ms else 0.0
