"""Recorded jobs in the dashboard: the two-GPU DDP and FSDP2 runs that `compile-viz record` made on
the GPU machine (bench/gpu_record_jobs.sh; tests/fixtures/jobs/) list on the Runs page with their
command and ranks, and open in the Viewer like any run, on either rank's graphs."""

from __future__ import annotations

import pytest
from test_app import app, box, metrics, page_app
from test_app_fixtures import REPO, fresh_store, make_bundled, need_corpus, no_errors

JOBS = REPO / "tests" / "fixtures" / "jobs"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    need_corpus()
    return make_bundled(tmp_path_factory.mktemp("sample_runs"), cases=("pointwise_chain",))


@pytest.fixture
def env(tmp_path, bundled, monkeypatch):
    yield from fresh_store(tmp_path / "home", bundled, monkeypatch)


@pytest.mark.parametrize("name", ["gpt2_ddp_2gpu", "gpt2_fsdp2_2gpu"])
def test_a_recorded_two_gpu_job_opens_in_the_viewer(env, name):
    run = env.import_zip(JOBS / f"{name}.zip")
    assert run.kind == "job" and run.meta["job"]["ranks"] == [0, 1]
    at = app(run=run.id)
    no_errors(at)
    graphs = box(at, "Graph").options
    assert len(graphs) == len(run.meta["graphs"])
    pids = {g.split(" · ", 1)[1].split("/", 1)[0] for g in graphs}
    assert len(pids) == 2  # both ranks' processes
    assert int(metrics(at)["kernels"]) > 0
    at = app(run=run.id, graph=run.meta["graphs"][-1].split("torchinductor/")[0].rstrip("/").rsplit("/", 1)[-1]
             + "/" + run.meta["graphs"][-1].rsplit("/", 1)[-1])
    no_errors(at)


def test_the_runs_page_shows_a_jobs_command_and_ranks(env):
    run = env.import_zip(JOBS / "gpt2_ddp_2gpu.zip")
    at = page_app("runs_page").run()
    no_errors(at)
    table = at.dataframe[0].value
    row = table[table["id"] == run.id].iloc[0]
    assert row["kind"] == "job" and row["ranks"] == 2 and row["exit"] == 0
    assert row["command"] == "torchrun --nproc-per-node 2 tests/jobs/train_gpt2_dist.py --strategy ddp"
    assert row["device"] == "cuda" and "bfloat16" in row["dtype"]
    at.text_input[0].set_value("train_gpt2_dist.py").run()  # a job is found by its command line
    assert list(at.dataframe[0].value["id"]) == [run.id]
