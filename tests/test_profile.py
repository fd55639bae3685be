"""Where the time went: torch.profiler traces joined to launches, on real H100 jobs recorded with
`compile-viz record` (tests/jobs/train_gpt2_profiled.py: a GPT-2 training script that profiles
itself with tensorboard_trace_handler; bench/gpu_profiled_jobs.sh), alone and as a 2-rank DDP job."""

from __future__ import annotations

import json

import pytest

from compile_viz.artifacts import profile_files, read_profiles
from compile_viz.artifacts.profile import parse_profile
from compile_viz.linking.time_report import time_report
from tests.conftest import ROOT, compile_viz_cli

JOBS = ROOT / "tests" / "fixtures" / "jobs"
ONE, DDP = JOBS / "gpt2_profiled_1gpu.zip", JOBS / "gpt2_profiled_ddp_2gpu.zip"


@pytest.mark.parametrize("run, launches", [(ONE, 209), (DDP, 432)])
def test_every_launch_gets_its_device_time(run, launches):
    report = time_report(str(run))
    s = report.summary
    assert s["device"] == "cuda" and s["steps"] == 6 and s["unjoined_regions"] == 0
    assert s["launches"] == launches and s["launches_timed"] == launches
    # the joined kernels add up to the device time inside compiled regions
    assert abs(s["joined_us"] - s["in_compiled_us"]) <= 0.1 * s["in_compiled_us"]
    assert 0 < s["compiled_share"] < 1
    top = report.rows[0]
    assert top.total_us > 0 and top.calls == 3 and top.source_lines  # every profiled step called it once


def test_ranks_join_their_own_graphs():
    report = time_report(str(DDP))
    assert sorted(p.rank for p in report.runtime.profiles) == [0, 1]
    ranks = {row.label.split(" · ")[0] for row in report.rows}
    assert ranks == {"rank 0", "rank 1"}


def test_modules_and_lines_sum_the_launches():
    report = time_report(str(ONE))
    total = sum(r.total_us for r in report.rows)
    assert abs(sum(us for _, us in report.by_module()) - total) < 1e-6 * total
    assert abs(sum(us for _, us in report.by_line()) - total) < 1e-3 * total
    assert any(m.startswith("transformer.h.") for m, _ in report.by_module())


def test_parse_json_carries_each_launchs_time():
    doc = json.loads(compile_viz_cli("parse", "--json", str(DDP)).stdout)
    assert doc["profile"]["launches_timed"] == 432
    launches = [la for g in doc["graphs"] for la in g["links"]["launches"]]
    assert len(launches) == 432 and all(set(la["profile"]) == {"calls", "total_us", "mean_us"} for la in launches)


def test_a_run_without_a_profile_keeps_its_json_and_says_so():
    run = ROOT / "sample_runs" / "pointwise_chain.zip"
    doc = json.loads(compile_viz_cli("parse", "--json", str(run)).stdout)
    assert "profile" not in doc and all("profile" not in la for g in doc["graphs"] for la in g["links"]["launches"])
    done = compile_viz_cli("profile", str(run))
    assert done.returncode == 2 and "holds no torch.profiler trace" in done.stderr and done.stderr.count("\n") == 1


def test_perfetto_export_of_both_ranks(tmp_path):
    out = tmp_path / "trace.json"
    done = compile_viz_cli("profile", str(DDP), "--export", str(out), "--top", "3")
    assert done.returncode == 0, done.stderr
    assert "432 of 432 launches timed" in done.stdout
    doc = json.loads(out.read_text())
    events = doc["traceEvents"]
    annotated = [e for e in events if "compile_viz" in e.get("args", {})]
    assert annotated and all({"ph", "name", "ts", "dur", "pid", "tid"} <= set(e) for e in annotated)
    first = annotated[0]["args"]["compile_viz"]
    assert {"graph", "launch", "kernel", "fusion_group", "module", "fx_nodes", "source_lines"} <= set(first)
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert any(n.startswith("rank 0 ·") for n in names) and any(n.startswith("rank 1 ·") for n in names)
    # each rank's processes keep tracks of their own
    pids = {e["pid"] for e in annotated}
    assert len({p // 10_000_000 for p in pids}) == 2


def test_a_cut_profile_is_a_warning_not_an_error():
    ((path, data),) = profile_files(str(ONE))
    cut = parse_profile(data[: len(data) // 2], path=path)
    assert cut.regions == () and len(cut.warnings) == 1 and "not a readable torch.profiler trace" in str(cut.warnings[0])
    assert [p.path for p in read_profiles(str(ONE))] == [path]


def test_the_viewers_time_section(tmp_path, monkeypatch):
    """The Viewer's profile section on the recorded H100 run: the summary, the longest launches with
    their modules, and a row that opens its launch."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from compile_viz.store import RunStore

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_resource.clear()
    run = RunStore(tmp_path / "home").import_zip(ONE)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["run"] = run.id
    at.session_state["viewer_time_section"] = True
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    assert any("209 of 209 launches timed" in c.value for c in at.caption)
    table = next(d for d in at.dataframe if "kernel" in d.value.columns).value
    assert len(table) == 200 and table["ms"].iloc[0] >= table["ms"].iloc[-1]
    assert table["module"].str.startswith("transformer.").any()
    # the source pane gives its file's lines their measured time
    assert any(c.value.startswith("Measured in the profile, this file's lines: line ") for c in at.caption)
    st.cache_resource.clear()


def test_record_profile_on_two_gpus():
    """`compile-viz record --profile -- torchrun --nproc-per-node 2 train_gpt2_dist.py --strategy ddp`
    on the H100s (bench/gpu_ladder_profile.sh): the hook's traces, one per rank, every launch timed,
    the joined time equal to the device time inside compiled graphs, modules from each rank's log."""
    report = time_report(str(JOBS / "gpt2_ddp_record_profile_2gpu.zip"))
    s = report.summary
    assert sorted(p.rank for p in report.runtime.profiles) == [0, 1] and s["steps"] == 3
    assert s["launches_timed"] == s["launches"] == 432
    assert abs(s["joined_us"] - s["in_compiled_us"]) <= 0.1 * s["in_compiled_us"]
    for rank in ("rank 0", "rank 1"):
        mine = [r for r in report.rows if r.label.startswith(rank + " ·")]
        assert len(mine) == 216 and any(r.module.startswith("transformer.h.") for r in mine)
        assert all(r.source_lines for r in mine[:10])
