"""The "Why not fused?" section of the Viewer: Inductor's fusion decisions for the graph shown.

Two launches picked (`?why=3,5` in the URL, so a link shows the answer): every pair Inductor
weighed between them, or why it never did. The selected kernel's story (which fusions built it),
refusals by reason (a bar chart; a click lists the pairs), and the rounds from the pre-fusion
nodes to the fusion groups.
"""

from __future__ import annotations

import streamlit as st

from compile_viz.artifacts.model import GraphParse
from compile_viz.linking import fusion
from compile_viz.linking.model import GraphIndex
from compile_viz.render import fusion as render
from compile_viz.render.fusion_notes import NO_LOG_NOTE, reason_note
from compile_viz.render.selection import Selection
from compile_viz.ui import state


def fusion_panel(graph: GraphParse, index: GraphIndex, sel: Selection) -> None:
    decisions = graph.fusion_decisions
    if decisions is None:
        st.info(NO_LOG_NOTE)
        return
    refused = len(decisions.refused)
    st.caption(f"{len(decisions.rounds)} rounds, {len(decisions.fused)} pairs fused, {refused} refused "
               "(from the run's fusion log: what TORCH_LOGS=\"+fusion\" prints).")
    why, story, reasons, rounds = st.tabs(["Why are these separate?", "This kernel's story",
                                           "Refusals by reason", "Rounds"])
    with why:
        _why(graph, index, decisions, sel)
    with story:
        _story(index, decisions, sel)
    with reasons:
        _reasons(decisions)
    with rounds:
        st.html(render.rounds_html(graph, decisions))


def _pick(index: GraphIndex, sel: Selection) -> tuple[int, int] | None:
    n = len(index.launches)
    if n < 2:
        return None
    raw = state.get("why")
    try:
        a, b = (int(x) for x in raw.split(","))
    except ValueError:
        a = min(sel.launches) if sel.launches else 0
        b = (a + 1) % n
    labels = [render.launch_label(index, i) for i in range(n)]
    left, right = st.columns(2)
    a = left.selectbox("First kernel", range(n), index=min(a, n - 1), format_func=labels.__getitem__, key="why_a")
    b = right.selectbox("Second kernel", range(n), index=min(b, n - 1), format_func=labels.__getitem__, key="why_b")
    if f"{a},{b}" != raw:
        state.update(why=f"{a},{b}")
    return a, b


def _why(graph, index, decisions, sel) -> None:
    picked = _pick(index, sel)
    if picked is None:
        st.caption("This graph has one launch: nothing to compare.")
        return
    answer = fusion.why_separate(graph, index, decisions, *picked)
    st.markdown(render.why_markdown(answer, index))
    if answer.pairs:
        st.html(render.pairs_html(answer.pairs))


def _story(index, decisions, sel) -> None:
    if not sel.launches:
        st.caption("Select a kernel (in the graph or the fusion groups) to see the fusions that built it.")
        return
    launch = min(sel.launches)
    steps = fusion.fusion_story(index, decisions, launch)
    if not steps:
        st.caption(f"{render.launch_label(index, launch)} runs a single scheduler node: no fusion built it.")
        return
    st.markdown(f"`{render.launch_label(index, launch)}` was built in {len(steps)} fusion(s):")
    st.html(render.pairs_html(steps))


def _reasons(decisions) -> None:
    counts = fusion.refusals_by_kind(decisions)
    if not counts:
        st.caption("Inductor refused no pair in this graph.")
        return
    event = st.plotly_chart(render.refusals_figure(counts), on_select="rerun", selection_mode="points",
                            key="refusals_chart")
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else \
        getattr(getattr(event, "selection", None), "points", [])
    labels = {k.replace("_", " "): k for k, _ in counts}
    chosen = labels.get(points[0].get("y")) if points else None
    kind = st.selectbox("Reason", [k for k, _ in counts], index=[k for k, _ in counts].index(chosen) if chosen else 0,
                        format_func=lambda k: f"{k.replace('_', ' ')} ({dict(counts)[k]})", key="refusal_kind")
    st.markdown(reason_note(kind))
    st.html(render.pairs_html([p for p in decisions.refused if p.kind == kind]))
