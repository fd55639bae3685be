"""A wrong result is hard to miss (issue 33, point 5): a run whose compiled results are wrong says so
at the top of the Viewer, as a badge on the Runs page and in `compile-viz runs`, and its hint follows
the backend ladder (one function, measurements.ladder.next_step), not the tensor alone.

The run is real: `compile-viz capture compiled_differs --device cpu --measure` (the sample wrong on
purpose: the hidden layer halved under torch.compiler.is_compiling()), exported to
tests/fixtures/measure/compiled_differs_cpu.zip. Its ladder is red at eager: graph capture (Dynamo).
An older capture wrote the hint before the ladder ran (the after-AOT minifier); the tests put that
note back to check that the headline follows the ladder on such runs too.
"""

from __future__ import annotations

import json
import zipfile

import pytest
from test_app_fixtures import fresh_store, no_errors, run_app

from compile_viz.measurements import MeasureSummary, headline_note, next_step
from compile_viz.measurements.ladder import NEXT_STEP
from tests.conftest import ROOT, SAMPLE_RUNS, compile_viz_cli

WRONG = ROOT / "tests" / "fixtures" / "measure" / "compiled_differs_cpu.zip"
DYNAMO = "graph capture (Dynamo)"
# what capture wrote before the hint followed the ladder (verify/accuracy.hint for a forward output)
MINIFIER_HINT = ("the forward graph computes this differently; PyTorch's accuracy minifier narrows it: "
                 "TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4.")


def _meta() -> dict:
    with zipfile.ZipFile(WRONG) as zf:
        return json.loads(zf.read("meta.json"))


def _older(meta: dict) -> dict:
    """The same run as an older capture wrote it: the note's hint chosen before the ladder ran."""
    measure = dict(meta["measure"])
    failure = measure["correctness_note"].partition(" Hint: ")[0]
    measure["correctness_note"] = f"{failure} Hint: {MINIFIER_HINT}"
    return {**meta, "measure": measure}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A store holding the wrong run and a bundled-style right one (matmul_softmax, H100)."""
    for s in fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch):
        s.import_zip(SAMPLE_RUNS / "matmul_softmax.zip")
        yield s


def test_the_real_run_is_wrong_at_graph_capture_and_its_hint_is_the_ladders():
    summary = MeasureSummary.from_json(_meta()["measure"])
    assert summary.correctness == "wrong" and summary.ladder_first == DYNAMO
    assert summary.correctness_note.startswith("output: worst at [")
    assert summary.headline.endswith(f"Hint: {next_step(DYNAMO)}.")
    assert summary.wrong_badge == f"✗ wrong, first differs at {DYNAMO}"


def test_an_older_captures_minifier_hint_gives_way_to_the_ladder():
    older = MeasureSummary.from_json(_older(_meta())["measure"])
    assert "TORCHDYNAMO_REPRO_AFTER=aot" in older.correctness_note
    assert "minifier" not in older.headline and NEXT_STEP[DYNAMO] in older.headline
    assert older.headline.startswith(older.correctness_note.partition(" Hint: ")[0])
    # no ladder, or a ladder where every stage agreed: the note is the capture's own
    assert headline_note(older.correctness_note, None) == older.correctness_note
    assert headline_note(older.correctness_note, "") == older.correctness_note
    assert next_step("") is None and next_step("Inductor", "lowering of tanh").endswith("names lowering of tanh")


def test_compile_viz_runs_marks_the_wrong_run(store):
    wrong = store.import_zip(WRONG)
    proc = compile_viz_cli("runs", "--home", str(store.home))
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()}
    assert f"complete  ✗ wrong, first differs at {DYNAMO}  " in lines[wrong.id]
    (right,) = (line for run_id, line in lines.items() if run_id != wrong.id)
    assert "wrong" not in right


def test_the_runs_page_shows_a_wrong_badge(store):
    from streamlit.testing.v1 import AppTest

    wrong = store.import_zip(WRONG)
    at = AppTest.from_string("from compile_viz.ui import runs_page\nruns_page.page()\n", default_timeout=60).run()
    no_errors(at)
    table = at.dataframe[0].value
    results = dict(zip(table["id"], table["result"], strict=True))
    assert results.pop(wrong.id) == f"✗ wrong, first differs at {DYNAMO}"
    assert set(results.values()) == {""}


def test_the_viewer_says_wrong_at_the_top_with_the_ladders_hint(store):
    wrong = store.import_zip(WRONG)
    meta_path = wrong.path / "meta.json"
    meta_path.write_text(json.dumps(_older(json.loads(meta_path.read_text()))))  # as an older capture wrote it
    at = run_app(ROOT / "app.py", run=wrong.id)
    no_errors(at)
    bodies = [h.proto.body for h in at.get("html")]
    top = bodies[0]
    assert "cv-wrong" in top and "Compiled results are wrong" in top
    assert "first differs at graph capture (Dynamo)" in top and "minifier" not in top
    summary = next(b for b in bodies if "Checked with:" in b)  # the verdict under the charts agrees
    assert "is_compiling()" in summary and "minifier" not in summary
    # a run whose results are right has no banner
    right = next(r for r in store.list_runs() if r.id != wrong.id)
    at = run_app(ROOT / "app.py", run=right.id)
    no_errors(at)
    assert not any("cv-wrong" in h.proto.body for h in at.get("html"))
