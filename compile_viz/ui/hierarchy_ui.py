"""The module view of a big graph: which groups are open (in the URL as `open=`), and the line
above the graph that says what the groups are made from. Arrangement only: the grouping is
linking/hierarchy.py, the drawing render/hierarchy_dot.py."""

from __future__ import annotations

import streamlit as st

from compile_viz.linking.hierarchy import PARAMETERS, REPETITION, Hierarchy
from compile_viz.render.hierarchy_dot import NONE_OPEN
from compile_viz.ui import state

EVIDENCE_NOTES = {
    PARAMETERS: "Launches grouped by the module whose parameters they read (names from the run's TORCH_TRACE log).",
    REPETITION: "No module names in this run (no TORCH_TRACE log beside it): launches grouped by the "
                "repeated sequence of kernels and by source line.",
}


def opened_groups(h: Hierarchy, first: frozenset[str], selected: frozenset[int]) -> frozenset[str]:
    """The groups to draw open: the URL's (or the first view's), plus the path to the selection."""
    raw = state.get("open")
    asked = first if not raw else frozenset(g for g in raw.split(",") if g in h.groups)
    return asked | frozenset(g for la in selected for g in h.path(la))


def toggle(h: Hierarchy, click: dict) -> None:
    """A click on a group: its link carries the groups to leave open (`open`); closing one (`close`)
    drops a selection inside it."""
    gone = click.get("close") or ""
    launch = state.get_int("launch")
    if gone and launch is not None and gone in h.path(launch):
        state.clear_selection()
    state.update(open=click.get("open") or NONE_OPEN)
    st.rerun()


def caption(h: Hierarchy, opened: frozenset[str]) -> None:
    """What the boxes are, and a way back to the first view."""
    note = EVIDENCE_NOTES.get(h.evidence, "Launches grouped by source line.")
    c1, c2 = st.columns([5, 1])
    c1.caption(f"{note} Click a group to open it, an open group's title to close it.")
    if c2.button("Close all", disabled=not opened, key="close_all"):
        state.clear_selection()
        state.update(open=NONE_OPEN)
        st.rerun()
