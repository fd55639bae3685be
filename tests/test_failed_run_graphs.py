"""A failed run keeps the graphs compiled before the failure: `parse` reads them, the Viewer shows them.

tests/third_party/fails_in_loss.py compiles its forward and then raises in `loss`, captured for real
on this machine's CPU with the project's CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.conftest import compile_viz_cli as cli

MODEL = "tests/third_party/fails_in_loss.py"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    """(CompletedProcess, home, run folder) of the real capture, made once."""
    pytest.importorskip("torch")
    home = tmp_path_factory.mktemp("home")
    proc = cli("capture", MODEL, "--device", "cpu", "--home", str(home))
    return proc, home, Path(proc.stdout.strip().splitlines()[-1])


def test_capture_fails_with_one_line_and_keeps_the_forward(failed):
    proc, home, run = failed
    assert proc.returncode == 1, proc.stderr[-2000:]
    err = proc.stderr.strip()
    assert err == "compile-viz: capture failed: model raised RuntimeError while compiling: the loss is broken on purpose"
    meta = json.loads((run / "meta.json").read_text())
    assert run.parent == home / "runs" and meta["status"] == "failed"
    assert [Path(g).name for g in meta["graphs"]] == ["model__0_forward_1.0"]


def test_parse_reads_the_failed_run(failed):
    _, _, run = failed
    proc = cli("parse", str(run))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("model__0_forward_1.0 [forward]:") and "1 kernels" in proc.stdout
    proc = cli("parse", str(run), "--json")
    assert proc.returncode == 0, proc.stderr
    graphs = json.loads(proc.stdout)["graphs"]
    assert [(g["kind"], g["id"]) for g in graphs] == [("forward", "model__0_forward_1.0")]
    assert graphs[0]["fx_nodes"] and graphs[0]["kernels"] and graphs[0]["launches"]


@pytest.fixture
def viewer_env(failed, tmp_path, monkeypatch):
    _, home, _ = failed
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(home))
    monkeypatch.setenv("COMPILE_VIZ_SAMPLE_RUNS", str(tmp_path))  # no bundled runs
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()
    st.cache_data.clear()


def test_viewer_shows_the_error_then_the_graph(failed, viewer_env):
    _, _, run = failed
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["run"] = run.name
    at = at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == [
        "This run failed: model raised RuntimeError while compiling: the loss is broken on purpose"]
    assert at.expander[0].label.startswith("stderr")
    assert any("broken on purpose" in c.value for c in at.code)
    assert any(c.value.startswith("Compiled before the failure: 1 graph.") for c in at.caption)
    graph = next(s for s in at.selectbox if s.label == "Graph")
    assert graph.options == ["forward · model__0_forward_1.0"]
    assert any(s.label == "Kernel launch" and len(s.options) > 1 for s in at.selectbox)
    svg = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")]
    assert any("<svg" in s for s in svg)


@pytest.fixture
def store_with_failed(failed, tmp_path, monkeypatch):
    """A fresh store holding a copy of the failed capture, a bundled capture imported (complete) and a
    recorded 2-GPU job; (store, failed run id, complete run id)."""
    import shutil

    from compile_viz.store import RunStore

    _, _, run = failed
    home = tmp_path / "home"
    shutil.copytree(run, home / "runs" / run.name)
    store = RunStore(home)
    complete = store.import_zip(ROOT / "sample_runs" / "mlp_gelu.zip").id
    store.import_zip(ROOT / "tests" / "fixtures" / "jobs" / "gpt2_ddp_2gpu.zip")
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(home))
    monkeypatch.setenv("COMPILE_VIZ_SAMPLE_RUNS", str(tmp_path / "none"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield store, run.name, complete
    st.cache_resource.clear()
    st.cache_data.clear()


def test_the_runs_table_shows_blanks_and_its_search_finds_a_status(store_with_failed):
    """Issue 33.8b: a cell a run has nothing for is blank, not "None"; searching "failed" finds the
    failed run, "complete" the others."""
    _, failed_id, complete = store_with_failed
    at = AppTest.from_string("from compile_viz.ui import runs_page\nruns_page.page()\n", default_timeout=60).run()
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 3 and not table.isna().any().any()
    assert not any(str(cell) in ("None", "nan") for cell in table.to_numpy().ravel())
    capture = table[table["id"] == complete].iloc[0]
    assert [capture[c] for c in ("ranks", "exit", "wall s", "command")] == ["", "", "", ""]
    job = table[table["kind"] == "job"].iloc[0]
    assert job["ranks"] == "2" and job["exit"] == "0" and float(job["wall s"]) > 0
    at.text_input[0].set_value("failed").run()
    assert list(at.dataframe[0].value["id"]) == [failed_id]
    at.text_input[0].set_value("complete").run()
    assert failed_id not in list(at.dataframe[0].value["id"]) and len(at.dataframe[0].value) == 2


@pytest.mark.parametrize("pair", ["failed-failed", "complete-failed"])
def test_compare_says_a_side_failed_and_counts_nothing_same(store_with_failed, pair):
    """Issue 33.8c: the Compare page said "2 same" of a failed run against itself; it says which side
    failed and why, shows the pair's numbers, and matches no launches as same or changed."""
    _, failed_id, complete = store_with_failed
    a = failed_id if pair == "failed-failed" else complete
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(run=a, compare=failed_id)
    at.run()  # ?compare= opens the Compare page
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning if "failed" in w.value]
    reason = "model raised RuntimeError while compiling: the loss is broken on purpose"
    expected = (f"A failed ({reason}) and B failed ({reason}): their graphs are those compiled before they failed"
                if pair == "failed-failed" else f"B failed ({reason}): its graphs are those compiled before it failed")
    assert warnings == [expected + ", so launches are not counted as same or changed"]
    bodies = "\n".join(h.proto.body for h in at.get("html"))
    assert 'data-label="launches"' in bodies  # the pair's numbers
    assert "Launches matched" not in "\n".join(m.value for m in at.markdown)
    assert not any(s.label == "Group" for s in at.selectbox)


def test_diff_says_a_side_failed_and_lists_no_groups(store_with_failed):
    """`compile-viz diff` prints the Compare page's line and no same/changed groups."""
    store, failed_id, complete = store_with_failed
    proc = cli("diff", complete, failed_id, "--home", str(store.home), "--all")
    assert proc.returncode == 0, proc.stderr[-2000:]
    reason = "model raised RuntimeError while compiling: the loss is broken on purpose"
    assert f"B failed ({reason}): its graphs are those compiled before it failed" in proc.stdout
    from compile_viz.compare.model import CLASSES

    lines = proc.stdout.splitlines()
    assert not [line for line in lines if line.startswith("  groups:") or line.split(" ")[2:3] in ([c] for c in CLASSES)]
    assert "  launches " in proc.stdout  # the pair's numbers are still there
