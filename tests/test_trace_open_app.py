"""Opening a TORCH_TRACE from the Runs page (upload or server path) and the Viewer's compile section,
under AppTest, on logs written by other people (tlparse's test inputs) and a bundled run's trace/."""

from __future__ import annotations

import gzip
import io
import zipfile

import pytest
from streamlit.testing.v1 import AppTest
from test_app_fixtures import fresh_store, no_errors, run_app, store_run

from compile_viz.artifacts import parse_path
from compile_viz.linking.graph_labels import compile_of
from tests.conftest import CORPUS, ROOT, SAMPLE_RUNS, corpus_required

TRACES = CORPUS / "traces" / "tlparse-tests"
SECTION = "viewer_compile_section"  # the expander's key (compile_section.KEY)
# The app as app.py builds it, with the Runs page first: AppTest cannot open a page by its URL.
RUNS_FIRST = """
import streamlit as st
from compile_viz.ui import compiles_page, page_registry, runs_page, viewer

pages = dict(
    runs=st.Page(runs_page.page, title="Runs", url_path="runs", default=True),
    viewer=st.Page(viewer.page, title="Viewer", url_path="viewer"),
    compiles=st.Page(compiles_page.page, title="Compiles", url_path="compiles"),
)
page_registry.register(pages)
st.navigation(list(pages.values())).run()
"""


@pytest.fixture
def store(tmp_path, monkeypatch):
    corpus_required()
    yield from fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch)


def runs_page() -> AppTest:
    at = AppTest.from_string(RUNS_FIRST, default_timeout=120).run()
    no_errors(at)
    return at


def upload(name: str, data: bytes) -> AppTest:
    at = runs_page()
    at.file_uploader[0].set_value((name, data, "application/octet-stream")).run()
    return at


def opened_run(at: AppTest, store) -> str:
    """The stored run the page switched to (its id in ?run=)."""
    no_errors(at)
    key = at.query_params["run"]
    key = key[0] if isinstance(key, list) else key
    assert store.get(key).meta["source"]["kind"] == "torch_trace"
    return key


def test_uploading_a_log_stores_it_and_opens_the_viewer(store):
    at = upload("simple.log", (TRACES / "simple.log").read_bytes())
    run = opened_run(at, store)
    assert at.subheader[0].value.startswith("simple · ") and "graph" in at.query_params
    assert [r.id for r in store.list_runs()] == [run]
    assert store.get(run).meta["source"]["path"] == "simple.log"
    assert not list((store.home / "uploads").iterdir())  # the upload itself is not kept twice
    assert any(e.label.startswith("Compile: guards") for e in at.expander)


def test_uploading_a_failed_compile_opens_the_compiles_page(store):
    at = upload("comp_failure.log", (TRACES / "comp_failure.log").read_bytes())
    opened_run(at, store)
    assert at.subheader[0].value.startswith("Compiles · comp_failure")
    assert any("failed" in m.value for m in at.markdown)


def test_uploading_gzip_and_a_zip_of_rank_logs(store):
    at = upload("simple.log.gz", gzip.compress((TRACES / "simple.log").read_bytes()))
    run = opened_run(at, store)
    assert [p.name for p in (store.get(run).path / "trace").iterdir()] == ["simple.log"]

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for log in sorted((TRACES / "multi_rank_logs").iterdir()):
            zf.write(log, f"multi_rank_logs/{log.name}")
    at = upload("job_logs.zip", buf.getvalue())
    run = opened_run(at, store)
    assert store.get(run).model == "job_logs" and store.get(run).meta["trace"]["ranks"] == [0, 1, 2, 3]
    assert at.subheader[0].value.startswith("job_logs · ")
    # ranks 1 and 3 compiled graphs (0 and 2 failed before Inductor): a rank picker, then rank 1's graphs
    assert at.selectbox[0].options == ["rank 1 (15 graphs)", "rank 3 (7 graphs)"]
    assert len(at.selectbox[1].options) == 15 and at.selectbox[1].options[1].startswith("rank 1 · [0/1] kernel")


def test_a_file_that_is_not_a_trace_is_one_line_with_details(store):
    at = upload("LICENSE.txt", (TRACES / "LICENSE").read_bytes())
    assert not at.exception and len(at.error) == 1
    message = at.error[0].value
    assert message.startswith("LICENSE.txt holds no TORCH_TRACE log") and "give a log written with" in message
    assert "\n" not in message
    (details,) = [e for e in at.expander if e.label == "Details"]
    assert "LICENSE.txt: 1484 bytes; its first lines:" in at.code[0].value and details
    assert store.list_runs() == []


def test_a_server_path_to_a_trace_folder_becomes_a_stored_run(store):
    at = runs_page()
    at.text_input[1].input(str(TRACES / "multi_rank_logs")).run()
    at.button[-1].click().run()
    run = opened_run(at, store)
    assert store.get(run).meta["source"]["path"] == str(TRACES / "multi_rank_logs")
    at = runs_page()  # opened again: the run already stored, not a copy
    at.text_input[1].input(str(TRACES / "multi_rank_logs")).run()
    at.button[-1].click().run()
    assert opened_run(at, store) == run and len(store.list_runs()) == 1


def test_a_server_path_that_is_nothing_is_one_line_with_details(store):
    at = runs_page()
    at.text_input[1].input(str(TRACES / "LICENSE")).run()
    at.button[-1].click().run()
    assert not at.exception and len(at.error) == 1 and "\n" not in at.error[0].value
    assert any(e.label == "Details" for e in at.expander)


def open_section(at: AppTest) -> AppTest:
    at.session_state[SECTION] = True
    at.run()
    no_errors(at)
    return at


def test_viewer_section_on_an_imported_log_shows_guards_and_phases(store):
    from compile_viz.trace_import import import_path

    run = import_path(store, TRACES / "simple.log").run
    at = run_app(ROOT / "app.py", run=run.id)
    no_errors(at)
    assert not at.get("plotly_chart")  # collapsed: the section is read only when opened
    at = open_section(at)
    parsed = parse_path(str(run.path))
    log, c = compile_of(parsed.logs, parsed.graphs[0])
    assert any(m.value == f"##### Guards ({c.guard_count})" for m in at.markdown)
    link = next(m.value for m in at.markdown if "open on the Compiles page" in m.value)
    assert f"/compiles?run={run.id}&compile=0%2F0" in link
    assert at.get("plotly_chart")
    guards = next(t for t in at.text_input if t.label == "Search guards")
    guards.input("TENSOR_MATCH").run()
    shown = at.code[[i for i, m in enumerate(at.code) if "TENSOR_MATCH" in m.value][0]].value.splitlines()
    assert shown and all("TENSOR_MATCH" in line for line in shown)
    assert len(shown) == sum("TENSOR_MATCH" in g for g in c.guards) < len(c.guards)


def test_viewer_section_on_a_bundled_run_joins_debug_graphs_to_their_compile(store):
    at = run_app(ROOT / "app.py", run="bundled:graph_break_item", graph="model__1_inference_1.1")
    at = open_section(at)
    assert any("[1/0] ok" in m.value for m in at.markdown)
    at = run_app(ROOT / "app.py", run="bundled:graph_break_item", graph="model__0_inference_0.0")
    at = open_section(at)
    assert any("[0/0_1] ok after restart" in m.value for m in at.markdown)
    assert any("first attempt" in c.value for c in at.caption) and at.get("plotly_chart")


def test_no_section_for_a_run_without_a_trace(store):
    run = store_run(store, "pointwise_chain")
    at = run_app(ROOT / "app.py", run=run)
    no_errors(at)
    assert not any(e.label.startswith("Compile: guards") for e in at.expander)


def test_the_default_run_skips_a_trace_with_no_graph(store):
    from compile_viz.trace_import import import_path
    from compile_viz.ui.runs import default_run_key

    simple = import_path(store, TRACES / "simple.log").run
    import_path(store, TRACES / "comp_failure.log")  # newer, but nothing for the Viewer to draw
    assert default_run_key(store) == simple.id
    at = run_app(ROOT / "app.py")
    no_errors(at)
    assert at.subheader[0].value.startswith("simple · ")


def test_the_viewer_on_a_trace_with_no_graph_points_to_the_compiles_page(store):
    from compile_viz.trace_import import import_path

    failed = import_path(store, TRACES / "comp_failure.log").run
    at = run_app(ROOT / "app.py", run=failed.id)
    no_errors(at)
    assert any("Compiles page" in i.value for i in at.info)


def test_one_compile_on_four_ranks_gets_four_graph_labels(store):
    from compile_viz.trace_import import import_path

    ranks = import_path(store, TRACES / "multi_rank_logs").run
    at = run_app(ROOT / "app.py", run=ranks.id)
    no_errors(at)
    options = next(s for s in at.selectbox if s.label == "Graph").options
    assert len(options) > 4 and len(set(options)) == len(options)
