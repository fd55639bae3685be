"""The Viewer's section on the exported program behind an ahead-of-time graph (capture --aoti, an
export or AOTInductor trace): its graph signature. Nothing for a JIT graph."""

from __future__ import annotations

import streamlit as st

from compile_viz.artifacts import GraphParse
from compile_viz.render import exported as render


def export_section(graph: GraphParse) -> None:
    """Show, collapsed, what torch.export lifted out of the module and what the graph returns."""
    ep = graph.exported_program
    if ep is None:
        return
    with st.expander(f"Exported program (torch.export): {render.signature_line(ep)}"):
        st.html(render.signature_html(ep))
