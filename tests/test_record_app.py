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
def test_a_recorded_two_gpu_job_opens_in_the_viewer_rank_by_rank(env, name):
    run = env.import_zip(JOBS / f"{name}.zip")
    assert run.kind == "job" and run.meta["job"]["ranks"] == [0, 1]
    at = app(run=run.id)
    no_errors(at)
    half = len(run.meta["graphs"]) // 2
    assert box(at, "Rank").options == [f"rank 0 ({half} graphs)", f"rank 1 ({half} graphs)"]
    labels = box(at, "Graph").options
    assert len(labels) == len(run.meta["graphs"]) // 2 and all(t.startswith("rank 0 · [") for t in labels)
    assert int(metrics(at)["kernels"]) > 0
    at = app(run=run.id, rank="1")
    no_errors(at)
    assert all(t.startswith("rank 1 · [") for t in box(at, "Graph").options)


def test_ddp_pieces_are_named(env):
    run = env.import_zip(JOBS / "gpt2_ddp_2gpu.zip")
    labels = box(app(run=run.id), "Graph").options
    # DDP's optimizer split the model's frame at its buckets: three forward and three backward pieces
    assert "rank 0 · [1/0_1] forward · forward (1 of 3)" in labels
    assert "rank 0 · [1/0_1] forward · backward (3 of 3)" in labels


def test_the_runs_page_shows_a_jobs_command_and_ranks(env):
    run = env.import_zip(JOBS / "gpt2_ddp_2gpu.zip")
    at = page_app("runs_page").run()
    no_errors(at)
    table = at.dataframe[0].value
    row = table[table["id"] == run.id].iloc[0]
    assert row["kind"] == "job" and row["ranks"] == "2" and row["exit"] == "0"  # the table's cells are text
    assert row["command"] == "torchrun --nproc-per-node 2 tests/jobs/train_gpt2_dist.py --strategy ddp"
    assert row["device"] == "cuda" and "bfloat16" in row["dtype"]
    at.text_input[0].set_value("train_gpt2_dist.py").run()  # a job is found by its command line
    assert list(at.dataframe[0].value["id"]) == [run.id]


def test_compare_two_ranks_of_one_job_from_a_divergence_link(env):
    """A divergence's link opens the Compare page with one run on both sides, a rank on each, on that
    compile id's graphs; the two ranks of the DDP job compiled alike, so every launch matches."""
    run = env.import_zip(JOBS / "gpt2_ddp_2gpu.zip")
    at = app(run=run.id, compare=run.id, rank="0", compare_rank="1", cid="3/0")
    no_errors(at)
    assert box(at, "Rank of A").value == 0 and box(at, "Rank of B").value == 1
    title = at.subheader[0].value
    assert title.startswith("train_gpt2_dist") and title.endswith(" · rank 1") and " · rank 0  vs  " in title
    assert "cid" not in at.query_params and box(at, "Graphs").value != 0  # [3/0] is not the first pair
    counts = "\n".join(h.proto.body for h in at.get("html"))
    assert "same" in counts
