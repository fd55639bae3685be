"""The "verify the win" panel: eager vs compiled verdict with its interval, how it was timed, the
launch-bound note, per-kernel time (launch overhead as its own bar) and bandwidth; clicks select."""

from __future__ import annotations

import streamlit as st

from compile_viz.measurements import Measurement, MeasureSummary, read_run
from compile_viz.render import perf
from compile_viz.ui.page_registry import presenting
from compile_viz.ui.runs import RunInfo


def measured(run: RunInfo) -> tuple[MeasureSummary | None, Measurement | None]:
    """Return (summary, full measurement) of a run; the full one is None without a measure.json."""
    return read_run(run.run_dir, run.meta)


def wrong_banner(run: RunInfo) -> None:
    """Say at the top of a run that its compiled results are wrong (nothing for any other run)."""
    summary, _ = measured(run)
    if banner := perf.wrong_html(summary, compact=presenting()):
        st.html(banner)


def _clicked(event) -> str | None:
    try:
        points = event.selection.points  # streamlit's PlotlyState
    except AttributeError:
        points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else []
    for p in points or []:
        data = p.get("customdata") if isinstance(p, dict) else None
        if data:
            return str(data[0])
    return None


CHARTS_OPEN_UP_TO = 60  # launches: a bigger graph shows its charts on request (Plotly is a large load)


def perf_panel(run: RunInfo, graph_id: str, selected_kernel: str | None = None, *, launches: int = 0) -> str | None:
    """Draw the panel for one graph; return the kernel name clicked in a chart, else `selected_kernel`.
    The charts of a graph of more than CHARTS_OPEN_UP_TO launches wait for a toggle."""
    summary, full = measured(run)
    st.html(perf.summary_html(summary) + perf.timing_html(full))
    costs = full.graph_costs(graph_id) if full else None
    if not costs:
        if summary:
            st.caption("No per-kernel times for this graph in measure.json.")
        return selected_kernel
    if not st.toggle(f"Per-kernel charts ({len(costs.kernels)} kernels)", value=launches <= CHARTS_OPEN_UP_TO,
                     key=f"perf_charts:{graph_id}"):
        return selected_kernel
    rows, bw = costs.kernels, full.bandwidth
    fig = perf.kernel_time_figure(rows, selected=selected_kernel,
                                  unit_label="CPU time" if full.device == "cpu" else "GPU time",
                                  overhead_us=full.launch_overhead_us(graph_id))
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=f"perf_time:{graph_id}",
                            use_container_width=True)
    clicked = _clicked(event)
    if any(r.gbps for r in rows):
        event = st.plotly_chart(perf.bandwidth_figure(rows, peak_gbps=bw.peak_gbps, copy_gbps=bw.copy_gbps,
                                                      selected=selected_kernel),
                                on_select="rerun", selection_mode="points", key=f"perf_bw:{graph_id}",
                                use_container_width=True)
        clicked = clicked or _clicked(event)
    if selected_kernel:
        st.caption(f"`{selected_kernel}`: {perf.kernel_cost_line(costs.kernel(selected_kernel), peak_gbps=bw.peak_gbps)}")
    # a chart keeps its selection across reruns: only a click that changed counts as a new choice
    last_key = f"perf_last_click:{graph_id}"
    if clicked and clicked != st.session_state.get(last_key):
        st.session_state[last_key] = clicked
        return clicked
    return selected_kernel


def kernel_cost_caption(run: RunInfo, graph_id: str, kernel: str | None) -> str:
    """Return the code pane's "time, share, GB/s" line for a kernel ("" when not measured)."""
    _, full = measured(run)
    costs = full.graph_costs(graph_id) if full else None
    if not costs or not kernel:
        return ""
    return perf.kernel_cost_line(costs.kernel(kernel), peak_gbps=full.bandwidth.peak_gbps)
