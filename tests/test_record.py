"""`compile-viz record -- CMD`: a user's unchanged script or torchrun job, recorded for real on the CPU.

The scripts in tests/jobs/ are written as users write them (their own loop, optimizer, DDP), not as
SampleSpecs. The slow tests record them through the CLI in a child process, as a user would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from compile_viz.record import job as rec
from compile_viz.record import meta as record_meta
from compile_viz.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "tests" / "jobs"


def _cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "compile_viz", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=timeout)


def _stored(out: str) -> Path:
    path = Path(out.strip().splitlines()[-1])  # the last line printed is the run's folder
    assert path.is_dir(), out[-2000:]
    return path


def _no_leftovers(home: Path) -> None:
    assert not [p for p in (home / "runs").iterdir() if p.name.startswith(".tmp-")]


@pytest.mark.slow
def test_records_an_unmodified_training_script(tmp_path):
    home = tmp_path / "home"
    done = _cli("record", "--home", str(home), "--", sys.executable, str(JOBS / "train_gpt2.py"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # the job's own lines pass through, and the run's folder comes last
    assert "step 0 loss" in done.stdout and "training done" in done.stdout
    run = _stored(done.stdout)
    meta = json.loads((run / "meta.json").read_text())
    assert meta["kind"] == "job" and meta["status"] == "complete", meta.get("reason")
    job = meta["job"]
    assert job["exit_code"] == 0 and job["cwd"] == str(tmp_path) and job["argv"][-1].endswith("train_gpt2.py")
    assert meta["versions"]["torch"].startswith("2.") and meta["resolved"] == {"device": "cpu", "dtype": "float32"}
    assert meta["trace"]["compile_ids"] >= 4 and meta["trace"]["statuses"].get("graph break")
    assert "recorded train_gpt2: complete" in done.stderr

    parsed = json.loads(_cli("parse", "--json", str(run)).stdout)
    graphs = parsed["graphs"]
    kinds = {g["kind"] for g in graphs}
    assert len(graphs) >= 4 and {"forward", "backward"} <= kinds
    assert any(b["reason"] for b in parsed["graph_breaks"])  # the .item() in the step
    biggest = max(graphs, key=lambda g: len(g["launches"]))
    assert len(biggest["kernels"]) >= 5 and len(biggest["launches"]) >= 10
    links = biggest["links"]["launches"]
    assert links and all(link["post_grad_nodes"] for link in links if link["kind"] == "cpp")
    assert any(link["source_lines"] for link in links)
    decisions = [g["fusion_decisions"] for g in graphs if g.get("fusion_decisions")]
    assert decisions and sum(len(d["fused"]) for d in decisions) > 0 and any(d["rounds"] for d in decisions)

    compiles = json.loads(_cli("parse", "--json", "--trace", str(run)).stdout)
    ids = [c for log in compiles["traces"] for c in log["compiles"]]
    assert len(ids) == meta["trace"]["compile_ids"] and any(c["graphs"] for c in ids)
    _no_leftovers(home)


def test_a_failing_script_is_a_failed_run_with_its_error_in_one_line(tmp_path):
    home = tmp_path / "home"
    script = tmp_path / "broken.py"
    script.write_text("print('starting', flush=True)\n"
                      "def load():\n    raise RuntimeError('no data in /nonexistent')\n"
                      "load()\n")
    done = _cli("record", "--home", str(home), "--", sys.executable, str(script), cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    assert "starting" in done.stdout and "RuntimeError: no data in /nonexistent" in done.stderr
    meta = json.loads((_stored(done.stdout) / "meta.json").read_text())
    assert meta["status"] == "failed" and "\n" not in meta["reason"]
    assert meta["reason"] == f"exited with code 1: RuntimeError: no data in /nonexistent (at {script}:3)"
    assert meta["job"]["exit_code"] == 1
    _no_leftovers(home)


def test_a_command_that_does_not_exist(tmp_path):
    done = _cli("record", "--home", str(tmp_path), "--", "no-such-program-xyz", timeout=60)
    assert done.returncode == 1
    meta = json.loads((_stored(done.stdout) / "meta.json").read_text())
    assert meta["status"] == "failed" and meta["reason"].startswith("could not start")


def test_nothing_to_record_is_one_line(tmp_path):
    done = _cli("record", "--home", str(tmp_path), timeout=60)
    assert done.returncode == 2
    err = done.stderr.strip()
    assert err.startswith("compile-viz: record needs a command") and "\n" not in err


def test_ctrl_c_stops_the_job_and_stores_what_it_wrote(tmp_path):
    home = tmp_path / "home"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "compile_viz", "record", "--home", str(home), "--", sys.executable, "-c",
         "import time; print('ready', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    meta = json.loads((Path(out.strip().splitlines()[-1]) / "meta.json").read_text())
    assert meta["status"] == "failed" and meta["reason"].startswith("interrupted (Ctrl-C)")
    _no_leftovers(home)


def test_timeout_stops_the_job(tmp_path):
    done = _cli("record", "--home", str(tmp_path), "--timeout", "1", "--", sys.executable, "-c",
                "import time; time.sleep(60)", timeout=60)
    meta = json.loads((_stored(done.stdout) / "meta.json").read_text())
    assert done.returncode != 0 and meta["reason"].startswith("timed out after 1 s")


def test_big_output_keeps_head_and_tail_and_says_so(tmp_path):
    store = RunStore(tmp_path)
    sink = open(os.devnull, "wb")  # noqa: SIM115
    run = rec.record([sys.executable, "-c", "import sys\nfor i in range(20000): print(f'line {i:06d}')"],
                     store=store, keep_bytes=10_000, stdout=sink, stderr=sink)
    sink.close()
    kept = (run.path / "logs" / "stdout.txt").read_text()
    streams = run.meta["job"]["streams"]["stdout"]
    assert streams["bytes"] == 20000 * 12 and streams["kept"] < 20_100
    assert kept.startswith("line 000000") and kept.rstrip().endswith("line 019999")
    assert f"[compile-viz record: {streams['bytes'] - streams['kept']} bytes not kept here]" in kept
    assert record_meta.kept_note(run.meta).startswith("kept stdout 0 of 0 MB")


def test_the_sites_own_sitecustomize_still_runs(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['SITE_HOOK_RAN'] = 'yes'\n")
    out = tmp_path / "out.txt"
    env = dict(os.environ, PYTHONPATH=str(site))
    hook_env = rec.record_env(tmp_path, env)
    subprocess.run([sys.executable, "-c", f"import os; open({str(out)!r}, 'w').write(os.environ.get('SITE_HOOK_RAN', 'no'))"],
                   env=hook_env, check=True)
    assert out.read_text() == "yes"
    assert hook_env["PYTHONPATH"].split(os.pathsep)[:2] == [str(rec.HOOK_DIR), str(site)]


def test_job_names():
    assert rec.job_name(["torchrun", "--nproc-per-node", "2", "train.py", "--lr", "1"]) == "train"
    assert rec.job_name(["python", "-m", "pkg.train"]) == "pkg.train"
    assert rec.job_name(["./run.sh"]) == "run.sh"


def test_failure_names_the_first_failing_rank():
    procs = [{"rank": None, "error": "ChildFailedError: train.py FAILED"},
             {"rank": 1, "error": "ValueError: bad shape", "error_at": "train.py:9"},
             {"rank": 0, "error": "RuntimeError: connection closed by peer"}]
    assert record_meta.failure(procs, "exited", 1, "") == (
        "exited with code 1: rank 0: RuntimeError: connection closed by peer; 1 more rank failed")
    assert record_meta.failure([], "exited", -9, "") == "killed by SIGKILL"
    assert record_meta.failure([], "exited", 3, "Traceback\n  x\nKeyError: 'lr'\nbye\n") == "exited with code 3: KeyError: 'lr'"
    assert record_meta.failure([], "exited", 0, "") is None


@pytest.mark.slow
def test_records_a_two_rank_torchrun_ddp_job(ddp_runs):
    run, done = ddp_runs["recompile"]
    assert "rank 0 step 2" in done.stdout and "rank 1 step 2" in done.stdout
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["job"]["ranks"] == [0, 1] and meta["job"]["world_size"] == 2
    assert sorted(meta["trace"]["ranks"]) == [0, 1]
    # every rank's files apart: its debug tree, its fusion log, its trace log, its process record
    for rank in (0, 1):
        tree = run / "debug" / f"rank_{rank}"
        assert list(tree.glob("torch_compile_debug/run_*/torchinductor/*/output_code.py"))
        assert list(tree.glob("torch_compile_debug/run_*/fusion.log"))
        assert list((run / "trace").glob(f"*rank_{rank}*"))
    ranks = [p["rank"] for p in record_meta.processes(run)]
    assert sorted(r for r in ranks if r is not None) == [0, 1]  # compile workers leave no record
    trace = json.loads(_cli("parse", "--json", "--trace", str(run)).stdout)
    assert sorted(log["rank"] for log in trace["traces"]) == [0, 1]
    # each rank's fusion log goes to its own graphs
    parsed = json.loads(_cli("parse", "--json", str(run)).stdout)
    assert all(g["fusion_decisions"] and g["fusion_decisions"]["rounds"] for g in parsed["graphs"])
