"""One count of launches (issue 33, point 8d): the Viewer's summary cards said "launches 1" and its
layout line "3 launches" on the same graph, the line counting extern calls as launches. Both now
read the graph's GraphSummary (linking/index.py), as the Compare page's rows do: "1 launch, 2 extern
calls" beside the cards "launches 1" and "extern calls 2"."""

from __future__ import annotations

import re

from test_app import metrics
from test_app_fixtures import no_errors, run_app

from compile_viz.artifacts import parse_path
from compile_viz.linking import build_index
from compile_viz.render.summary import graph_cards, launch_counts
from tests.conftest import ROOT, THIRD_PARTY

RUN = "mlp_gelu"  # a bundled H100 capture: one generated kernel, two extern calls (mm)
LINE = re.compile(r"\((\d+) nodes, (\d+) launch(?:es)?, (\d+) extern calls?\)$")


def test_cards_and_layout_line_are_one_summary_on_real_captures():
    for source in (ROOT / "sample_runs" / f"{RUN}.zip", *sorted(THIRD_PARTY.glob("*.zip"))):
        for graph in parse_path(str(source)).graphs:
            s = build_index(graph).summary
            cards = {c.label: c.value for c in graph_cards(build_index(graph))}
            assert (cards["launches"], cards["extern calls"]) == (str(s.launches), str(s.extern_calls))
            line = LINE.search(f"(0 nodes, {launch_counts(s)})")
            assert line and (int(line[2]), int(line[3])) == (s.launches, s.extern_calls), source.name
            calls = graph.output_code.launches
            assert s.launches + s.extern_calls == len(calls)  # every call() entry counted once, in one of the two


def test_viewer_cards_layout_line_and_compare_rows_agree(tmp_path, monkeypatch):
    import streamlit as st

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_resource.clear()
    try:
        at = run_app(ROOT / "app.py", run=f"bundled:{RUN}")
        no_errors(at)
        cards = metrics(at)
        label = next(r.label for r in at.radio if r.label.startswith("Layout"))
        nodes, launches, externs = LINE.search(label).groups()
        assert (cards["launches"], cards["extern calls"]) == (launches, externs) == ("1", "2")
        at = run_app(ROOT / "app.py", run=f"bundled:{RUN}", compare=f"bundled:{RUN}")
        no_errors(at)
        rows = "\n".join(h.proto.body for h in at.get("html"))
        for label, value in (("launches", launches), ("extern calls", externs)):
            row = re.search(rf'data-label="{label}".*?</tr>', rows, re.S)[0]
            assert re.findall(r">(\d+)<", row)[:2] == [value, value], label
    finally:
        st.cache_resource.clear()
