"""The Viewer's section on the compile that made the graph shown: its guards (count and a searchable
list) and the timeline of its compile phases, from the run's TORCH_TRACE log, with a link to that
compile on the Compiles page. Collapsed; the log is read only when it is opened."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from compile_viz.artifacts import DebugParse, DiscoveryError, GraphParse
from compile_viz.artifacts.trace.model import TraceParse
from compile_viz.linking.graph_labels import compile_of
from compile_viz.render import compiles as render
from compile_viz.ui import compiles_page, loaders
from compile_viz.ui.page_registry import page_url
from compile_viz.ui.runs import PATH

KEY = "viewer_compile_section"  # its open state, kept across graphs


def compile_section(key: str, parse: DebugParse, graph: GraphParse) -> None:
    """Show, collapsed, the guards and phase timings of `graph`'s compile (nothing for a run without a trace)."""
    if not isinstance(parse, TraceParse) and not _may_have_trace(key):
        return
    box = st.expander("Compile: guards and phase timings (TORCH_TRACE)", key=KEY, on_change="rerun")
    if not box.open:
        return
    with box:
        try:
            logs = parse.logs if isinstance(parse, TraceParse) else loaders.load_trace(key).logs
        except DiscoveryError as e:
            st.info(f"No TORCH_TRACE log with this run ({e}); capture with compile-viz or open the trace itself.")
            return
        found = compile_of(logs, graph)
        if found is None:
            st.info("The trace does not say which compile made this graph; the Compiles page lists them all.")
            st.markdown(f"[Open the Compiles page]({page_url('compiles', run=key)})")
            return
        _show(key, logs, *found)


def _may_have_trace(key: str) -> bool:
    """Whether a run may have a trace: a stored run's trace/ holds a file, or it was opened by path."""
    if key.startswith(PATH):
        return True
    run_dir = loaders.run_info(key).run_dir
    trace = Path(run_dir) / "trace" if run_dir else None
    return trace is not None and trace.is_dir() and any(trace.iterdir())


def _show(key: str, logs, log, c) -> None:
    rank = f"rank {log.rank}" if log.rank is not None else log.path
    where = f" · {rank}" if len(logs) > 1 else ""
    link = page_url("compiles", run=key, rank=log.rank if len(logs) > 1 else None, compile=c.id)
    st.markdown(f"**{render.STATUS_ICONS.get(c.status, '')} [{c.id}] {c.status}**{where} · "
                f"{compiles_page.escape_md(render.frame_label(c))} · [open on the Compiles page]({link})")
    left, right = st.columns([2, 3], gap="small")
    with left:
        compiles_page.guards(c, key=f"viewer-guards-{c.id}", height=360)
    with right:
        st.markdown("##### Compile phases")
        phases = render.phases_of(log, c)
        if phases is not c.phases:
            st.caption("Timed with the frame's first attempt: Dynamo times every attempt under its id.")
        every = st.checkbox("every phase (passes, autotuning, caches)", key=f"viewer-phases-{c.id}")
        st.plotly_chart(render.phase_figure(phases, all_phases=every), width="stretch", key=f"viewer-tl-{c.id}")

