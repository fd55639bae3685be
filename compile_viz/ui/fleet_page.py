"""The Fleet page: a sweep as a sortable table (failed cells first) with its plots, and the diff of two
sweeps, one row per changed model; picking a row opens that run, or that pair on the Compare page.

`?sweep=NAME` picks the sweep, `&against=NAME` the one it is compared with. Ray is not needed here: the
page reads the sweep records and the runs the cells stored."""

from __future__ import annotations

import streamlit as st

from compile_viz.fleet.diff import fleet_diff
from compile_viz.fleet.records import FleetError, record_path, sweep_names
from compile_viz.fleet.report import fleet_report
from compile_viz.render.fleet import (
    cell_table,
    change_table,
    compile_vs_kernels,
    diff_line,
    speedup_per_model,
    summary_line,
)
from compile_viz.ui import loaders, page_registry
from compile_viz.ui.tables import table

NONE = "(none)"


def _stamp(name: str) -> float:
    """The sweep record's mtime: a running sweep rewrites it as cells end, which refreshes the cache."""
    try:
        return record_path(loaders.get_store(), name.partition("@")[0]).stat().st_mtime
    except (OSError, FleetError):
        return 0.0


@st.cache_data(max_entries=16, show_spinner="Reading the sweep…")
def _report(name: str, stamp: float) -> dict:
    return fleet_report(loaders.get_store(), name)


@st.cache_data(max_entries=8, show_spinner="Comparing the sweeps…")
def _diff(a: str, b: str, stamps: tuple[float, float]) -> dict:
    return fleet_diff(loaders.get_store(), a, b)


def page() -> None:
    st.subheader("Fleet")
    names = sweep_names(loaders.get_store())
    if not names:
        st.info("No sweeps yet: `compile-viz sweep SWEEP.toml` runs one (docs/fleet.md).")
        return
    asked = st.query_params.get("sweep")
    name = st.selectbox("Sweep", names, index=names.index(asked) if asked in names else 0, key="fleet_sweep")
    st.query_params["sweep"] = name
    try:
        report = _report(name, _stamp(name))
    except FleetError as e:
        st.error(str(e))
        return
    st.caption(summary_line(report))
    _cells(report)
    others = [NONE, *(n for n in names if n != name)]
    asked_b = st.query_params.get("against")
    against = st.selectbox("Compare with (A = that sweep, B = this one)", others,
                           index=others.index(asked_b) if asked_b in others else 0, key="fleet_against")
    if against == NONE:
        st.query_params.pop("against", None)
        return
    st.query_params["against"] = against
    try:
        diff = _diff(against, name, (_stamp(against), _stamp(name)))
    except FleetError as e:
        st.error(str(e))
        return
    _changes(diff)


def _cells(report: dict) -> None:
    rows = cell_table(report)
    event = table(rows, on_select="rerun", selection_mode="single-row", key="fleet_cells")
    picked = event.selection.rows if event is not None else []
    if picked and rows[picked[0]]["run"]:
        page_registry.switch("viewer", run=rows[picked[0]]["run"])
    left, right = st.columns(2)
    left.plotly_chart(compile_vs_kernels(report), width="stretch")
    speed = speedup_per_model(report)
    if speed is None:
        right.caption("No cell was measured (`measure = true` in a setting): no speedups to plot.")
    else:
        right.plotly_chart(speed, width="stretch")


def _changes(diff: dict) -> None:
    st.markdown(f"##### {diff_line(diff)}")
    rows = change_table(diff)
    if not rows:
        st.caption("No model changed: same graphs, breaks, recompiles, launch groups and verdicts.")
        return
    event = table(rows, on_select="rerun", selection_mode="single-row", key="fleet_changes")
    picked = event.selection.rows if event is not None else []
    if picked and rows[picked[0]]["A"] and rows[picked[0]]["B"]:
        row = rows[picked[0]]
        page_registry.switch("compare", run=row["A"], compare=row["B"])
    st.caption("Pick a row to open the pair on the Compare page.")
