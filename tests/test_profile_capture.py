"""Runs that carry their own torch.profiler trace: `compile-viz record --profile` (the record hook
profiles a few optimizer steps of an unchanged script) and `compile-viz capture --profile`, for
real on the CPU, where Inductor's C++ kernels show up with cpp.enable_kernel_profile on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compile_viz.record import job as rec
from compile_viz.record import meta as record_meta
from compile_viz.record.step_profile import parse_setting, trace_name

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "tests" / "jobs"


def _cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "compile_viz", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def _run(done: subprocess.CompletedProcess) -> tuple[Path, dict]:
    path = Path(done.stdout.strip().splitlines()[-1])  # the last line printed is the run's folder
    assert path.is_dir(), done.stdout[-2000:] + done.stderr[-2000:]
    return path, json.loads((path / "meta.json").read_text())


def _events(trace: Path) -> list[dict]:
    doc = json.loads(trace.read_text())
    return doc["traceEvents"]


def _assert_compiled_kernels_in(trace: Path) -> None:
    names = [str(e.get("name", "")) for e in _events(trace) if e.get("ph") == "X"]
    assert any(n.startswith("## Call CompiledFxGraph") for n in names)
    assert any("cpp_fused" in n for n in names)  # the C++ kernels, with enable_kernel_profile on


def _record(tmp_path: Path, script: str, *flags: str) -> tuple[Path, dict, subprocess.CompletedProcess]:
    job = tmp_path / "job.py"
    job.write_text(script)
    done = _cli("record", "--home", str(tmp_path / "home"), "--profile", *flags, "--", sys.executable, str(job),
                cwd=tmp_path, timeout=120)
    return *_run(done), done


@pytest.mark.slow
def test_record_profile_of_an_unchanged_training_script(tmp_path):
    done = _cli("record", "--home", str(tmp_path / "home"), "--profile", "--", sys.executable,
                str(JOBS / "train_gpt2.py"), "--steps", "6", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run, meta = _run(done)
    profile = meta["job"]["profile"]
    traces = sorted((run / "profile").glob("*.pt.trace.json"))
    assert len(traces) == 1 and traces[0].name.startswith("pid")  # one process trained, not a rank
    assert profile["files"] == [f"profile/{traces[0].name}"] and "reason" not in profile
    assert (profile["warmup"], profile["steps"]) == (2, 3)
    [proc] = profile["processes"]
    assert proc["profiled_steps"] == 3 and not proc["stopped_at_exit"]
    # steady steps: the window opens after the warm-up at the first step that compiled nothing (this
    # script's graph break compiles more frames in its second step), and no step inside it compiled
    first = proc["first_step"]
    assert first >= 3 and proc["last_step"] == first + 2 == proc["optimizer_steps"] and proc["compiled_steps"] == []
    assert f"(step {first - 1} compiled nothing)" in proc["why"]
    _assert_compiled_kernels_in(traces[0])
    doc = json.loads(traces[0].read_text())
    assert doc["compile_viz_steps"] == 3 and doc["compile_viz_first_step"] == first
    assert f"compile-viz: profiled steps {first}-{first + 2}, {proc['why']}: profile/{traces[0].name}" in done.stderr
    assert not any(str(e.get("name", "")).endswith(" (dynamo_timed)") for e in doc["traceEvents"])
    _assert_launches_timed(run, steps=3)


@pytest.mark.slow
def test_record_profile_sets_a_recompile_apart(tmp_path):
    """A job whose last step recompiles at another length inside the profiled window (issue 33): the
    window is written, re-armed, and kept when the job ends; the recompile's host time is reported
    apart from the launches, with the step it fell in."""
    done = _cli("record", "--home", str(tmp_path / "home"), "--profile", "--profile-warmup", "2",
                "--profile-steps", "3", "--", sys.executable, str(JOBS / "train_gpt2_lengths.py"), "--steps", "5",
                "--change-at", "4", "--layers", "1", "--width", "64", "--batch", "2", "--seq", "32", "--seq2", "24",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run, meta = _run(done)
    [proc] = meta["job"]["profile"]["processes"]
    assert proc["last_step"] == 5 and proc["compiled_steps"] == [5], proc
    assert "step 5 compiled inside the window" in proc["why"] and "job ended before a quiet window" in proc["why"]
    report = json.loads(_cli("profile", str(run), "--json", cwd=run).stdout)["profile"]
    assert report["compile"]["steps"] == [5] and report["compile"]["host_us"] > 0
    shown = _cli("profile", str(run), cwd=run).stdout
    assert "step 5 compiled: " in shown.splitlines()[0] and "not counted" in shown.splitlines()[0]


@pytest.mark.slow
def test_capture_profile_of_a_training_step(tmp_path):
    done = _cli("capture", "--home", str(tmp_path / "home"), "--profile", "--train", "mlp_gelu", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run, meta = _run(done)
    assert meta["status"] == "complete" and meta["profile"]["files"] == ["profile/capture.pt.trace.json"]
    trace = run / "profile" / "capture.pt.trace.json"
    _assert_compiled_kernels_in(trace)
    steps = {e["name"] for e in _events(trace) if str(e.get("name", "")).startswith("ProfilerStep#")}
    assert steps == {"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"}
    _assert_launches_timed(run, steps=3)


def _assert_launches_timed(run, *, steps: int) -> None:
    """At least 90% of the launches get a measured time, joined through parse --json; the others say why."""
    doc = json.loads(_cli("parse", "--json", str(run), cwd=run).stdout)
    launches = [la for g in doc["graphs"] for la in g["links"]["launches"]]
    timed = [la for la in launches if "calls" in la["profile"]]
    assert launches and len(timed) >= 0.9 * len(launches), [la["profile"] for la in launches if la not in timed]
    assert all(la["profile"]["reason"] for la in launches if la not in timed)
    summary = doc["profile"]
    assert summary["device"] == "cpu" and summary["steps"] == steps and summary["unjoined_regions"] == 0
    assert summary["launches_timed"] == len(timed)


def test_a_job_without_an_optimizer_says_why_it_has_no_profile(tmp_path):
    run, meta, done = _record(tmp_path, "import torch\nprint(torch.ones(3).sum().item())\n")
    profile = meta["job"]["profile"]
    assert profile["files"] == [] and not (run / "profile").exists()
    assert profile["reason"] == ("no profile: the job never called a torch.optim optimizer's step(), which "
                                 "starts and stops the profile")
    assert f"compile-viz: {profile['reason']}" in done.stderr


STEPS = """import torch
w = torch.nn.Parameter(torch.ones(4))
opt = torch.optim.SGD([w], lr=0.1)
other = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
for _ in range({n}):
    (w * w).sum().backward()
    opt.step()
    other.step()  # a second optimizer: its steps are not counted again
    opt.zero_grad()
print("done", flush=True)
"""


def test_too_few_steps_for_the_warm_up(tmp_path):
    _run_dir, meta, _done = _record(tmp_path, STEPS.format(n=2))
    assert meta["job"]["profile"]["reason"] == ("no profile: the job made 2 optimizer steps; the profile starts "
                                                "after 2 (--profile-warmup) and needs one more")


def test_a_profile_still_running_at_exit_is_written(tmp_path):
    run, meta, done = _record(tmp_path, STEPS.format(n=3), "--profile-warmup", "1", "--profile-steps", "5")
    assert "done" in done.stdout
    profile = meta["job"]["profile"]
    [name] = [p.name for p in (run / "profile").iterdir()]
    assert profile["files"] == [f"profile/{name}"] and name == f"pid{profile['processes'][0]['pid']}.pt.trace.json"
    [proc] = profile["processes"]
    assert proc["stopped_at_exit"] and proc["profiled_steps"] == 2 and proc["optimizer_steps"] == 3
    names = {e.get("name") for e in _events(run / "profile" / name)}
    assert "Optimizer.step#SGD.step" in names


def test_the_hook_imports_no_torch_at_start_up(tmp_path):
    env = rec.record_env(tmp_path, dict(os.environ), profile=(2, 3))
    assert env[rec.PROFILE_ENV] == "2,3" and env["TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"] == "1"
    out = subprocess.run([sys.executable, "-c", "import sys; print('torch' in sys.modules)"], env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE" not in rec.record_env(tmp_path, {})  # only with --profile
    kept = rec.record_env(tmp_path, {"TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "0"}, profile=(1, 1))
    assert kept["TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"] == "0"  # the user's own setting wins


def test_trace_names_and_settings():
    assert trace_name(4321, "1") == "rank1-pid4321.pt.trace.json"
    assert trace_name(4321, None) == "pid4321.pt.trace.json" and trace_name(7, "") == "pid7.pt.trace.json"
    assert parse_setting("2,3") == (2, 3)
    with pytest.raises(ValueError):
        parse_setting("0,3")
    meta = {"job": {"profile": {"warmup": 2, "steps": 3, "files": ["profile/a", "profile/b"]}}}
    assert record_meta.profile_note(meta) == "profiled 3 steps after 2: profile/a, profile/b"
    assert record_meta.profile_note({"job": {}}) is None


def test_bad_profile_counts_are_refused(tmp_path):
    done = _cli("record", "--home", str(tmp_path), "--profile", "--profile-steps", "0", "--", "true", cwd=tmp_path)
    assert done.returncode == 2 and "at least 1" in done.stderr
