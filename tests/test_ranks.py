"""`compile-viz ranks`: what each rank compiled and where ranks differ, on real multi-rank logs:
tlparse's four-rank test logs, the two-GPU DDP and FSDP2 jobs recorded on H100s, and a 2-rank gloo
DDP job recorded here twice, once with rank 1 alone recompiling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compile_viz.artifacts.trace.discover import trace_logs
from compile_viz.artifacts.trace.read import parse_trace
from compile_viz.compare.ranks import MEANING, rank_logs, rank_report
from compile_viz.compare.sides import CompareError
from tests.conftest import ROOT, compile_viz_cli

TLPARSE_RANKS = ROOT.parent / "shared" / "corpus" / "traces" / "tlparse-tests" / "multi_rank_logs"
JOBS = ROOT / "tests" / "fixtures" / "jobs"


def _report(path):
    return rank_report([parse_trace(data, path=name) for name, data in trace_logs(str(path))])


def test_tlparse_four_rank_logs():
    if not TLPARSE_RANKS.is_dir():
        pytest.skip(f"needs {TLPARSE_RANKS} (../shared is absent)")
    report = _report(TLPARSE_RANKS)
    assert report.ranks == (0, 1, 2, 3)
    assert [(s.rank, s.compile_ids, s.graphs) for s in report.summaries] == [(0, 1, 0), (1, 15, 15), (2, 1, 0), (3, 7, 7)]
    kinds = [(d.kind, d.compile_id, d.ranks) for d in report.divergences]
    # ranks 0 and 2 failed in another frame at [0/0]; ranks 1 and 3 compiled `kernel`
    assert kinds[0] == ("status", "0/0", (1, 3))
    # 0/1..0/6 on ranks 1 and 3, 0/7..0/14 on rank 1 alone: a recompile the others never made
    assert ("compile_id", "0/6", (1, 3)) in kinds and ("compile_id", "0/14", (1,)) in kinds
    only_1 = next(d for d in report.divergences if d.compile_id == "0/14")
    assert "compiled on rank 1 only" in only_1.detail and "size mismatch" in only_1.detail
    assert report.grid["0/14"] == {0: "", 1: "ok", 2: "", 3: ""}


@pytest.mark.parametrize("name", ["gpt2_ddp_2gpu", "gpt2_fsdp2_2gpu"])
def test_two_gpu_jobs_whose_ranks_agree(name):
    report = _report(JOBS / f"{name}.zip")
    assert report.ranks == (0, 1) and report.divergences == ()  # device indexes and object ids differ, nothing else
    a, b = report.summaries
    assert (a.compile_ids, a.graphs, a.kernels, a.launches) == (b.compile_ids, b.graphs, b.kernels, b.launches)
    assert a.kernels > 50


@pytest.mark.slow
def test_a_recompile_on_one_rank_is_found(ddp_runs):
    run, _ = ddp_runs["recompile"]
    done = compile_viz_cli("ranks", str(run), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ranks"] == [0, 1]
    assert [d for d in report["divergences"] if d["kind"] != "compile_id"] == []
    (recompile,) = report["divergences"]
    assert recompile["compile_id"] == "0/1" and recompile["ranks"] == [1]
    assert "size mismatch" in recompile["detail"] and recompile["meaning"] == MEANING["compile_id"]
    per_rank = {r["rank"]: r for r in report["per_rank"]}
    assert per_rank[1]["compile_ids"] == per_rank[0]["compile_ids"] + 1
    text = compile_viz_cli("ranks", str(run)).stdout
    assert "compile_id: ranks 1: [0/1]" in text


@pytest.mark.slow
def test_the_same_job_without_it_has_no_divergence(ddp_runs):
    run, _ = ddp_runs["same"]
    report = json.loads(compile_viz_cli("ranks", str(run), "--json").stdout)
    assert report["ranks"] == [0, 1] and report["divergences"] == []
    assert report["per_rank"][0]["graphs"] == report["per_rank"][1]["graphs"] >= 4  # DDP's split pieces


def test_a_run_without_logs_is_one_line(tmp_path):
    with pytest.raises(CompareError, match="holds no TORCH_TRACE log"):
        rank_logs(str(tmp_path))
    done = compile_viz_cli("ranks", str(Path(tmp_path)))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
