"""The "verify the win" panel: eager vs compiled verdict, per-kernel time and bandwidth; clicks select."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from compile_viz.capture.measure import summarize as summarize_measure
from compile_viz.render import perf
from compile_viz.store import read_measure


def load_measure(run_meta_or_measure: Any) -> tuple[dict | None, dict | None]:
    """Return (summary, full measure.json) from a Run, a run folder, a meta dict or a measure.json dict."""
    obj = run_meta_or_measure
    if obj is None:
        return None, None
    if isinstance(obj, (str, Path)):
        full = read_measure(Path(obj))
        return (summarize_measure(full) if full else None), full
    if hasattr(obj, "path") and hasattr(obj, "meta"):  # a store.Run
        full = read_measure(obj.path)
        return obj.meta.get("measure") or (summarize_measure(full) if full else None), full
    if isinstance(obj, dict) and ("kernels" in obj or "correctness" in obj):
        return summarize_measure(obj), obj
    if isinstance(obj, dict):
        return obj.get("measure"), None
    return None, None


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


def perf_panel(run_meta_or_measure: Any, graph_id: str, selected_kernel: str | None = None) -> str | None:
    """Draw the panel for one graph; return the kernel name clicked in a chart, else `selected_kernel`."""
    summary, full = load_measure(run_meta_or_measure)
    st.html(perf.summary_html(summary))
    block = perf.graph_costs(full, graph_id)
    if not block:
        if summary:
            st.caption("No per-kernel times for this graph in measure.json.")
        return selected_kernel
    rows = block["kernels"]
    cpu = (full or {}).get("device") == "cpu"
    bw = (full or {}).get("bandwidth") or {}
    clicked = None
    fig = perf.kernel_time_figure(rows, selected=selected_kernel, unit_label="CPU time" if cpu else "GPU time")
    event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key=f"perf_time:{graph_id}",
                            use_container_width=True)
    clicked = _clicked(event)
    if any(r.get("gbps") for r in rows):
        event = st.plotly_chart(perf.bandwidth_figure(rows, peak_gbps=bw.get("peak_gbps"), copy_gbps=bw.get("copy_gbps"),
                                                      selected=selected_kernel),
                                on_select="rerun", selection_mode="points", key=f"perf_bw:{graph_id}",
                                use_container_width=True)
        clicked = clicked or _clicked(event)
    if selected_kernel:
        row = next((r for r in rows if r["kernel"] == selected_kernel), None)
        st.caption(f"`{selected_kernel}`: {perf.kernel_cost_line(row, peak_gbps=bw.get('peak_gbps'))}")
    # a chart keeps its selection across reruns: only a click that changed counts as a new choice
    last_key = f"perf_last_click:{graph_id}"
    if clicked and clicked != st.session_state.get(last_key):
        st.session_state[last_key] = clicked
        return clicked
    return selected_kernel


def run_folder(info: Any) -> Path | None:
    """Return the run folder of a viewer RunInfo (the parent of its debug/ folder), or None."""
    path = Path(getattr(info, "debug_path", "") or "")
    return path.parent if path.name == "debug" and (path.parent / "meta.json").is_file() else None


def kernel_cost_caption(run_meta_or_measure: Any, graph_id: str, kernel: str | None) -> str:
    """Return the code pane's "time, share, GB/s" line for a kernel ("" when not measured)."""
    _, full = load_measure(run_meta_or_measure)
    block = perf.graph_costs(full, graph_id)
    if not block or not kernel:
        return ""
    row = next((r for r in block["kernels"] if r["kernel"] == kernel), None)
    return perf.kernel_cost_line(row, peak_gbps=((full or {}).get("bandwidth") or {}).get("peak_gbps"))
