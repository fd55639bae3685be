"""measure.json as one record, `Measurement`, and what follows from it: how its latency was timed
(the recorded method, or the one inferred for a file from before issue 17, so that the Viewer can
say "no interval" rather than crash), whether it is launch-bound, and whether two runs' timings
compare. The capture child writes measure.json (`verify/measure.py`); this package is the one
place that reads it, tolerant like the artifact parsers, since a run folder may come from an
older capture or from someone else's zip.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compile_viz.measurements.json_fields import as_bool as _bool
from compile_viz.measurements.json_fields import as_dict as _dict
from compile_viz.measurements.json_fields import as_int as _int
from compile_viz.measurements.json_fields import as_list as _list
from compile_viz.measurements.json_fields import as_num as _num
from compile_viz.measurements.json_fields import as_str as _str
from compile_viz.measurements.method import GPU_BOUND_BUSY, LAUNCH_BOUND_BUSY, LaunchBound, Method
from compile_viz.measurements.records import (
    Bandwidth,
    Correctness,
    GraphCosts,
    Latency,
    MeasureSummary,
    OutsideCost,
    Variant,
)

FILE = "measure.json"  # beside meta.json in a run folder


@dataclass(frozen=True, slots=True)
class Measurement:
    """measure.json: eager vs compiled on one input set, and where the compiled time goes."""

    schema: int | None = None
    device: str | None = None  # "cuda", "cpu", ...
    device_name: str | None = None
    train: bool | None = None
    dtype: str | None = None
    compile_s: float | None = None
    input_set: int | None = None
    errors: tuple[str, ...] = ()  # "part: ExceptionType: message" for each part that failed
    correctness: Correctness | None = None
    eager: Variant = Variant()
    compiled: Variant = Variant()
    graphs: tuple[GraphCosts, ...] = ()
    outside: tuple[OutsideCost, ...] = ()
    total_in_graphs_us: float | None = None
    total_outside_us: float | None = None
    bandwidth: Bandwidth = Bandwidth()
    speedup: float | None = None
    speedup_low: float | None = None  # issue 17: the speedup's interval over paired rounds
    speedup_high: float | None = None
    speedup_rounds: tuple[float, ...] = ()
    method: Method | None = None  # None in older files: see timing()
    cpu_per_call: Latency | None = None  # CPU time to issue one compiled call (GPU runs only)

    @classmethod
    def from_json(cls, data: Any) -> Measurement:
        d = _dict(data)
        kernels = _dict(d.get("kernels"))
        paired = _dict(d.get("speedup_interval"))
        return cls(
            schema=_int(d.get("schema")), device=_str(d.get("device")), device_name=_str(d.get("device_name")),
            train=_bool(d.get("train")), dtype=_str(d.get("dtype")), compile_s=_num(d.get("compile_s")),
            input_set=_int(d.get("input_set")), errors=tuple(e for e in _list(d.get("errors")) if isinstance(e, str)),
            correctness=Correctness.from_json(d.get("correctness")),
            eager=Variant.from_json(d.get("eager")), compiled=Variant.from_json(d.get("compiled")),
            graphs=tuple(GraphCosts.from_json(str(k), v) for k, v in _dict(kernels.get("graphs")).items()),
            outside=tuple(OutsideCost.from_json(r) for r in _list(kernels.get("outside"))),
            total_in_graphs_us=_num(kernels.get("total_in_graphs_us")),
            total_outside_us=_num(kernels.get("total_outside_us")),
            bandwidth=Bandwidth.from_json(d.get("bandwidth")), speedup=_num(d.get("speedup")),
            speedup_low=_num(paired.get("low")), speedup_high=_num(paired.get("high")),
            speedup_rounds=tuple(x for x in _list(paired.get("rounds")) if _num(x) is not None),
            method=Method.from_json(d.get("method")), cpu_per_call=Latency.from_json(d.get("cpu_per_call")),
        )

    def timing(self) -> Method:
        """Return how the latency was measured: the recorded method, or the one inferred for an older file."""
        return method_of(self)

    def launch(self) -> LaunchBound | None:
        """Return CPU vs GPU per compiled call (GPU runs), or None."""
        return launch_bound(self)

    def launch_overhead_us(self, graph_id: str) -> float | None:
        """Return this graph's part of the time per call the GPU waits for launches, or None."""
        return launch_overhead_us(self, graph_id)

    def graph_costs(self, graph_id: str) -> GraphCosts | None:
        """Return the costs of a graph id (the folder name, or an id ending in it, as discovery makes), or None."""
        for g in self.graphs:
            if g.name == graph_id:
                return g
        return next((g for g in self.graphs if graph_id.endswith(g.name) or g.name.endswith(graph_id)), None)

    def summary(self) -> MeasureSummary:
        """Return the summary meta.json keeps under `measure`."""
        corr = self.correctness or Correctness()
        eager, compiled = self.eager, self.compiled
        return MeasureSummary(
            file=FILE, ok=corr.ok, max_abs=corr.max_abs, max_rel=corr.max_rel, speedup=self.speedup,
            eager_median_ms=eager.latency.median_ms if eager.latency else None,
            compiled_median_ms=compiled.latency.median_ms if compiled.latency else None,
            compile_s=self.compile_s, device=self.device, device_name=self.device_name,
            eager_kernels_per_call=eager.profile.kernels_per_call if eager.profile else None,
            compiled_kernels_per_call=compiled.profile.kernels_per_call if compiled.profile else None,
            peak_gbps=self.bandwidth.peak_gbps, copy_gbps=self.bandwidth.copy_gbps, errors=len(self.errors),
            correctness=corr.status, correctness_note=corr.note, correctness_method=corr.method_line() or None,
            eager_max_abs=corr.eager_max_abs, speedup_low=self.speedup_low, speedup_high=self.speedup_high,
            eager_low_ms=eager.latency.ci_low_ms if eager.latency else None,
            eager_high_ms=eager.latency.ci_high_ms if eager.latency else None,
            compiled_low_ms=compiled.latency.ci_low_ms if compiled.latency else None,
            compiled_high_ms=compiled.latency.ci_high_ms if compiled.latency else None,
            rounds=compiled.latency.rounds if compiled.latency else None,
            # older files keep the summary they were written with; the Viewer reads their verdict from launch()
            bound=bound.bound if self.method is not None and (bound := self.launch()) else None,
            ladder_first=(corr.ladder.first or "") if corr.ladder else None,
            ladder_note=corr.ladder.note if corr.ladder else None)


def read_measurement(folder: str | Path) -> Measurement | None:
    """Return a run folder's measure.json, or None when the run was not measured or the file is unreadable."""
    try:
        with open(Path(folder) / FILE, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return Measurement.from_json(data) if isinstance(data, dict) else None


def read_run(folder: str | Path | None, meta: Any) -> tuple[MeasureSummary | None, Measurement | None]:
    """Return (summary, full measurement) of a run: meta.json's summary, else one made from measure.json."""
    full = read_measurement(folder) if folder else None
    summary = MeasureSummary.from_json(_dict(meta).get("measure"))
    if summary is not None and full is not None and summary.bound is not None:
        summary = replace(summary, bound=full.summary().bound)  # a verdict: today's rule, not the capture's
    return summary or (full.summary() if full else None), full


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
