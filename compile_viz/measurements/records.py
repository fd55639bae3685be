"""The parts of measure.json as typed records (kernel costs, latencies, profiles, correctness,
bandwidth), and the summary meta.json keeps under `measure`. `from_json` is tolerant: a missing key
or a value of the wrong type becomes None (or an empty tuple), never an exception."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from compile_viz.measurements.json_fields import as_bool as _bool
from compile_viz.measurements.json_fields import as_dict as _dict
from compile_viz.measurements.json_fields import as_int as _int
from compile_viz.measurements.json_fields import as_list as _list
from compile_viz.measurements.json_fields import as_num as _num
from compile_viz.measurements.json_fields import as_str as _str
from compile_viz.measurements.ladder import Ladder, headline_note


@dataclass(frozen=True, slots=True)
class KernelCost:
    """One kernel's cost per call in one graph (a row of measure.json's kernels.graphs.*.kernels)."""

    kernel: str
    kind: str
    launches_in_code: int | None = None
    bytes_per_launch: int | None = None
    time_us: float | None = None  # None: not seen in the profile
    count_per_call: float | None = None
    share: float | None = None  # of the compiled kernel time
    gbps: float | None = None
    library_kernels: tuple[tuple[str, float], ...] = ()  # e.g. the cuBLAS kernels behind extern_kernels.mm

    @classmethod
    def from_json(cls, data: Any) -> KernelCost:
        d = _dict(data)
        library = tuple((k, v) for k, v in _dict(d.get("library_kernels")).items() if _num(v) is not None)
        return cls(kernel=_str(d.get("kernel")) or "?", kind=_str(d.get("kind")) or "extern",
                   launches_in_code=_int(d.get("launches_in_code")), bytes_per_launch=_int(d.get("bytes_per_launch")),
                   time_us=_num(d.get("time_us")), count_per_call=_num(d.get("count_per_call")),
                   share=_num(d.get("share")), gbps=_num(d.get("gbps")), library_kernels=library)


@dataclass(frozen=True, slots=True)
class GraphCosts:
    """The kernels of one compiled graph with their costs, most expensive first."""

    name: str  # the graph's folder name, e.g. model__0_forward_1.0
    kernels: tuple[KernelCost, ...]
    time_us: float | None = None
    invocations_per_call: float | None = None

    @classmethod
    def from_json(cls, name: str, data: Any) -> GraphCosts:
        d = _dict(data)
        return cls(name=name, kernels=tuple(KernelCost.from_json(r) for r in _list(d.get("kernels"))),
                   time_us=_num(d.get("time_us")), invocations_per_call=_num(d.get("invocations_per_call")))

    def kernel(self, name: str | None) -> KernelCost | None:
        """Return the row of the kernel called `name`, or None."""
        return next((k for k in self.kernels if k.kernel == name), None)


@dataclass(frozen=True, slots=True)
class OutsideCost:
    """Time per call in an op outside every compiled graph."""

    op: str
    time_us: float | None = None
    count_per_call: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> OutsideCost:
        d = _dict(data)
        return cls(op=_str(d.get("op")) or "?", time_us=_num(d.get("time_us")),
                   count_per_call=_num(d.get("count_per_call")))


@dataclass(frozen=True, slots=True)
class Latency:
    """Steady-state time per call of one variant (eager or compiled), warm-up discarded."""

    median_ms: float | None = None
    p10_ms: float | None = None
    p90_ms: float | None = None
    min_ms: float | None = None
    mean_ms: float | None = None
    stdev_ms: float | None = None
    calls: int | None = None
    warmup_calls: int | None = None
    method: str | None = None
    note: str | None = None
    ci_low_ms: float | None = None  # the median's interval (issue 17); None in older files
    ci_high_ms: float | None = None
    rounds: int | None = None
    calls_per_round: int | None = None
    round_medians_ms: tuple[float, ...] = ()

    @classmethod
    def from_json(cls, data: Any) -> Latency | None:
        if not isinstance(data, dict):
            return None
        nums = ("median_ms", "p10_ms", "p90_ms", "min_ms", "mean_ms", "stdev_ms", "ci_low_ms", "ci_high_ms")
        return cls(**{k: _num(data.get(k)) for k in nums},
                   calls=_int(data.get("calls")), warmup_calls=_int(data.get("warmup_calls")),
                   method=_str(data.get("method")), note=_str(data.get("note")), rounds=_int(data.get("rounds")),
                   calls_per_round=_int(data.get("calls_per_round")),
                   round_medians_ms=tuple(x for x in _list(data.get("round_medians_ms")) if _num(x) is not None))

    @property
    def interval(self) -> tuple[float, float] | None:
        """Return (lower, upper) of the median when the file has a sane one, else None."""
        return _interval(self.ci_low_ms, self.median_ms, self.ci_high_ms)


@dataclass(frozen=True, slots=True)
class Profile:
    """Kernel counts per call of one variant, from torch.profiler."""

    steps: int | None = None
    kernels_per_call: float | None = None
    kernels_in_graphs_per_call: float | None = None
    device_time_per_call_us: float | None = None
    memcpy_memset_per_call: float | None = None
    graph_calls_per_call: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> Profile | None:
        if not isinstance(data, dict):
            return None
        return cls(steps=_int(data.get("steps")),
                   **{k: _num(data.get(k)) for k in ("kernels_per_call", "kernels_in_graphs_per_call",
                                                     "device_time_per_call_us", "memcpy_memset_per_call",
                                                     "graph_calls_per_call")})


@dataclass(frozen=True, slots=True)
class Variant:
    """Eager or compiled: its latency and its profile (None when that part failed)."""

    latency: Latency | None = None
    profile: Profile | None = None

    @classmethod
    def from_json(cls, data: Any) -> Variant:
        d = _dict(data)
        return cls(latency=Latency.from_json(d.get("latency")), profile=Profile.from_json(d.get("profile")))


def _interval(lo: float | None, mid: float | None, hi: float | None) -> tuple[float, float] | None:
    """(lo, hi) when all three are recorded and lo <= mid <= hi, else None."""
    if lo is None or hi is None or mid is None or not lo <= mid <= hi:
        return None
    return lo, hi


def _value(value: Any) -> float | str | None:
    """Return a tensor element as stored: a number, or "nan" / "inf" as text."""
    return _num(value) if _num(value) is not None else _str(value)


@dataclass(frozen=True, slots=True)
class Check:
    """One output or gradient, compiled vs the reference (verify/accuracy.py decides)."""

    what: str  # its path: "logits", "output[0]", "grad of transformer.h.3.attn.c_attn.weight"
    ok: bool | None = None
    shape: tuple[int, ...] = ()
    dtype: str | None = None
    max_abs: float | None = None  # compiled vs the reference (float64 when there was one)
    max_rel: float | None = None
    rtol: float | None = None  # older captures
    atol: float | None = None
    note: str | None = None
    rule: str | None = None  # what decided: allclose, rmse vs float64, cosine similarity, exact
    tol: float | None = None
    eager_max_abs: float | None = None  # eager vs the float64 reference: the reference's own error
    rmse: float | None = None
    eager_rmse: float | None = None
    multiplier: float | None = None
    cosine: float | None = None
    index: tuple[int, ...] = ()  # of the worst element, when it failed
    eager: float | str | None = None
    compiled: float | str | None = None
    fp64: float | str | None = None
    hint: str | None = None

    @classmethod
    def from_json(cls, data: Any) -> Check:
        d = _dict(data)
        nums = ("max_abs", "max_rel", "rtol", "atol", "tol", "eager_max_abs", "rmse", "eager_rmse", "multiplier",
                "cosine")
        return cls(what=_str(d.get("what")) or "?", ok=_bool(d.get("ok")),
                   shape=tuple(s for s in _list(d.get("shape")) if _int(s) is not None), dtype=_str(d.get("dtype")),
                   note=_str(d.get("note")), rule=_str(d.get("rule")), hint=_str(d.get("hint")),
                   index=tuple(i for i in _list(d.get("index")) if _int(i) is not None),
                   **{k: _num(d.get(k)) for k in nums}, **{k: _value(d.get(k)) for k in ("eager", "compiled", "fp64")})


@dataclass(frozen=True, slots=True)
class Correctness:
    """Compiled vs eager outputs (and gradients of a training step), judged like PyTorch's accuracy harness."""

    ok: bool | None = None  # None: not compared, or not comparable
    status: str | None = None  # "ok", "wrong", "not comparable"
    note: str | None = None  # the first failure with its hint, or why the runs are not comparable
    method: tuple[tuple[str, str], ...] = ()  # seed, rng, reference, rule: how it was checked
    compared: int | None = None
    failed: int | None = None
    first_failure: Check | None = None
    checks: tuple[Check, ...] = ()
    max_abs: float | None = None
    max_rel: float | None = None
    eager_max_abs: float | None = None
    worst: str | None = None
    grads_compared: bool | None = None
    model_draws_random: bool | None = None
    ladder: Ladder | None = None  # issue 27: where a wrong result starts; None when not run

    @classmethod
    def from_json(cls, data: Any) -> Correctness | None:
        if not isinstance(data, dict):
            return None
        first = data.get("first_failure")
        status = _str(data.get("status"))
        if status is None and _bool(data.get("ok")) is not None:  # captures before issue 16
            status = "ok" if data["ok"] else "wrong"
        return cls(ok=_bool(data.get("ok")), status=status, note=_str(data.get("note")),
                   method=tuple((str(k), str(v)) for k, v in _dict(data.get("method")).items()),
                   compared=_int(data.get("compared")), failed=_int(data.get("failed")),
                   first_failure=Check.from_json(first) if isinstance(first, dict) else None,
                   checks=tuple(Check.from_json(c) for c in _list(data.get("checks"))),
                   max_abs=_num(data.get("max_abs")), max_rel=_num(data.get("max_rel")),
                   eager_max_abs=_num(data.get("eager_max_abs")), worst=_str(data.get("worst")),
                   grads_compared=_bool(data.get("grads_compared")),
                   model_draws_random=_bool(data.get("model_draws_random")),
                   ladder=Ladder.from_json(data.get("ladder")))

    def method_line(self) -> str:
        """Return how the check was made, on one line ("" for older captures)."""
        d = dict(self.method)
        return "; ".join(d[k] for k in ("reference", "rng", "rule") if d.get(k))


@dataclass(frozen=True, slots=True)
class Bandwidth:
    """The device's peak (data sheet) and a measured large copy, in GB/s read + written."""

    peak_gbps: float | None = None
    peak_source: str | None = None
    copy_gbps: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> Bandwidth:
        d = _dict(data)
        return cls(peak_gbps=_num(d.get("peak_gbps")), peak_source=_str(d.get("peak_source")),
                   copy_gbps=_num(d.get("copy_gbps")))


@dataclass(frozen=True, slots=True)
class MeasureSummary:
    """The few numbers meta.json keeps under `measure`: enough for the verdict and the runs list."""

    file: str | None = None
    ok: bool | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    speedup: float | None = None
    eager_median_ms: float | None = None
    compiled_median_ms: float | None = None
    compile_s: float | None = None
    device: str | None = None
    device_name: str | None = None
    eager_kernels_per_call: float | None = None
    compiled_kernels_per_call: float | None = None
    peak_gbps: float | None = None
    copy_gbps: float | None = None
    errors: int | None = None  # how many parts of the measurement failed (their text is in measure.json)
    correctness: str | None = None  # "ok", "wrong", "not comparable"
    correctness_note: str | None = None  # the first failure and its hint, or why not comparable
    correctness_method: str | None = None  # reference, randomness, rule, on one line
    eager_max_abs: float | None = None  # eager's own error against the float64 reference
    # issue 17: the intervals (None in older captures), the rounds, and who sets the pace
    speedup_low: float | None = None
    speedup_high: float | None = None
    eager_low_ms: float | None = None
    eager_high_ms: float | None = None
    compiled_low_ms: float | None = None
    compiled_high_ms: float | None = None
    rounds: int | None = None
    bound: str | None = None  # "launch-bound", "GPU-bound", "mixed"; None on a CPU or when unknown
    # issue 27: the backend ladder's first stage that differs ("" when every stage agreed), its line
    ladder_first: str | None = None
    ladder_note: str | None = None

    @classmethod
    def from_json(cls, data: Any) -> MeasureSummary | None:
        if not isinstance(data, dict) or not data:
            return None
        kinds = {"file": _str, "ok": _bool, "device": _str, "device_name": _str, "errors": _int,
                 "correctness": _str, "correctness_note": _str, "correctness_method": _str, "rounds": _int,
                 "bound": _str, "ladder_first": _str, "ladder_note": _str}
        fields = {name: kinds.get(name, _num)(data.get(name)) for name in cls.__dataclass_fields__}
        if fields["correctness"] is None and fields["ok"] is not None:  # captures before issue 16
            fields["correctness"] = "ok" if fields["ok"] else "wrong"
        return cls(**fields)

    def to_json(self) -> dict[str, Any]:
        """Return the dict meta.json stores."""
        return asdict(self)

    @property
    def headline(self) -> str | None:
        """Return the correctness note to show first: the first failure and a hint that follows the ladder."""
        return headline_note(self.correctness_note, self.ladder_first) if self.correctness == "wrong" else (
            self.correctness_note)

    @property
    def wrong_badge(self) -> str:
        """Return "✗ wrong" (and where the ladder says it starts) for a run whose compiled results are wrong, else ""."""
        if self.correctness != "wrong":
            return ""
        return f"✗ wrong, first differs at {self.ladder_first}" if self.ladder_first else "✗ wrong"

    @property
    def speedup_interval(self) -> tuple[float, float] | None:
        """Return (lower, upper) of the speedup when recorded and sane, else None (older captures)."""
        return _interval(self.speedup_low, self.speedup, self.speedup_high)

    def clear_difference(self) -> bool | None:
        """Return False when the speedup's interval includes 1.0, True when it does not, None without one."""
        interval = self.speedup_interval
        return None if interval is None else not interval[0] <= 1.0 <= interval[1]
