"""The Viewer's "Where the time went" section: the job's own profile (record --profile, capture
--profile, or an imported *.pt.trace.json) joined to launches: the run's summary, the longest
launches of every graph with their module and source lines (a row opens that launch), and the time
per module and per source line. Drawn only while open."""

from __future__ import annotations

import streamlit as st

from compile_viz.render.profile import share_figure, summary_line
from compile_viz.ui import loaders, state
from compile_viz.ui.tables import table

KEY = "viewer_time_section"
ROWS = 200


def time_section(key: str, graph_id: str) -> None:
    report = loaders.load_time_report(key)
    if report is None:
        return
    box = st.expander("Where the time went (the job's profile)", key=KEY, on_change="rerun")
    if not box.open:
        return
    with box:
        st.caption(summary_line(report.summary))
        only = st.toggle("this graph only", value=False, key="time_this_graph")
        rows = [r for r in report.rows if not only or r.graph == graph_id][:ROWS]
        rows_shown = [{"ms": round(r.total_us / 1e3, 4), "share": f"{r.share:.1%}", "calls": r.calls, "graph": r.label,
                  "launch": r.launch, "kernel": r.kernel, "fusion group": r.fusion_group, "module": r.module,
                  "source": ", ".join(f"{f.rsplit('/', 1)[-1]}:{n}" for f, n in r.source_lines[:3])} for r in rows]
        event = table(rows_shown, on_select="rerun", selection_mode="single-row", key="time_rows", height=320)
        picked = event.selection.rows if event is not None else []
        if picked:
            row = rows[picked[0]]
            state.update(graph=row.graph, kernel=row.kernel, launch=row.launch, node=None)
            st.rerun()
        left, right = st.columns(2, gap="small")
        left.plotly_chart(share_figure(report.by_module()[:15], "time per module"), width="stretch", key="time_mod")
        right.plotly_chart(share_figure(report.by_line()[:15], "time per source line"), width="stretch", key="time_line")
