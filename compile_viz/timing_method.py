"""How a latency was measured, whether a run is launch-bound, and whether two runs' timings compare.

Stdlib only, beside `measurements.py` (which reads `Method` out of measure.json). A file from
before issue 17 has no method: `inferred_method` says what its old single run of calls was, so
that the Viewer can say "no interval" rather than crash, and a comparison can say why its numbers
may not be comparable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compile_viz.json_fields import as_bool, as_dict, as_int, as_num, as_str

if TYPE_CHECKING:
    from compile_viz.measurements import Latency, Measurement

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


def inferred_method(m: Measurement) -> Method:
    """Return the method of a file without one: a single run of calls per variant, from its latency's own words."""
    lat = (m.compiled.latency or m.eager.latency)
    words = (lat.method if lat else None) or ""
    clock = "CUDA events around each call" if "cuda events" in words else "wall clock around each call" if words else None
    return Method(recorded=False, clock=clock, rounds=1, l2_flushed="L2 flushed" in words if words else None,
                  timed=("training step" if m.train else "inference") if m.train is not None else None)


def method_of(m: Measurement) -> Method:
    """Return the recorded method, or the inferred one for an older file."""
    return m.method or inferred_method(m)


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


def launch_bound(m: Measurement) -> LaunchBound | None:
    """Return who sets the pace of a compiled GPU call, or None (a CPU run, or numbers missing).

    Launch-bound when the GPU runs kernels for less than half of the measured call (the rest it
    waits for the CPU to issue them), GPU-bound from 80% up, mixed between. The CPU time per call,
    where the file has it, is shown beside it but does not decide: measured apart, with the
    profiler's own cost, it overstates the CPU's share of a short call (pointwise_chain on the
    H100: 0.075 ms of CPU per call for a 0.050 ms call the GPU is busy for 94% of).
    """
    lat, prof = m.compiled.latency, m.compiled.profile
    if not (m.device or "").startswith("cuda") or not lat or not prof:
        return None
    latency, gpu_us = lat.median_ms, prof.device_time_per_call_us
    if not latency or gpu_us is None or latency <= 0:
        return None
    gpu = gpu_us / 1e3
    cpu = m.cpu_per_call.median_ms if m.cpu_per_call else None
    busy = gpu / latency
    bound = "launch-bound" if busy < LAUNCH_BOUND_BUSY else "GPU-bound" if busy >= GPU_BOUND_BUSY else "mixed"
    method = m.method
    return LaunchBound(bound, latency, gpu, cpu, prof.kernels_per_call, method.cuda_graphs if method else None)


def launch_overhead_us(m: Measurement, graph_id: str) -> float | None:
    """Return one graph's part of the GPU's idle time per call: the idle time times its share of the launches."""
    lb = launch_bound(m)
    costs = m.graph_costs(graph_id)
    if lb is None or costs is None or lb.idle_ms <= 0:
        return None
    mine = sum(k.count_per_call or 0 for k in costs.kernels)
    total = sum(k.count_per_call or 0 for g in m.graphs for k in g.kernels) + \
        sum(o.count_per_call or 0 for o in m.outside)
    if not mine or not total:
        return None
    return lb.idle_ms * 1e3 * mine / total


def _lat_interval(lat: Latency | None) -> bool:
    return bool(lat and lat.ci_low_ms is not None and lat.ci_high_ms is not None)


def comparable(a: Measurement | None, b: Measurement | None) -> tuple[bool | None, tuple[str, ...]]:
    """Return (whether two runs' timings compare, the reasons they may not).

    False: they were measured differently (device, step, clock, L2 flush, CUDA graphs); None: either
    is unmeasured, or a method was not recorded and nothing else differs; True: same method.
    """
    if a is None or b is None:
        return None, ()
    ma, mb = method_of(a), method_of(b)
    reasons = []
    if a.device_name != b.device_name:
        reasons.append(f"different devices: {a.device_name or '?'} vs {b.device_name or '?'}")
    if a.train != b.train:
        reasons.append("one times a training step, the other inference")
    for label, x, y in (("clock", ma.clock, mb.clock), ("L2 flushed", ma.l2_flushed, mb.l2_flushed),
                        ("CUDA graphs", ma.cuda_graphs, mb.cuda_graphs)):
        if x is not None and y is not None and x != y:
            reasons.append(f"{label}: {x} vs {y}")
    if _lat_interval(a.compiled.latency) != _lat_interval(b.compiled.latency) and ma.recorded and mb.recorded:
        reasons.append("only one side has an interval")
    unknown = [f"{side}'s method was not recorded (captured before intervals: one run of calls, no interval)"
               for side, m in (("A", ma), ("B", mb)) if not m.recorded]
    if reasons:
        return False, tuple(reasons + unknown)
    return (None if unknown else True), tuple(unknown)
