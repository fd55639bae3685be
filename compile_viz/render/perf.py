"""Measurement records (compile_viz.measurements) -> Plotly figures and escaped HTML; no st.* calls.

Per-kernel time sorted and coloured by kind (customdata carries the kernel name, so a click can
select it), achieved GB/s per kernel against the GPU's peak, the eager-vs-compiled verdict, and
the one line the code pane shows for the selected kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from compile_viz.measurements import KernelCost, LaunchBound, Measurement, MeasureSummary, Method
from compile_viz.render.palette import SELECTED, kind_color, kind_label

if TYPE_CHECKING:  # plotly only where a figure is drawn: the verdict's words (a shared file) need none of it
    import plotly.graph_objects as go

SAME_WITHIN = 0.05  # without an interval (older captures), a speedup within 5% of 1 is "about the same"
OVERHEAD = "launch overhead (GPU idle)"
OVERHEAD_COLOR = "#adb5bd"


def _timed(rows: Sequence[KernelCost]) -> list[KernelCost]:
    return sorted((r for r in rows if r.time_us), key=lambda r: -r.time_us)


def _short(name: str, limit: int = 48) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def kernel_time_figure(rows: Sequence[KernelCost], *, selected: str | None = None, unit_label: str = "GPU time",
                       overhead_us: float | None = None) -> go.Figure:
    """Return a horizontal bar chart of time per call per kernel, largest on top, coloured by kind.

    `overhead_us`: this graph's part of the time per call the GPU sits idle waiting for launches,
    drawn as its own grey bar (not clickable: it is no kernel).
    """
    rows = _timed(rows)
    import plotly.graph_objects as go

    fig = go.Figure()
    if overhead_us:
        fig.add_bar(y=[OVERHEAD], x=[overhead_us], orientation="h", name=OVERHEAD, marker_color=OVERHEAD_COLOR,
                    marker_pattern_shape="/", customdata=[[""]],
                    hovertemplate="%{x:.1f} µs per call: the GPU waits for the CPU to launch kernels<br>"
                                  "(idle time per call, this graph's share of the launches)<extra></extra>")
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
    bars = [(_short(r.kernel), r.time_us) for r in rows] + ([(OVERHEAD, overhead_us)] if overhead_us else [])
    order = [label for label, _ in sorted(bars, key=lambda b: -b[1])]
    fig.update_layout(
        barmode="overlay", height=max(220, 60 + 22 * len(order)), margin=dict(l=10, r=10, t=30, b=40),
        xaxis_title=f"{unit_label} per call (µs)", legend_title_text="kind", clickmode="event+select",
        yaxis=dict(categoryorder="array", categoryarray=order[::-1], automargin=True),
        title=dict(text=f"{len(rows)} kernels by {unit_label.lower()}", font_size=13),
    )
    return fig


def bandwidth_figure(rows: Sequence[KernelCost], *, peak_gbps: float | None, copy_gbps: float | None = None,
                     selected: str | None = None) -> go.Figure:
    """Return achieved GB/s per kernel (bytes read + written over its time) with the peak as a line."""
    rows = sorted((r for r in rows if r.gbps), key=lambda r: -r.gbps)
    import plotly.graph_objects as go

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


def _ms_range(mid: float | None, lo: float | None, hi: float | None) -> str:
    """Return "0.41 ms [0.40–0.42]" (the bracket only when the interval is known)."""
    if mid is None or lo is None or hi is None:
        return _ms(mid)
    if mid < 1:
        return f"{mid * 1e3:.1f} µs [{lo * 1e3:.1f}–{hi * 1e3:.1f}]"
    return f"{mid:.2f} ms [{lo:.2f}–{hi:.2f}]"


def verdict(summary: MeasureSummary) -> tuple[str, str]:
    """Return (word, sentence): whether compiling paid off, from meta.json's `measure` summary.

    With an interval (issue 17) a speedup whose interval includes 1.0 is "no clear difference";
    without one (older captures) a speedup within SAME_WITHIN of 1 is "about the same".
    """
    s = summary.speedup
    if summary.ok is False:
        return "mismatch", ("Compiled results are wrong: they differ from eager beyond what PyTorch's accuracy "
                            "harness allows. Check before trusting the speed.")
    if s is None:
        return "unknown", "No steady-state timing was recorded."
    e, c = _ms(summary.eager_median_ms), _ms(summary.compiled_median_ms)
    interval = summary.speedup_interval
    if interval is not None:
        lo, hi = interval
        spread = f"interval {lo:.2f}–{hi:.2f}x over {summary.rounds or '?'} rounds"
        if summary.clear_difference() is False:
            return "same", (f"No clear difference: compiled {c} vs eager {e} per call; the speedup {s:.2f}x has a "
                            f"{spread} that includes 1.0.")
        if s > 1:
            return "faster", f"Compiled is {s:.2f}x faster ({spread}): {c} vs eager {e} per call."
        return "slower", (f"Compiled is slower here ({s:.2f}x, {spread}): {c} vs eager {e} per call. "
                          "Overhead outweighs fusion at this size.")
    if abs(s - 1) <= SAME_WITHIN:
        return "same", f"About the same speed: compiled {c} vs eager {e} per call."
    if s > 1:
        return "faster", f"Compiled is {s:.2f}x faster: {c} vs eager {e} per call."
    return "slower", f"Compiled is slower here ({s:.2f}x): {c} vs eager {e} per call. Overhead outweighs fusion at this size."


def _steady_help(summary: MeasureSummary) -> str:
    if summary.speedup_interval is not None or summary.compiled_low_ms is not None:
        return f"median of {summary.rounds or '?'} rounds [interval], warm-up discarded"
    return "median per call, warm-up discarded; no interval (captured before intervals were recorded)"


def summary_html(summary: MeasureSummary | None) -> str:
    """Return the eager-vs-compiled verdict as a small escaped HTML block."""
    if not summary:
        return "<div>This run was captured without measurement (capture with --measure).</div>"
    word, sentence = verdict(summary)
    color = {"faster": "#2a9d8f", "slower": "#e76f51", "mismatch": "#d62828"}.get(word, "#6c757d")
    rows = [
        ("Correctness", correctness_word(summary), _error_text(summary)),
        ("Steady state", f"{_ms_range(summary.eager_median_ms, summary.eager_low_ms, summary.eager_high_ms)} → "
                         f"{_ms_range(summary.compiled_median_ms, summary.compiled_low_ms, summary.compiled_high_ms)}",
         _steady_help(summary)),
        ("Kernels per call", f"{_num(summary.eager_kernels_per_call)} → "
                             f"{_num(summary.compiled_kernels_per_call)}", "eager → compiled, torch.profiler"),
        ("First call", _s(summary.compile_s), "compile included, not in the steady state"),
    ]
    body = "".join(f"<tr><th style='text-align:left;padding-right:10px'>{escape(a)}</th><td>{escape(b)}</td>"
                   f"<td style='color:#6c757d;padding-left:10px'>{escape(c)}</td></tr>" for a, b, c in rows)
    device = escape(str(summary.device_name or summary.device or ""))
    note = ""
    if summary.headline and summary.correctness in ("wrong", "not comparable"):
        tone = "#d62828" if summary.correctness == "wrong" else "#b5830f"
        note = f"<div style='color:{tone};font-size:13px;margin-top:4px'>{escape(summary.headline)}</div>"
    method = (f"<div style='color:#6c757d;font-size:12px'>Checked with: {escape(summary.correctness_method)}</div>"
              if summary.correctness_method else "")
    return (f"<div style='font-size:14px'><div style='font-weight:600;color:{color}'>{escape(sentence)}</div>"
            f"{note}<table style='font-size:13px;margin-top:4px'>{body}</table>{method}"
            f"<div style='color:#6c757d;font-size:12px'>{device}</div></div>")


def wrong_html(summary: MeasureSummary | None, *, compact: bool = False) -> str:
    """Return the banner at the top of a run whose compiled results are wrong: what differs, where
    the ladder says it starts and what to do next ("" for any other run). `compact`: one line, for a
    projector, where the code below must still fit the screen."""
    if summary is None or summary.correctness != "wrong":
        return ""
    if compact:
        return ("<div class='cv-wrong' style='background:#fde7e9;border:1px solid #b3261e;border-radius:6px;"
                "padding:2px 10px;color:#b3261e;white-space:nowrap;overflow:hidden;text-overflow:ellipsis' "
                f"title='{escape(summary.headline or '', quote=True)}'><b>✗ Compiled results are wrong</b>"
                f"{': ' + escape(summary.headline) if summary.headline else ''}</div>")
    note = f"<div style='font-size:13px;margin-top:2px'>{escape(summary.headline)}</div>" if summary.headline else ""
    return ("<div class='cv-wrong' style='background:#fde7e9;border:1px solid #b3261e;border-radius:6px;"
            "padding:6px 10px;color:#b3261e'><b>✗ Compiled results are wrong</b>: they differ from eager beyond "
            "what PyTorch's accuracy harness allows; do not trust this run's speed or kernels until this is "
            f"fixed. The check and the backend ladder are under \"Eager vs compiled\" below.{note}</div>")


def method_html(method: Method | None) -> str:
    """Return "Timed: …" (how the latency was measured) as a small grey line; "" without a measurement."""
    if method is None:
        return ""
    return f"<div class='cv-method' style='color:#6c757d;font-size:12px'>Timed: {escape(method.line())}</div>"


def launch_note(lb: LaunchBound | None) -> str:
    """Return the plain-words launch-bound note ("" unless the CPU sets the pace of a compiled GPU call)."""
    if lb is None or lb.bound != "launch-bound":
        return ""
    cpu = (f" The CPU needs {_ms(lb.cpu_ms)} to issue one call" + (f" ({lb.launches:g} kernel launches)."
                                                                    if lb.launches else ".")
           if lb.cpu_ms is not None else
           " (Inferred from latency against kernel time: this capture has no CPU time per call.)")
    helps = ("This run already uses CUDA graphs; bigger batches give each launch more work."
             if lb.cuda_graphs else
             "What helps: CUDA graphs (torch.compile(mode=\"reduce-overhead\")), which replay all the launches "
             "at once, and bigger batches, which give each launch more work.")
    return (f"Launch-bound: the CPU issuing kernels, not the GPU running them, sets the time. Of each "
            f"{_ms(lb.latency_ms)} call the GPU runs kernels for {_ms(lb.gpu_ms)} ({lb.busy:.0%}) and waits "
            f"for launches the rest.{cpu} Faster kernels will not make this call faster. {helps}")


def launch_html(lb: LaunchBound | None) -> str:
    """Return the launch-bound note as escaped HTML ("" when not launch-bound)."""
    text = launch_note(lb)
    return (f"<div class='cv-launch-bound' style='background:#fff3cd;border-left:4px solid #b5830f;padding:6px 8px;"
            f"font-size:13px;margin:4px 0'>{escape(text)}</div>") if text else ""


def timing_html(full: Measurement | None) -> str:
    """Return the method line and the launch-bound note of a measurement ("" without one)."""
    if full is None:
        return ""
    return method_html(full.timing()) + launch_html(full.launch())


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
