"""The pages under streamlit.testing.v1.AppTest, over runs built from the corpus at test time."""

from __future__ import annotations

import json
import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from test_app_fixtures import (
    REPO,
    failed_run,
    fresh_store,
    make_bundled,
    need_corpus,
    no_errors,
    run_app,
    store_run,
)

APP = REPO / "app.py"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    need_corpus()
    return make_bundled(tmp_path_factory.mktemp("sample_runs"))


@pytest.fixture
def env(tmp_path, bundled, monkeypatch):
    """An empty store and the corpus-built bundled runs (test_capture_warm covers the warm child)."""
    yield from fresh_store(tmp_path / "home", bundled, monkeypatch)


def app(**params) -> AppTest:
    return run_app(APP, **params)


def html(at: AppTest) -> str:
    """Return every st.html body and the graph widget's SVG, joined."""
    bodies = [h.proto.body for h in at.get("html")]
    bodies += [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")]
    return "\n".join(bodies)


def metrics(at: AppTest) -> dict[str, str]:
    """Return the summary cards, label -> value (as the page shows them: unescaped)."""
    import html as _html

    found = re.findall(r'class="cv-card" data-label="([^"]*)".*?class="cv-card-value"[^>]*>([^<]*)<', html(at))
    return {_html.unescape(k): _html.unescape(v) for k, v in found}


def box(at: AppTest, label: str):
    return next(s for s in at.selectbox if s.label == label)


def graph_ids(at: AppTest) -> list[str]:
    b = box(at, "Graph")
    return [o.split(" · ", 1)[1] for o in b.options]  # labels are "kind · folder"; ids are folder names here


def test_opens_on_a_bundled_run(env):
    at = app()
    no_errors(at)
    assert "bundled run" in at.subheader[0].value
    assert metrics(at)["kernels"].isdigit()
    assert "<svg" in html(at)


def test_opens_on_the_latest_stored_run(env):
    run_id = store_run(env, "pointwise_chain")
    at = app()
    no_errors(at)
    assert run_id in at.subheader[0].value
    cards = metrics(at)
    assert cards["kernels"] == "1" and cards["device"] == "NVIDIA H100"
    assert cards["versions"] == "torch 2.11.0+cu130 · triton 3.6.0"  # whole, not "torc…"


def test_switching_graphs(env):
    at = app(run="bundled:mlp_train_step")
    no_errors(at)
    assert "forward" in box(at, "Graph").value and metrics(at)["kernels"] == "1"
    backward = next(g for g in graph_ids(at) if "backward" in g)
    at = box(at, "Graph").set_value(backward).run()
    no_errors(at)
    assert at.query_params["graph"] == [backward] or at.query_params["graph"] == backward
    assert metrics(at)["kernels"] == "2"


def test_selecting_a_kernel_shows_its_code_and_nodes(env):
    at = app(run="bundled:mlp_train_step")
    backward = next(g for g in graph_ids(at) if "backward" in g)
    at = box(at, "Graph").set_value(backward).run()
    kernel = "triton_per_fused_gelu_gelu_backward_sum_1"
    picker = box(at, "Kernel launch")
    launch = next(int(o.split(" ")[0][1:]) for o in picker.options if f" {kernel} " in o)
    at = picker.set_value(launch).run()
    no_errors(at)
    page = html(at)
    assert "@triton.jit" in page or "triton_heuristics" in page  # the highlighted Triton source
    assert f"def {kernel}" in page.replace("<span style=\"color: #0000FF\">", "") or kernel in page
    assert "persistent reduction" in page
    # its nodes are outlined in the SVG (penwidth 3), its group row marked, and the URL holds it
    assert 'stroke-width="3"' in page and "cv-selected" in page
    assert at.query_params["kernel"] in (kernel, [kernel])


def test_selecting_in_a_collapsed_graph_restyles_instead_of_laying_out(env, monkeypatch):
    from compile_viz.ui import loaders

    laid_out = []
    real = loaders.dot_to_svg
    monkeypatch.setattr(loaders, "dot_to_svg", lambda dot: laid_out.append(dot) or real(dot))
    at = app(run="bundled:mlp_train_step")
    backward = next(g for g in graph_ids(at) if "backward" in g)
    at = app(run="bundled:mlp_train_step", graph=backward, layout="collapsed")
    no_errors(at)
    assert len(laid_out) == 2 and 'id="cvL' in laid_out[-1]  # the forward, then the collapsed backward
    kernel = "triton_per_fused_gelu_gelu_backward_sum_1"
    picker = box(at, "Kernel launch")
    launch = next(int(o.split(" ")[0][1:]) for o in picker.options if f" {kernel} " in o)
    at = picker.set_value(launch).run()
    no_errors(at)
    assert all('id="cvL' not in d for d in laid_out[2:])  # no new layout of the collapsed graph...
    assert len(laid_out) == 3  # ...only the small drawing of the selection
    graphs = _drawings(at)
    assert len(graphs) == 2
    overview, detail = graphs
    assert f'<g id="cvL{launch}" class="node cv-sel">' in overview  # its box, marked in place
    assert overview.count("cv-sel") == 1 and 'stroke="#d62828" stroke-width="3"' in overview
    members = {"mul_4", "sum_2"}  # two of its nodes, marked in the drawing of the selection
    assert all(f"<title>{m}</title>" in detail for m in members) and detail.count('class="node cv-sel"') >= len(members)
    assert "@triton.jit" in html(at) or "triton_heuristics" in html(at)
    at = next(b for b in at.button if b.label == "Clear").click().run()  # back to the one cached layout
    no_errors(at)
    assert len(laid_out) == 3 and len(_drawings(at)) == 1


def _drawings(at) -> list[str]:
    """The graph widgets' drawings (the code pane is a component of its own)."""
    return [h for h in (json.loads(c.proto.json)["html"] for c in at.get("bidi_component")) if "<svg" in h]


def test_loading_a_view_by_url(env):
    at = app(run="bundled:mlp_train_step")
    backward = next(g for g in graph_ids(at) if "backward" in g)
    at = app(run="bundled:mlp_train_step", graph=backward, node="sum_1")
    no_errors(at)
    assert box(at, "Graph").value == backward
    assert box(at, "FX node").value == "sum_1"
    assert "triton_per_fused_sum_0" in box(at, "Kernel launch").options[box(at, "Kernel launch").index]


def test_a_failed_run_shows_its_reason_not_a_traceback(env):
    run_id = failed_run(env)
    at = app(run=run_id)
    assert not at.exception
    assert len(at.error) == 1 and "shapes do not match" in at.error[0].value
    assert "\n" not in at.error[0].value
    assert any("Traceback" in c.value for c in at.code)  # the stderr tail, inside the expander
    assert at.expander[0].label.startswith("stderr")


def test_an_unknown_run_is_one_line(env):
    at = app(run="no-such-run")
    assert not at.exception and len(at.error) == 1 and "no run" in at.error[0].value


def test_server_paths_can_be_turned_off(env, bundled, monkeypatch):
    target = f"path:{bundled / 'pointwise_chain.zip'}"
    at = app(run=target)
    no_errors(at)
    assert metrics(at)["kernels"] == "1"  # allowed by default
    monkeypatch.setenv("COMPILE_VIZ_ALLOW_SERVER_PATHS", "0")
    st.cache_resource.clear()
    at = app(run=target)
    assert not at.exception and len(at.error) == 1
    assert "COMPILE_VIZ_ALLOW_SERVER_PATHS=0" in at.error[0].value and "\n" not in at.error[0].value
    at = page_app("runs_page").run()
    assert not any("path on the server" in t.label for t in at.text_input)
    assert any("COMPILE_VIZ_ALLOW_SERVER_PATHS=0" in c.value for c in at.caption)


def test_uploads_open_with_server_paths_off(env, bundled, monkeypatch):
    monkeypatch.setenv("COMPILE_VIZ_ALLOW_SERVER_PATHS", "0")
    import io
    import zipfile

    buf = io.BytesIO()  # a plain zip of a debug tree (no meta.json): kept as an upload, opened by path
    with zipfile.ZipFile(bundled / "pointwise_chain.zip") as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            if item.filename.startswith("debug/") and not item.is_dir():
                dst.writestr(item.filename.removeprefix("debug/"), src.read(item))
    from compile_viz.ui.runs import save_upload

    key = save_upload("run.zip", buf.getvalue(), env)
    assert key.startswith("path:")
    at = app(run=key)
    no_errors(at)
    assert metrics(at)["kernels"] == "1"


def page_app(module: str) -> AppTest:
    """Return one page run on its own (st.navigation pages are functions, not files)."""
    return AppTest.from_string(f"from compile_viz.ui import {module}\n{module}.page()\n", default_timeout=60)


def test_upload_of_a_bad_zip(env):
    at = page_app("runs_page").run()
    no_errors(at)
    at.file_uploader[0].set_value(("run.zip", b"this is not a zip", "application/zip")).run()
    assert not at.exception
    assert len(at.error) == 1 and "not a zip file" in at.error[0].value


def test_upload_of_a_zip_without_a_debug_run(env, tmp_path):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes.txt", "nothing to see")
    at = page_app("runs_page").run()
    at.file_uploader[0].set_value(("other.zip", buf.getvalue(), "application/zip")).run()
    assert not at.exception and len(at.error) == 1 and "no Inductor debug artifacts" in at.error[0].value


def test_runs_page_lists_stored_runs_newest_first(env):
    first = store_run(env, "pointwise_chain")
    second = failed_run(env)
    at = page_app("runs_page").run()
    no_errors(at)
    ids = [row for row in at.dataframe[0].value["id"]]
    assert ids == [second, first]
    at.text_input[0].set_value("pointwise").run()
    assert list(at.dataframe[0].value["id"]) == [first]


def test_compile_page_shows_the_sample_teaching_note(env):
    at = page_app("compile_page").run()
    no_errors(at)
    assert any("fuses" in i.value or "kernel" in i.value for i in at.info)


def test_compile_button_measures_by_default(env, monkeypatch):
    from compile_viz.ui import jobs

    started = []

    def fake_start(model, options, store):
        started.append((model, options))
        return jobs.CaptureJob(model, options)  # never started: shows as in progress

    monkeypatch.setattr(jobs, "start", fake_start)
    at = page_app("compile_page").run()
    at.button[0].click().run()
    no_errors(at)
    (model, options), = started
    assert options.measure is True and options.device == "auto"
