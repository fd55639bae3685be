"""The Fleet page in real Chromium on a real GPU sweep (issue 36, with issue 33's every-link rule): the
two sweeps of bench/gpu_fleet.sh on two H200s (tests/fixtures/fleet: eight third-party models under the
default mode, and the max-autotune sweep the device time cut after six cells) imported into a store.
Every row of the sweep's table opens that cell's run in the Viewer, and every row of the diff opens its
pair on the Compare page; neither shows an exception, "Page not found" or an unknown parameter.
"""

from __future__ import annotations

import re
import shutil

import pytest
from test_browser import OUT, REPO, chromium_page
from test_browser_surface import page_problems, query_of, serving, settle

from compile_viz.fleet.diff import fleet_diff
from compile_viz.fleet.records import sweeps_dir
from compile_viz.fleet.report import fleet_report
from compile_viz.render.fleet import cell_table, change_table
from compile_viz.store import RunStore
from compile_viz.ui.page_registry import page_url

pytestmark = pytest.mark.slow
FLEET = REPO / "tests" / "fixtures" / "fleet"
SAMPLE_RUNS = REPO / "sample_runs"
ROW_PX = 35  # a dataframe's header and each row


@pytest.fixture(scope="module")
def gpu_sweeps(tmp_path_factory):
    store = RunStore(tmp_path_factory.mktemp("fleet") / "home")
    for z in sorted(FLEET.glob("*.zip")):
        store.import_zip(z)
    sweeps_dir(store).mkdir(parents=True, exist_ok=True)
    for record in (FLEET / "sweeps").glob("*.json"):
        shutil.copy(record, sweeps_dir(store) / record.name)
    return store


def click_row(page, table: int, row: int) -> None:
    """Select row `row` of the page's `table`-th dataframe (a canvas: its row-marker column, by position)."""
    grid = page.locator("[data-testid='stDataFrame']").nth(table)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 14, box["y"] + ROW_PX * (row + 1) + ROW_PX // 2)


def test_every_row_of_a_gpu_sweep_and_its_diff_opens_what_it_names_in_chromium(gpu_sweeps, tmp_path):
    store = gpu_sweeps
    cells = cell_table(fleet_report(store, "gpu-default"))
    changes = change_table(fleet_diff(store, "gpu-default", "gpu-autotune"))
    assert len(cells) == 8 and all(c["run"] for c in cells), cells
    assert len(changes) == 8 and sum(bool(c["A"] and c["B"]) for c in changes) == 6, changes
    fleet = page_url("fleet", sweep="gpu-autotune", against="gpu-default")
    problems = []
    (OUT / "fleet").mkdir(parents=True, exist_ok=True)
    with serving(store.home, SAMPLE_RUNS, tmp_path / "streamlit.log") as url, chromium_page(1400) as page:
        page.goto(url + fleet)
        settle(page)
        problems += [f"fleet page: {p}" for p in page_problems(page)]
        page.screenshot(path=str(OUT / "fleet" / "fleet_page.png"), full_page=True)
        assert page.locator("[data-testid='stDataFrame']").count() == 2, "the sweep's table and the diff's"
        assert page.locator(".js-plotly-plot").count() == 2, "compile time against kernels, speedup per model"
        assert page.get_by_text("gpu-default → gpu-autotune: 8 changed").count()

        def opens(table: int, row: int, path: str, want: dict[str, str], first: str) -> None:
            page.goto(url + first)
            settle(page)
            click_row(page, table, row)
            try:
                page.wait_for_url(re.compile(rf"/{path}\?"), timeout=60_000)
                settle(page)
                found = page_problems(page)
                got = query_of(page.url)
                found += [f"{k}={got.get(k)!r}, not {v!r}" for k, v in want.items() if got.get(k) != v]
            except Exception as e:
                found = [f"{type(e).__name__}: {str(e).splitlines()[0]}"]
            if (path, row) == ("compare", 2):
                page.screenshot(path=str(OUT / "fleet" / "compare_from_fleet.png"), full_page=True)
            if found:
                shot = OUT / "fleet" / f"{path}_{table}_{row}.png"
                page.screenshot(path=str(shot), full_page=True)
                problems.append(f"table {table} row {row} -> {path} {want} ({shot.name}): {'; '.join(found)}")

        for i, cell in enumerate(cells):
            opens(0, i, "viewer", {"run": cell["run"]}, page_url("fleet", sweep="gpu-default"))
        for i, change in enumerate(changes):
            if change["A"] and change["B"]:
                opens(1, i, "compare", {"run": change["A"], "compare": change["B"]}, fleet)
    assert not problems, "\n".join(problems)
