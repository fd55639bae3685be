"""The Fleet page and its render functions, without Ray: sweeps whose cells are bundled CPU runs imported
into a fresh store and tagged as a sweep's cells are (meta.json's options.labels)."""

from __future__ import annotations

import pytest

from compile_viz.fleet.diff import fleet_diff
from compile_viz.fleet.records import CELL_LABEL, SWEEP_LABEL, SweepRecord, save_record
from compile_viz.fleet.report import fleet_report
from compile_viz.fleet.sweep_file import Cell, parse_sweep
from compile_viz.render.fleet import (
    cell_table,
    change_table,
    compile_vs_kernels,
    diff_line,
    speedup_per_model,
)
from compile_viz.store import write_meta
from tests.conftest import SAMPLE_RUNS
from tests.test_app_fixtures import fresh_store, no_errors, run_app

SETTING = parse_sweep({"models": ["m"]}).settings[0]


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch)


def _sweep(store, name: str, cells: dict[str, str | None]) -> None:
    """Record sweep `name`: model -> the bundled run its cell stored (None: a cell Ray could not run)."""
    record = SweepRecord(name, [Cell(m, SETTING) for m in cells], started="2026-01-01T00:00:00+00:00",
                         finished="2026-01-01T00:01:00+00:00", wall_s=60.0)
    for model, bundled in cells.items():
        if bundled is None:
            record.errors[f"{model}|default"] = "Ray could not run the cell: WorkerCrashedError: lost twice"
            continue
        run = store.import_zip(SAMPLE_RUNS / f"{bundled}.zip")
        meta = dict(run.meta, options=dict(run.meta.get("options") or {}, labels={
            SWEEP_LABEL: name, CELL_LABEL: f"{model}|default"}))
        write_meta(run.path, meta)
    save_record(store, record)


@pytest.fixture
def sweeps(store):
    _sweep(store, "a", {"same": "dynamic_shapes", "moved": "tiny_linear_relu", "lost": None})
    _sweep(store, "b", {"same": "dynamic_shapes", "moved": "pointwise_chain", "lost": "mlp_gelu"})
    return store


def test_a_sweep_reads_as_rows_failed_first(sweeps):
    report = fleet_report(sweeps, "a")
    rows = cell_table(report)
    assert [(r["model"], r["status"]) for r in rows] == [("lost", "error"), ("same", "complete"), ("moved", "complete")]
    assert "WorkerCrashedError" in rows[0]["reason"] and rows[0]["kernels"] is None
    assert rows[1]["kernels"] >= 1 and rows[1]["graphs"] == 1
    unmeasured = dict(report, cells=[dict(c, speedup=None, verdict=None) for c in report["cells"]])
    assert {"speedup", "verdict"}.isdisjoint(cell_table(unmeasured)[0])  # columns nobody has are left out
    assert len(compile_vs_kernels(report).data) == 1  # one setting
    speed = speedup_per_model(report)  # the bundled runs were measured (on a CPU)
    assert list(speed.data[0].x) == ["same", "moved"] and all(y > 0 for y in speed.data[0].y)


def test_two_sweeps_give_one_row_per_changed_model(sweeps):
    diff = fleet_diff(sweeps, "a", "b")
    assert diff["same"] == 1
    assert [c["model"] for c in diff["changes"]] == ["lost", "moved"]  # a status change first
    assert diff["changes"][0]["why"].startswith("A error (Ray could not run the cell")
    rows = change_table(diff)
    assert rows[0]["status"] == "error → complete"
    assert rows[1]["B"] and rows[1]["A"] and "launch group" in rows[1]["why"]
    assert diff_line(diff) == "a → b: 2 changed, 1 the same"


def test_the_fleet_page_shows_the_sweep_and_the_diff(sweeps):
    at = run_app("from compile_viz.ui import fleet_page\nfleet_page.page()\n", sweep="b", against="a")
    no_errors(at)
    assert at.selectbox[0].value == "b" and at.selectbox[1].value == "a"
    tables = at.dataframe
    assert len(tables) == 2
    assert list(tables[0].value["model"]) == ["same", "moved", "lost"]  # b: all complete, in the file's order
    assert list(tables[1].value["model"]) == ["lost", "moved"]
    assert any("2 changed, 1 the same" in m.value for m in at.markdown)


def test_the_fleet_page_without_sweeps_says_how_to_make_one(store):
    at = run_app("from compile_viz.ui import fleet_page\nfleet_page.page()\n")
    no_errors(at)
    assert "compile-viz sweep SWEEP.toml" in at.info[0].value
