"""The two runs' numbers side by side, with deltas: per run, and per pair of graphs."""

from __future__ import annotations

from dataclasses import dataclass

from compile_viz.compare.sides import Side
from compile_viz.linking.model import GraphIndex
from compile_viz.measurements import GraphCosts, MeasureSummary, comparable


@dataclass(frozen=True, slots=True)
class Row:
    """One number of both runs. `better` says which way is good: "lower", "higher" or "" (neither)."""

    label: str
    a: float | None
    b: float | None
    unit: str = ""
    better: str = ""
    digits: int = 0  # decimals shown
    help: str = ""

    @property
    def delta(self) -> float | None:
        """Return b - a (0 when equal), None when either side lacks the number."""
        if self.a is None or self.b is None:
            return None
        return round(self.b - self.a, 9)

    @property
    def verdict(self) -> str:
        """Return "better", "worse" or "" for B against A."""
        d = self.delta
        if not d or not self.better:
            return ""
        return "better" if (d < 0) == (self.better == "lower") else "worse"

    def text(self, value: float | None) -> str:
        return "-" if value is None else f"{value:,.{self.digits}f}{self.unit}"

    def delta_text(self) -> str:
        d = self.delta
        if d is None:
            return ""
        if d == 0:
            return "="
        pct = f" ({d / self.a:+.0%})" if self.a else ""
        return f"{d:+,.{self.digits}f}{self.unit}{pct}"


def run_rows(a: Side, b: Side) -> list[Row]:
    """Return the per-run rows: graphs, compile time, graph breaks; latency, speedup and kernels per
    call when both runs were measured."""
    rows = [
        Row("graphs", len(a.parse.graphs), len(b.parse.graphs), help="compiled graphs (forward, backward...)"),
        Row("compile time", a.compile_s, b.compile_s, " s", "lower", 1, "first call, compile included"),
        Row("graph breaks", a.graph_breaks, b.graph_breaks, better="lower"),
    ]
    sa, sb = a.summary, b.summary
    if sa is not None and sb is not None:
        rows += [
            Row("latency (compiled)", sa.compiled_median_ms, sb.compiled_median_ms, " ms", "lower", 3,
                "median time per call of the compiled model" + _intervals(sa, sb, "compiled_low_ms",
                                                                          "compiled_high_ms", " ms")),
            Row("speedup over eager", sa.speedup, sb.speedup, "x", "higher", 2,
                "eager over compiled" + _intervals(sa, sb, "speedup_low", "speedup_high", "x")),
            Row("kernels per call", sa.compiled_kernels_per_call, sb.compiled_kernels_per_call, better="lower",
                digits=1, help="GPU kernels the compiled model launches per call (profiler)"),
        ]
    return rows


def _intervals(sa: MeasureSummary, sb: MeasureSummary, low: str, high: str, unit: str) -> str:
    """Return "; intervals A 1.2-1.4x, B none" for a row's help."""
    def one(s: MeasureSummary) -> str:
        lo, hi = getattr(s, low), getattr(s, high)
        return "none (older capture)" if lo is None or hi is None else f"{lo:.3g}-{hi:.3g}{unit}"

    return f"; intervals: A {one(sa)}, B {one(sb)}"


def failed_note(a: Side, b: Side) -> str | None:
    """One line when either run failed: which and why, and that its launches are not counted as same
    or changed (a failed run holds only the graphs compiled before it failed; matched against a
    complete run they would read as a verdict on a compile that never finished). None otherwise."""
    failed = [f"{name} failed ({side.failed})" for name, side in (("A", a), ("B", b)) if side.failed]
    if not failed:
        return None
    graphs = "their graphs are those compiled before they" if len(failed) > 1 else "its graphs are those compiled before it"
    return " and ".join(failed) + f": {graphs} failed, so launches are not counted as same or changed"


def timing_note(a: Side, b: Side) -> tuple[bool | None, str] | None:
    """Return (comparable, one sentence) on whether the two runs' timings compare; None unless both were measured."""
    if a.measurement is None or b.measurement is None:
        return None
    ok, reasons = comparable(a.measurement, b.measurement)
    if ok:
        return True, f"Timings comparable: both measured the same way ({a.measurement.timing().line()})."
    if ok is None:
        return None, "Timings may not be comparable: " + "; ".join(reasons) + "."
    return False, "Timings not comparable: " + "; ".join(reasons) + "."


def graph_rows(a: GraphIndex | None, b: GraphIndex | None, a_costs: GraphCosts | None = None,
               b_costs: GraphCosts | None = None) -> list[Row]:
    """Return the per-graph rows: FX ops, kernels, launches, extern calls, fusion groups, ops per kernel;
    the graph's GPU time when both were measured. Only times say better or worse: fewer kernels
    is no gain when a template replaced a library call."""
    sa, sb = (a.summary if a else None), (b.summary if b else None)

    def pick(name: str, side) -> float | None:
        return getattr(side, name) if side is not None else None

    rows = [Row(label, pick(name, sa), pick(name, sb), better=better, digits=digits, help=help)
            for label, name, better, digits, help in (
                ("FX ops", "fx_ops", "", 0, "call_function nodes of the AOT graph"),
                ("post-grad ops", "post_grad_ops", "", 0, "call_function nodes after Inductor's graph passes"),
                ("kernels", "kernels", "", 0, "kernel definitions in output_code.py"),
                ("launches", "launches", "", 0, "launches of generated kernels in call()"),
                ("extern calls", "extern_calls", "", 0, "library calls (mm, conv, attention...) in call()"),
                ("fusion groups", "fusion_groups", "", 0, "scheduler groups of more than one node"),
                ("ops / kernel", "ops_per_kernel", "", 1, "post-grad ops per generated-kernel launch"),
            )]
    if a_costs is not None and b_costs is not None and a_costs.time_us is not None and b_costs.time_us is not None:
        rows.append(Row("GPU time", a_costs.time_us / 1000, b_costs.time_us / 1000, " ms", "lower", 3,
                        "measured kernel time of this graph per call"))
    return rows


def row_json(row: Row) -> dict:
    return {"label": row.label, "a": row.a, "b": row.b, "delta": row.delta}
