"""The Compiles page under AppTest, on real TORCH_TRACE logs: a bundled run's trace/ (graph break,
restart), tlparse's four-rank log (recompiles, a failed rank) and a public trace in the Viewer."""

from __future__ import annotations

import zipfile

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from compile_viz.render import compiles as render
from tests.conftest import CORPUS, ROOT, corpus_required
from tests.test_app_fixtures import no_errors, run_app


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_resource.clear()
    st.cache_data.clear()
    yield tmp_path
    st.cache_resource.clear()
    st.cache_data.clear()


def page(**params) -> AppTest:
    return run_app("from compile_viz.ui import compiles_page\ncompiles_page.page()\n", **params)


def _run_folder(tmp_path, name: str):
    """A bundled run unpacked as the store keeps it: debug/ and trace/ side by side."""
    out = tmp_path / name
    with zipfile.ZipFile(ROOT / "sample_runs" / f"{name}.zip") as z:
        z.extractall(out)
    return out


def test_graph_break_run_shows_statuses_stack_guards_and_timeline(env):
    run = _run_folder(env, "graph_break_item")
    at = page(run=f"path:{run / 'debug'}")
    no_errors(at)
    ids = at.selectbox[0].options
    assert [o.split(" ", 1)[0] for o in ids] == ["[0/0]", "[0/0_1]", "[1/0]"]
    assert "graph break" in ids[0]
    assert any("Tensor.item()" in c.value for c in at.code)
    html = "\n".join(h.proto.body for h in at.get("html"))
    assert "graph_break_item.py" in html and "cv-frame-last" in html
    assert at.get("plotly_chart")
    at.selectbox[0].select(ids[2]).run()
    no_errors(at)
    assert at.query_params["compile"] in ("1/0", ["1/0"])
    at.text_input[0].input("TENSOR_MATCH").run()
    guards = at.code[-1].value
    assert guards and all("TENSOR_MATCH" in line for line in guards.splitlines())


def test_multi_rank_log_picks_a_rank_and_flags_divergences(env):
    corpus_required()
    at = page(run=f"path:{CORPUS / 'traces/tlparse-tests/multi_rank_logs'}")
    no_errors(at)
    assert at.selectbox[0].label == "Rank"
    assert any(e.label.startswith("Ranks: 4 ranks, ⚠ 15 divergences") for e in at.expander)
    section = "\n".join(h.proto.body for h in at.get("html"))
    assert "compiled on rank 1 only" in section and 'class="cv-grid"' in section
    assert "/compare?run=" in section and "compare_rank=1" in section
    at.selectbox[0].select(1).run()
    at.selectbox[1].select(at.selectbox[1].options[1]).run()
    no_errors(at)
    assert "the guards of compile 0/0 failed: tensor 'x' size mismatch" in "\n".join(m.value for m in at.markdown)


def test_viewer_opens_a_public_trace(env, monkeypatch):
    corpus_required()
    (log,) = sorted((CORPUS / "public/noisystreet-deep-dive-torch-compile/torch_compile_debug/tlparse").glob("*.log"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["run"] = f"path:{log}"
    at.run()
    no_errors(at)
    assert any(s.label == "Graph" for s in at.selectbox)


def test_a_path_without_a_trace_says_so(env, tmp_path):
    at = page(run=f"path:{tmp_path}")
    no_errors(at)
    assert "no TORCH_TRACE log" in at.info[0].value


def test_render_helpers():
    assert render.plain_recompile_reason("0/1: tensor 'x' size mismatch") == \
        "the guards of compile 0/1 failed: tensor 'x' size mismatch"
    assert render.filter_guards(["A x", "B y"], "b") == ["B y"]
    assert "&lt;script&gt;" in render.stack_html(
        [__import__("compile_viz.artifacts.trace.model", fromlist=["StackFrame"]).StackFrame("<script>", 1, "f", "")])
