"""Real CPU captures (torch 2.13): complete runs, repeat and parallel captures, failures, cancel."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from compile_viz.capture import CaptureOptions, capture
from compile_viz.store import RunStore
from tests.conftest import in_parallel

pytestmark = pytest.mark.slow
GRAPH_FILES = ("fx_graph_readable.py", "fx_graph_transformed.py", "ir_pre_fusion.txt", "ir_post_fusion.txt",
               "output_code.py")
CPU = CaptureOptions(device="cpu", timeout_s=300)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> RunStore:
    return RunStore(tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def runs(store):
    """The real captures the tests below look at, made once: name -> Run."""
    out = {}
    for key, model, opts in [
        ("tiny_1", "tiny_linear_relu", CPU),
        ("tiny_2", "tiny_linear_relu", CPU),
        ("break", "graph_break_item", CPU),
        ("train", "mlp_gelu", CaptureOptions(device="cpu", train=True, timeout_s=300)),
    ]:
        out[key] = capture(model, opts, store=store)
    return out


def assert_complete(run) -> None:
    assert run.ok, f"{run.model}: {run.reason}\n{run.meta.get('stderr_tail')}"
    assert run.path.is_dir() and not run.path.name.startswith(".")
    graphs = [run.debug_dir / g for g in run.meta["graphs"]]
    assert graphs, "no Inductor graph folders"
    for g in graphs:
        assert g.parent.name == "torchinductor"
        for name in GRAPH_FILES:
            assert (g / name).is_file(), f"{g.name} lacks {name}"
    assert list(run.debug_dir.glob("torch_compile_debug/run_*/torchdynamo/debug.log"))
    assert list(run.trace_dir.glob("*.log")), "TORCH_TRACE wrote nothing"
    assert (run.logs_dir / "stdout.txt").is_file() and (run.logs_dir / "stderr.txt").is_file()
    meta = json.loads((run.path / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["reason"] is None
    assert meta["versions"]["torch"].startswith("2.") and meta["versions"]["python"]
    assert meta["hardware"]["device"] == "cpu" and meta["hardware"]["cpu"]
    assert 0 < meta["timings"]["compile_s"] <= meta["timings"]["total_s"] <= meta["timings"]["wall_s"]
    assert not (run.path / "inductor_cache").exists()


def test_inference_run_is_complete(runs):
    run = runs["tiny_1"]
    assert_complete(run)
    assert run.meta["resolved"] == {**run.meta["resolved"], "device": "cpu", "dtype": "fp32", "train": False}
    assert run.meta["graph_breaks"] == [] and len(run.meta["graphs"]) == 1


def test_same_model_twice_both_complete(runs):
    # A warm Inductor cache would skip the graph folders on the second run; caches are off and fresh.
    first, second = runs["tiny_1"], runs["tiny_2"]
    assert_complete(second)
    assert first.id != second.id
    assert len(first.meta["graphs"]) == len(second.meta["graphs"]) == 1


def test_graph_break_recorded_with_user_file_line(runs):
    run = runs["break"]
    assert_complete(run)
    assert len(run.meta["graphs"]) == 2
    first = run.meta["graph_breaks"][0]
    assert first["file"].endswith("sample_models/graph_break_item.py")
    src = Path(first["file"]).read_text().splitlines()[first["line"] - 1]
    assert ".item()" in src
    assert "item()" in first["summary"]


def test_training_step_has_forward_and_backward_graphs(runs):
    run = runs["train"]
    assert_complete(run)
    names = " ".join(run.meta["graphs"])
    assert "forward" in names and "backward" in names
    assert run.meta["resolved"]["train"] is True


def test_runs_listed_newest_first_and_searchable(store, runs):
    listed = [r.id for r in store.list_runs()]
    assert listed.index(runs["train"].id) < listed.index(runs["tiny_1"].id)
    assert {r.id for r in store.list_runs("graph_break")} == {runs["break"].id}


def test_parser_reads_the_runs(runs):
    artifacts = pytest.importorskip("compile_viz.artifacts")
    if not hasattr(artifacts, "parse_path"):
        pytest.skip("compile_viz.artifacts.parse_path not built yet")
    for run in runs.values():
        parsed = artifacts.parse_path(str(run.debug_dir))
        assert len(parsed.graphs) == len(run.meta["graphs"]), run.model
        assert all(g.output_code is not None for g in parsed.graphs)


def test_two_parallel_captures_complete_and_distinct(tmp_path):
    store = RunStore(tmp_path / "home")
    a, b = in_parallel(*[lambda: capture("pointwise_chain", CPU, store=store)] * 2)
    assert_complete(a)
    assert_complete(b)
    assert a.id != b.id and a.path != b.path
    # Each run's debug tree holds only its own child's output.
    pids = [{p.name.split("pid_")[1] for p in r.debug_dir.glob("torch_compile_debug/run_*")} for r in (a, b)]
    assert len(pids[0]) == len(pids[1]) == 1 and pids[0] != pids[1]
    assert {r.id for r in store.list_runs()} == {a.id, b.id}
    assert not [p for p in store.runs_dir.iterdir() if p.name.startswith(".")]


# -- failures: each becomes a stored, failed run with a one-line reason ---------------------------
def _user_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "user_model.py"
    path.write_text(body)
    return str(path)


USER_PRELUDE = """\
from sample_models import SampleSpec


def example_inputs(device, dtype):
    import torch
    return (torch.randn(4, 4, device=device, dtype=dtype),)

"""


def test_raising_model_gives_failed_run(tmp_path):
    path = _user_file(tmp_path, USER_PRELUDE + """\
def boom(x):
    raise ValueError("the model is broken on purpose")


SPEC = SampleSpec("boom", "Boom", "raises", build=lambda d, t: boom, example_inputs=example_inputs)
""")
    run = capture(path, CPU, store=RunStore(tmp_path / "home"))
    assert run.status == "failed"
    assert "ValueError" in run.reason and "broken on purpose" in run.reason
    assert "\n" not in run.reason
    assert "broken on purpose" in run.meta["stderr_tail"]
    assert (run.path / "meta.json").is_file()


def test_syntax_error_in_user_file_gives_failed_run(tmp_path):
    path = _user_file(tmp_path, "def build(device, dtype:\n    return None\n")
    run = capture(path, CPU, store=RunStore(tmp_path / "home"))
    assert run.status == "failed"
    assert run.reason.startswith("syntax error in user_model.py line 1")


# A model whose build sleeps far past any timeout the tests set.
SLEEPY_MODEL = USER_PRELUDE + """\
import time


def build(device, dtype):
    time.sleep(120)


SPEC = SampleSpec("sleepy", "Sleepy", "sleeps", build=build, example_inputs=example_inputs)
"""


def test_sleeping_model_times_out_and_group_is_killed(tmp_path):
    path = _user_file(tmp_path, SLEEPY_MODEL)
    t = time.monotonic()
    run = capture(path, CaptureOptions(device="cpu", timeout_s=8), store=RunStore(tmp_path / "home"))
    assert time.monotonic() - t < 30
    assert run.status == "failed"
    assert run.reason.startswith("timed out after 8 s while building")


def test_cancel_from_another_thread(tmp_path):
    path = _user_file(tmp_path, SLEEPY_MODEL)
    cancel, phases = threading.Event(), []

    def on_progress(p):
        phases.append(p.phase)
        if p.phase == "building":
            threading.Timer(0.5, cancel.set).start()

    run = capture(path, CPU, store=RunStore(tmp_path / "home"), on_progress=on_progress, cancel=cancel)
    assert run.status == "failed" and run.reason.startswith("cancelled while building")
    assert phases[0] == "loading" and phases[-1] == "stored"


def test_user_code_refused_when_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPILE_VIZ_ALLOW_USER_CODE", "0")
    path = _user_file(tmp_path, USER_PRELUDE)
    run = capture(path, CPU, store=RunStore(tmp_path / "home"))
    assert run.status == "failed" and "COMPILE_VIZ_ALLOW_USER_CODE=0" in run.reason
    assert "exit_code" not in run.meta  # no child was started


def test_unknown_inductor_option_fails_before_compiling(tmp_path):
    opts = CaptureOptions.make(device="cpu", inductor_options={"no_such_option": 1})
    run = capture("tiny_linear_relu", opts, store=RunStore(tmp_path / "home"))
    assert run.status == "failed"
    assert run.reason.startswith("unknown Inductor option 'no_such_option'")
    assert run.meta["graphs"] == []


def test_real_run_export_import_roundtrip(runs, tmp_path):
    run = runs["break"]
    zip_path = RunStore(run.path.parents[1]).export_run(run.id, tmp_path / "run.zip")
    other = RunStore(tmp_path / "other")
    imported = other.import_zip(zip_path)
    assert imported.id == run.id and imported.meta == run.meta
    files = sorted(p.relative_to(run.path).as_posix() for p in run.path.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(imported.path).as_posix() for p in imported.path.rglob("*") if p.is_file())
    assert [r.id for r in other.list_runs()] == [run.id]
