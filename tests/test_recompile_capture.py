"""A TORCH_TRACE log with a graph break and a recompile, captured on the CPU with the project's
CLI (the `.item()` branch sample called with a 64x64 and then a 32x48 input,
tests/recompile_model.py), opened in the Compiles page and the Viewer."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from compile_viz.artifacts.trace.discover import parse_trace_path
from tests.conftest import ROOT, compile_viz_cli
from tests.test_app_fixtures import no_errors
from tests.test_compiles_page import env, page  # noqa: F401  (env: a fixture)

SIZE_MISMATCH = "tensor 'x' size mismatch at index 0. expected 64, actual 32"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    home = tmp_path_factory.mktemp("recompile_home")
    proc = compile_viz_cli("capture", "tests/recompile_model.py:GRAPH_BREAK_TWO_SHAPES", "--device", "cpu",
                           "--home", str(home))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return Path(proc.stdout.strip().splitlines()[-1])


def test_the_trace_holds_a_graph_break_and_a_recompile(run):
    (log,) = parse_trace_path(str(run / "trace")).logs
    status = {c.id: c.status for c in log.compiles}
    assert status["0/0"] == status["0/1"] == "graph break"
    assert status["0/1_1"] == "ok after restart"
    assert log.compile("0/1_1").recompile_reasons == (f"0/0: {SIZE_MISMATCH}",)
    assert "Tensor.item()" in log.compile("0/0").graph_break_reasons[0]


def test_compiles_page_shows_the_recompile_reason_and_the_graph_break(env, run):  # noqa: F811
    at = page(run=f"path:{run / 'debug'}")
    no_errors(at)
    ids = [o.split(" ", 1)[0] for o in at.selectbox[0].options]
    assert {"[0/0]", "[0/1]", "[0/1_1]", "[1/1_1]"} <= set(ids)
    table = at.dataframe[0].value
    assert f"the guards of compile 0/0 failed: {SIZE_MISMATCH}" in set(table["recompile reason"])
    assert any("Tensor.item()" in c.value for c in at.code)  # 0/0, shown first: its graph break

    at.selectbox[0].select("0/1_1").run()
    no_errors(at)
    text = "\n".join(m.value for m in at.markdown)
    assert "Why it recompiled" in text and f"the guards of compile 0/0 failed: {SIZE_MISMATCH}" in text

    at = page(run=f"path:{run / 'debug'}", compile="0/1")
    no_errors(at)
    assert at.selectbox[0].value == "0/1"
    assert any("Graph break" in e.label for e in at.expander)
    assert any("Tensor.item()" in c.value for c in at.code)


def test_viewer_opens_the_run(env, run):  # noqa: F811
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["run"] = f"path:{run / 'debug'}"
    at.run()
    no_errors(at)
    graph = next(s for s in at.selectbox if s.label == "Graph")
    assert len(graph.options) == 4  # 0/0_1, 1/0 and, recompiled for the new shape, 0/1_1 and 1/1_1


def test_each_graph_of_the_run_gets_its_launch_stacks(run):
    from compile_viz.artifacts import parse_path

    graphs = parse_path(str(run)).graphs
    assert len(graphs) == 4 and all(g.kernel_stacks is not None for g in graphs)
    assert all(ks.innermost[0][0].endswith("graph_break_item.py") for g in graphs for ks in g.kernel_stacks.launches)
