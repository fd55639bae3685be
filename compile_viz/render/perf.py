"""Measurement records (compile_viz.measurements) -> Plotly figures and escaped HTML; no st.* calls.

Per-kernel time sorted and coloured by kind (customdata carries the kernel name, so a click can
select it), achieved GB/s per kernel against the GPU's peak, the eager-vs-compiled verdict, and
the one line the code pane shows for the selected kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import plotly.graph_objects as go

from compile_viz.measurements import KernelCost, MeasureSummary
from compile_viz.render.palette import SELECTED, kind_color, kind_label

SAME_WITHIN = 0.05  # a speedup within 5% of 1 is "about the same"


def _timed(rows: Sequence[KernelCost]) -> list[KernelCost]:
    return sorted((r for r in rows if r.time_us), key=lambda r: -r.time_us)


def _short(name: str, limit: int = 48) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def kernel_time_figure(rows: Sequence[KernelCost], *, selected: str | None = None, unit_label: str = "GPU time") -> go.Figure:
    """Return a horizontal bar chart of time per call per kernel, largest on top, coloured by kind."""
    rows = _timed(rows)
    fig = go.Figure()
    for kind in dict.fromkeys(r.kind for r in rows):
        mine = [r for r in rows if r.kind == kind]
        fig.add_bar(
            y=[_short(r.kernel) for r in mine], x=[r.time_us for r in mine], orientation="h",
            name=kind_label(kind), marker_color=kind_color(kind),
            marker_line_color=[SELECTED if r.kernel == selected else "#555" for r in mine],
            marker_line_width=[3 if r.kernel == selected else 0.5 for r in mine],
            customdata=[[r.kernel, r.share or 0, r.count_per_call or 0] for r in mine],
            hovertemplate="%{customdata[0]}<br>%{x:.1f} µs per call · %{customdata[1]:.1%} of compiled kernel time"
                          "<br>%{customdata[2]} launches per call<extra></extra>",
        )
    order = [_short(r.kernel) for r in rows]
    fig.update_layout(
        barmode="overlay", height=max(220, 60 + 22 * len(rows)), margin=dict(l=10, r=10, t=30, b=40),
        xaxis_title=f"{unit_label} per call (µs)", legend_title_text="kind", clickmode="event+select",
        yaxis=dict(categoryorder="array", categoryarray=order[::-1], automargin=True),
        title=dict(text=f"{len(rows)} kernels by {unit_label.lower()}", font_size=13),
    )
    return fig


def bandwidth_figure(rows: Sequence[KernelCost], *, peak_gbps: float | None, copy_gbps: float | None = None,
                     selected: str | None = None) -> go.Figure:
    """Return achieved GB/s per kernel (bytes read + written over its time) with the peak as a line."""
    rows = sorted((r for r in rows if r.gbps), key=lambda r: -r.gbps)
    fig = go.Figure()
    fig.add_bar(
        x=[_short(r.kernel, 32) for r in rows], y=[r.gbps for r in rows],
        marker_color=[kind_color(r.kind) for r in rows],
        marker_line_color=[SELECTED if r.kernel == selected else "#555" for r in rows],
        marker_line_width=[3 if r.kernel == selected else 0.5 for r in rows],
        customdata=[[r.kernel, (r.bytes_per_launch or 0) / 1e6,
                     (r.gbps / peak_gbps) if peak_gbps else 0] for r in rows],
        hovertemplate="%{customdata[0]}<br>%{y:.0f} GB/s · %{customdata[1]:.2f} MB per launch"
                      + ("<br>%{customdata[2]:.0%} of peak" if peak_gbps else "") + "<extra></extra>",
        showlegend=False,
    )
    for value, label, dash in ((peak_gbps, "peak (data sheet)", "dash"), (copy_gbps, "measured copy", "dot")):
        if value:
            fig.add_hline(y=value, line_dash=dash, line_color="#d62828" if dash == "dash" else "#6c757d",
                          annotation_text=f"{label}: {value:,.0f} GB/s", annotation_position="top left")
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="achieved GB/s",
                      xaxis=dict(tickangle=-35, automargin=True), clickmode="event+select",
                      title=dict(text="Memory bandwidth per kernel (buffer sizes over time)", font_size=13))
    return fig


def _ms(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value * 1e3:.1f} µs" if value < 1 else f"{value:.2f} ms"


def verdict(summary: MeasureSummary) -> tuple[str, str]:
    """Return (word, sentence): whether compiling paid off, from meta.json's `measure` summary."""
    s = summary.speedup
    if summary.ok is False:
        return "mismatch", ("Compiled results are wrong: they differ from eager beyond what PyTorch's accuracy "
                            "harness allows. Check before trusting the speed.")
    if s is None:
        return "unknown", "No steady-state timing was recorded."
    e, c = _ms(summary.eager_median_ms), _ms(summary.compiled_median_ms)
    if abs(s - 1) <= SAME_WITHIN:
        return "same", f"About the same speed: compiled {c} vs eager {e} per call."
    if s > 1:
        return "faster", f"Compiled is {s:.2f}x faster: {c} vs eager {e} per call."
    return "slower", f"Compiled is slower here ({s:.2f}x): {c} vs eager {e} per call. Overhead outweighs fusion at this size."


def summary_html(summary: MeasureSummary | None) -> str:
    """Return the eager-vs-compiled verdict as a small escaped HTML block."""
    if not summary:
        return "<div>This run was captured without measurement (capture with --measure).</div>"
    word, sentence = verdict(summary)
    color = {"faster": "#2a9d8f", "slower": "#e76f51", "mismatch": "#d62828"}.get(word, "#6c757d")
    rows = [
        ("Correctness", correctness_word(summary), _error_text(summary)),
        ("Steady state", f"{_ms(summary.eager_median_ms)} → {_ms(summary.compiled_median_ms)}",
         "median per call, warm-up discarded"),
        ("Kernels per call", f"{_num(summary.eager_kernels_per_call)} → "
                             f"{_num(summary.compiled_kernels_per_call)}", "eager → compiled, torch.profiler"),
        ("First call", _s(summary.compile_s), "compile included, not in the steady state"),
    ]
    body = "".join(f"<tr><th style='text-align:left;padding-right:10px'>{escape(a)}</th><td>{escape(b)}</td>"
                   f"<td style='color:#6c757d;padding-left:10px'>{escape(c)}</td></tr>" for a, b, c in rows)
    device = escape(str(summary.device_name or summary.device or ""))
    note = ""
    if summary.correctness_note and summary.correctness in ("wrong", "not comparable"):
        tone = "#d62828" if summary.correctness == "wrong" else "#b5830f"
        note = f"<div style='color:{tone};font-size:13px;margin-top:4px'>{escape(summary.correctness_note)}</div>"
    method = (f"<div style='color:#6c757d;font-size:12px'>Checked with: {escape(summary.correctness_method)}</div>"
              if summary.correctness_method else "")
    return (f"<div style='font-size:14px'><div style='font-weight:600;color:{color}'>{escape(sentence)}</div>"
            f"{note}<table style='font-size:13px;margin-top:4px'>{body}</table>{method}"
            f"<div style='color:#6c757d;font-size:12px'>{device}</div></div>")


def correctness_word(summary: MeasureSummary) -> str:
    """Return "ok", "wrong", "not comparable: …" or "not compared" for a run's correctness check."""
    if summary.correctness == "not comparable":
        return "not comparable: the model draws random numbers"
    if summary.correctness in ("ok", "wrong"):
        return summary.correctness
    return {True: "ok", False: "wrong"}.get(summary.ok, "not compared")


def _error_text(summary: MeasureSummary) -> str:
    err = f"max abs error {summary.max_abs or 0:.2g}, relative {summary.max_rel or 0:.2g}"
    if summary.eager_max_abs is not None:
        return f"{err} against the float64 reference (eager's own: {summary.eager_max_abs:.2g})"
    return f"{err} against eager"


def _num(v) -> str:
    return "?" if v is None else f"{v:g}"


def _s(v) -> str:
    return "?" if v is None else f"{v:.1f} s"


def kernel_cost_line(row: KernelCost | None, *, peak_gbps: float | None = None) -> str:
    """Return "time, share, GB/s" of one kernel as plain text (for st.caption / the code pane)."""
    if not row or not row.time_us:
        return "not seen in the profile" if row else ""
    parts = [f"{_ms(row.time_us / 1e3)} per call", f"{row.share:.1%} of compiled kernel time"
             if row.share is not None else ""]
    if row.gbps:
        parts.append(f"{row.gbps:,.0f} GB/s" + (f" ({row.gbps / peak_gbps:.0%} of peak)" if peak_gbps else ""))
    if (row.count_per_call or 0) > 1:
        parts.append(f"{row.count_per_call:g} launches")
    return " · ".join(p for p in parts if p)
