"""The module view of a big graph: which groups are open (in the URL as `open=`), and the line
above the graph that says what the groups are made from. Arrangement only: the grouping is
linking/hierarchy.py, the drawing render/hierarchy_dot.py."""

from __future__ import annotations

import streamlit as st

from compile_viz.linking.hierarchy import PARAMETERS, REPETITION, Hierarchy
from compile_viz.ui import state

NONE_OPEN = "-"  # `open=-`: the reader closed everything (no `open` at all: the first view's choice)

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


def toggle(h: Hierarchy, opened: frozenset[str], click: dict) -> None:
    """A click on a group: open it, or close it with everything under it (and drop a selection inside)."""
    if click.get("open"):
        now = opened | {click["open"]}
    else:
        gone = click["close"]
        now = frozenset(g for g in opened if g != gone and not _under(h, g, gone))
        launch = state.get_int("launch")
        if launch is not None and gone in h.path(launch):
            state.clear_selection()
    state.update(open=",".join(sorted(now)) or NONE_OPEN)
    st.rerun()


def _under(h: Hierarchy, g: str, ancestor: str) -> bool:
    while g:
        g = h.parents.get(g, "")
        if g == ancestor:
            return True
    return False


def caption(h: Hierarchy, opened: frozenset[str]) -> None:
    """What the boxes are, and a way back to the first view."""
    note = EVIDENCE_NOTES.get(h.evidence, "Launches grouped by source line.")
    c1, c2 = st.columns([5, 1])
    c1.caption(f"{note} Click a group to open it, an open group's title to close it.")
    if c2.button("Close all", disabled=not opened, key="close_all"):
        state.clear_selection()
        state.update(open=NONE_OPEN)
        st.rerun()
