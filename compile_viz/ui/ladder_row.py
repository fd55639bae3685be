"""The Viewer's ladder row: where a wrong result starts (the backend ladder of measure.json's
correctness), with links to the kernel PyTorch's compiler bisector named."""

from __future__ import annotations

import streamlit as st

from compile_viz.measurements import read_run
from compile_viz.render.ladder import kernel_links, ladder_html
from compile_viz.ui import loaders
from compile_viz.ui.page_registry import page_url
from compile_viz.ui.runs import RunInfo


def ladder_row(info: RunInfo) -> None:
    """Draw the ladder of a run whose measurement has one; nothing otherwise."""
    _, full = read_run(info.run_dir, info.meta)
    ladder = full.correctness.ladder if full and full.correctness else None
    if ladder is None:
        return
    graphs = []
    if ladder.bisect is not None and ladder.bisect.node:
        graphs = [(g.id, loaders.load_index(info.key, g.id)) for g in loaders.load_parse(info.key).graphs]
    st.markdown("##### Where the difference starts")
    st.html(ladder_html(ladder, links=kernel_links(ladder.bisect, graphs, info.key, page_url)))
