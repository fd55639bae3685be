"""A URL that names what a run does not have (`graph=`, `kernel=`, `launch=`, `node=`, `rank=`,
`compile=`, the Compare page's `cid=`) says so in one line, with a link to the nearest that it has,
and never shows something else unsaid (issue 33, point 3); and page_url, which every link is made
from, names each page where it is served. Under AppTest, on the FSDP2 job recorded on two H100s
(tests/fixtures/jobs/gpt2_fsdp2_2gpu.zip: two ranks, debug folders and TORCH_TRACE logs)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from compile_viz.artifacts import parse_path
from compile_viz.linking.graph_labels import graph_rank
from compile_viz.ui.page_registry import page_url
from compile_viz.ui.unknown import md_text, nearest, nearest_number
from tests.conftest import ROOT, SAMPLE_RUNS
from tests.test_app_fixtures import fresh_store, run_app

APP = ROOT / "app.py"
FSDP = ROOT / "tests" / "fixtures" / "jobs" / "gpt2_fsdp2_2gpu.zip"
BACKWARD = "run_2026_11_26_11_17_50_789364-pid_6486/model__1_backward_24.12"  # rank 1 · [10/0] forward · backward


@pytest.fixture(scope="module")
def fsdp(tmp_path_factory):
    """The FSDP2 job imported into a store of its own: (home, run id, {graph id: rank})."""
    from compile_viz.store import RunStore

    home = tmp_path_factory.mktemp("unknown_params")
    run = RunStore(home).import_zip(FSDP)
    return home, run.id, {g.id: graph_rank(g) for g in parse_path(str(run.path)).graphs}


@pytest.fixture
def job(fsdp, monkeypatch):
    home, run_id, ranks = fsdp
    for _ in fresh_store(home, SAMPLE_RUNS, monkeypatch):
        yield run_id, ranks


def page(module: str, **params) -> AppTest:
    return run_app(f"from compile_viz.ui import {module}\n{module}.page()\n", **params)


def the_warning(at: AppTest) -> str:
    """The one warning on the page, checked to be one line with one link; return its text."""
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.warning) == 1, [w.value for w in at.warning]
    text = at.warning[0].value
    assert "\n" not in text and text.count("](") == 1
    return text


def link_of(text: str) -> tuple[str, dict[str, str]]:
    """The path and query parameters of the one markdown link in `text`."""
    url = text.split("](", 1)[1].split(")", 1)[0]
    parts = urlsplit(url)
    return parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}


def param(at: AppTest, name: str) -> str:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else (value or "")


def box(at: AppTest, label: str):
    return next(s for s in at.selectbox if s.label == label)


def test_page_url_names_each_page_at_its_own_path():
    assert page_url("viewer", run="r 1", graph="a/b") == "/viewer?run=r%201&graph=a%2Fb"
    assert page_url("compiles", run="r", rank=1, compile="0/0") == "/compiles?run=r&rank=1&compile=0%2F0"
    assert page_url("compare", run="a", compare="b") == "/compare?run=a&compare=b"
    assert page_url("runs") == "/runs" and page_url("viewer", graph="", kernel=None) == "/viewer"
    with pytest.raises(KeyError):
        page_url("graphs")


def test_page_url_keeps_the_servers_base_path(monkeypatch):
    monkeypatch.setattr(st, "get_option", lambda name: "/cv/" if name == "server.baseUrlPath" else None)
    assert page_url("compiles", run="r") == "/cv/compiles?run=r"


def test_the_root_opens_the_page_its_parameters_ask_for(job):
    run_id, _ = job
    assert run_app(APP, run=run_id).get("selectbox")[0].label == "Rank"  # the Viewer
    at = run_app(APP, run=run_id, compare=run_id)  # `compile-viz diff`'s link and older pages'
    assert not at.exception and any(s.label == "Run A" for s in at.selectbox)


def test_nearest_by_text_and_by_number():
    labels = {"g0": "rank 0 · [10/0] forward · forward", "g1": "rank 1 · [10/0] forward · forward",
              "g2": "rank 1 · [10/0] forward · backward"}
    assert nearest("rank 1 [10/0] forward", labels) == "g1"  # the id an old Compiles link wrote
    assert nearest("g2", labels) == "g2" and nearest("x", {}) is None
    assert nearest_number("7", {"0": "rank 0", "1": "rank 1"}) == "1"
    assert nearest_number("rank 0", {"0": "rank 0", "1": "rank 1"}) == "0"
    assert md_text("[10/0] *x*_$y$") == r"\[10/0\] \*x\*\_\$y\$"


def test_an_unknown_graph_is_said_with_the_nearest_linked(job):
    run_id, ranks = job
    at = run_app(APP, run=run_id, graph="rank 1 [10/0] forward")  # issue 33's link: a trace's id for a debug run
    text = the_warning(at)
    assert text.startswith("No graph “rank 1 \\[10/0\\] forward” in this run: showing rank 0")
    path, query = link_of(text)
    assert path == "/viewer" and query["run"] == run_id and query["rank"] == "1"
    assert ranks[query["graph"]] == 1 and query["graph"].endswith("model__1_forward_2.1")
    assert box(at, "Graph").value == param(at, "graph")  # what is shown is in the URL now, and was said
    follow = run_app(APP, **query)
    assert not follow.warning and box(follow, "Graph").value == query["graph"]


def test_a_graph_of_another_rank_opens_on_its_rank(job):
    run_id, _ = job
    at = run_app(APP, run=run_id, graph=BACKWARD)  # no rank= in the link: the graph says rank 1
    assert not at.exception and not at.warning
    assert box(at, "Rank").value == 1 and box(at, "Graph").value == BACKWARD
    assert param(at, "rank") == "1"


def test_an_unknown_rank_is_said_with_the_nearest_linked(job):
    run_id, _ = job
    at = run_app(APP, run=run_id, rank="7")
    text = the_warning(at)
    assert text.startswith("No rank “7” in this run: showing rank 0")
    assert link_of(text)[1]["rank"] == "1"
    assert box(at, "Rank").value == 0


def test_an_unknown_kernel_launch_or_node_is_said_and_nothing_else_selected(job):
    run_id, _ = job
    at = run_app(APP, run=run_id, graph=BACKWARD, kernel="triton_per_fused_nope_0")
    text = the_warning(at)
    assert text.startswith("No kernel “triton\\_per\\_fused\\_nope\\_0” in this graph: showing no selection")
    _, query = link_of(text)
    assert query["graph"] == BACKWARD and query["kernel"].startswith("triton_") and query["launch"].isdigit()
    assert box(at, "Kernel launch").value is None
    follow = run_app(APP, **query)
    assert not follow.warning and box(follow, "Kernel launch").value == int(query["launch"])

    at = run_app(APP, run=run_id, graph=BACKWARD, launch="999")
    text = the_warning(at)
    assert text.startswith("No launch “999” in this graph") and link_of(text)[1]["launch"] == "28"  # the last

    at = run_app(APP, run=run_id, graph=BACKWARD, node="no_such_node")
    text = the_warning(at)
    assert text.startswith("No node “no\\_such\\_node” in this post-grad graph: showing no node selected")
    assert box(at, "FX node").value is None


def test_an_unknown_compile_id_is_said_on_the_compiles_page(job):
    run_id, _ = job
    at = page("compiles_page", run=run_id, rank="1", compile="10/9")
    text = the_warning(at)
    assert text.startswith("No compile id “10/9” in rank 1's log: showing \\[0/0\\]")
    path, query = link_of(text)
    assert path == "/compiles" and query["compile"].startswith("10/") and query["rank"] == "1"
    follow = page("compiles_page", **query)
    assert not follow.warning and param(follow, "compile") == query["compile"]
    assert any(f"/viewer?run={run_id}&rank=1&graph=" in m.value for m in follow.markdown)  # its graphs, in the Viewer


def test_an_unknown_compile_id_on_the_compare_page_is_said(job):
    run_id, _ = job
    at = run_app(APP, run=run_id, compare=run_id, rank="0", compare_rank="1", cid="99/0")
    text = the_warning(at)
    assert text.startswith("No graph of compile id “99/0” in either side: showing the first pair of graphs")
    path, query = link_of(text)
    assert path == "/compare" and query["compare"] == run_id and query["compare_rank"] == "1"
