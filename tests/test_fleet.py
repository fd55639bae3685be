"""Fleets on a real Ray (issue 36): a cluster started by the fixture on the loopback (`ray start --head
--block`, stopped by its own process group), sweeps run through `compile-viz sweep --address`, read back
through `compile-viz fleet`. One sweep of eight CPU cells is shared by the tests that read it:
three samples under two settings, a model whose build raises, and one whose first capture kills the Ray
worker running it. Unit tests of the sweep file need no Ray."""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compile_viz.cli import main
from compile_viz.fleet.driver import ray_runtime_env
from compile_viz.fleet.records import FleetError, SweepRecord, cell_runs, check_name, load_record, save_record
from compile_viz.fleet.sweep_file import SweepFileError, parse_sweep, read_sweep
from compile_viz.fleet.task import run_cell
from compile_viz.store import RunStore
from tests.conftest import ROOT
from tests.fleet_models import KILL_MARKER_ENV

# Ray reads these when it is imported: the loopback for its addresses (driver.keep_to_loopback sets the
# first too), and token authentication with a token of this session for the test cluster and its drivers
# (whether a home already holds ~/.ray/auth_token decides Ray's default otherwise)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "token")
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
MODELS = ROOT / "tests" / "fleet_models.py"
SAMPLES = ("tiny_linear_relu", "pointwise_chain", "dynamic_shapes")


# -- the sweep file, no Ray ------------------------------------------------------------------------------

def test_a_sweep_file_gives_every_model_under_every_setting(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('models = ["mlp_gelu", "tiny_linear_relu", "my.py:NET"]\ntorch = ["2.12.0", "2.13.0"]\n'
                    '[[settings]]\nname = "default"\n'
                    '[[settings]]\nname = "fast"\nmode = "max-autotune"\ndynamic = false\ntimeout = 30\n'
                    'options = { max_autotune = true }\nmodels = ["mlp_gelu"]\n', encoding="utf-8")
    sweep = read_sweep(path)
    keys = [c.key for c in sweep.cells()]
    assert keys[:3] == ["mlp_gelu|default|torch=2.12.0", "mlp_gelu|default|torch=2.13.0", "mlp_gelu|fast|torch=2.12.0"]
    assert len(keys) == 2 * (3 + 1)  # "fast" holds only mlp_gelu
    fast = sweep.settings[1].options
    assert (fast.device, fast.mode, fast.dynamic, fast.timeout_s, fast.inductor_dict) == (
        "cpu", "max-autotune", False, 30, {"max_autotune": True})
    user = next(c for c in sweep.cells() if c.model == "my.py:NET")
    assert user.ref == f"{Path.cwd() / 'my.py'}:NET"  # a worker's folder is not ours
    assert ray_runtime_env(user) == {"pip": {"packages": ["torch==2.12.0"], "pip_check": False}}
    cuda = parse_sweep({"models": ["m"], "settings": [{"name": "gpu", "device": "cuda"}]})
    assert cuda.settings[0].gpus == 1 and ray_runtime_env(cuda.cells()[0]) is None


@pytest.mark.parametrize(("doc", "words"), [
    ({"models": []}, "models is empty"),
    ({"models": ["m"], "setings": []}, "unknown key 'setings'"),
    ({"models": ["m"], "settings": [{"name": "a", "mode": "fastest"}]}, "setting 'a': mode 'fastest'"),
    ({"models": ["m"], "settings": [{"name": "a", "colour": 1}]}, "unknown key 'colour'"),
    ({"models": ["m"], "settings": [{"name": "a"}, {"name": "a"}]}, "two settings are named 'a'"),
    ({"models": ["m"], "settings": [{"name": "a", "models": ["n"]}]}, "names model 'n', not in models"),
    ({"models": ["m"], "torch": ["latest"]}, "'latest' is not a version"),
])
def test_a_sweep_file_that_cannot_be_used_says_why_in_one_line(doc, words):
    with pytest.raises(SweepFileError, match=words) as e:
        parse_sweep(doc)
    assert "\n" not in str(e.value)


GPU_SWEEP = ROOT / "bench" / "gpu_fleet.toml"


@given(cut=st.integers(min_value=0, max_value=len(GPU_SWEEP.read_bytes())), junk=st.binary(max_size=8))
@settings(max_examples=150, deadline=None)
def test_a_sweep_file_cut_or_corrupted_anywhere_is_read_or_refused_in_one_line(tmp_path_factory, cut, junk):
    data = GPU_SWEEP.read_bytes()
    path = tmp_path_factory.mktemp("cut") / "s.toml"
    path.write_bytes(data[:cut] + junk + data[cut + len(junk):])
    try:
        sweep = read_sweep(path)
    except SweepFileError as e:
        assert "\n" not in str(e) and str(e)
    else:
        assert all(c.key for c in sweep.cells())


def test_the_gpu_sweep_names_eight_third_party_models_one_gpu_a_cell():
    sweep = read_sweep(GPU_SWEEP)
    assert len(sweep.cells()) == 8 and all(c.setting.gpus == 1 for c in sweep.cells())
    assert {m.split(":")[0] for m in sweep.models} == {"tests/third_party/models.py"}


def test_a_sweep_name_is_a_file_name():
    assert check_name("nightly-2.13.0+cpu") == "nightly-2.13.0+cpu"
    for bad in ("../x", "a/b", "", ".hidden"):
        with pytest.raises(FleetError):
            check_name(bad)


def test_sweep_refuses_what_it_cannot_use_before_starting_ray(tmp_path, monkeypatch):
    monkeypatch.delenv("COMPILE_VIZ_TOKEN", raising=False)
    sweep = _write(tmp_path / "s.toml", 'models = ["mlp_gelu"]\n')
    home = str(tmp_path / "home")
    assert _cli("sweep", "--home", home)[0] == 2
    code, _, err = _cli("sweep", str(sweep), "--push", "http://127.0.0.1:9", "--home", home)
    assert code == 2 and "$COMPILE_VIZ_TOKEN" in err
    code, _, err = _cli("sweep", str(_write(tmp_path / "bad.toml", "models = 3\n")), "--home", home)
    assert (code, err) == (2, f"compile-viz: {tmp_path / 'bad.toml'}: models must be a list of strings\n")
    save_record(RunStore(home), SweepRecord("taken", []))
    code, _, err = _cli("sweep", str(sweep), "--name", "taken", "--home", home)
    assert code == 2 and "--resume taken" in err
    code, _, err = _cli("sweep", "--resume", "never", "--home", home)
    assert code == 2 and "no sweep 'never' to resume" in err


# -- a real Ray ------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def ray_address(tmp_path_factory):
    """A one-node Ray on the loopback with 2 CPUs and a small object store, for the session."""
    pytest.importorskip("ray", reason="ray is not installed (requirements-dev.txt)")
    tmp = tmp_path_factory.mktemp("ray")
    port = _free_port()
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="token",
               RAY_USAGE_STATS_ENABLED="0", **{KILL_MARKER_ENV: str(tmp / "killed-worker")})
    saved = os.environ.pop("RAY_ADDRESS", None)
    ray_cli = Path(sys.executable).with_name("ray")
    with open(tmp / "ray.log", "wb") as log:
        proc = subprocess.Popen([str(ray_cli), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
                                 f"--port={port}", "--num-cpus=2", "--num-gpus=0", "--include-dashboard=false",
                                 "--object-store-memory=100000000", f"--temp-dir={tmp / 't'}",
                                 "--disable-usage-stats"], env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        _wait_for(address, proc, tmp / "ray.log")
        yield address, tmp / "killed-worker"
    finally:
        _stop(proc)
        if saved is not None:
            os.environ["RAY_ADDRESS"] = saved


def _wait_for(address: str, proc: subprocess.Popen, log: Path) -> None:
    """Return once a driver can connect (a bounded loop); fail with the log's tail otherwise."""
    import ray

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"ray start exited: {log.read_text(errors='replace')[-2000:]}")
        if b"block forever" in log.read_bytes():
            try:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
                ray.shutdown()
                return
            except (ConnectionError, RuntimeError):
                pass
        time.sleep(1)
    pytest.fail(f"Ray at {address} did not answer in 90 s: {log.read_text(errors='replace')[-2000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop the cluster by its process group: SIGTERM, then SIGKILL after a bounded wait."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=8)  # Ray drains its node first; past that, the group is killed
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("fleet-home")


@pytest.fixture(scope="module")
def first(ray_address, home):
    """Sweep "first": 3 samples x {default, static}, a model that fails, a model that kills its worker once."""
    address, _ = ray_address
    samples = ", ".join(f'"{m}"' for m in SAMPLES)
    sweep = _write(home / "first.toml", f'models = [{samples}, "{MODELS}:BROKEN", "{MODELS}:WORKER_KILLER"]\n'
                                        '[[settings]]\nname = "default"\ndevice = "cpu"\n'
                                        f'[[settings]]\nname = "static"\ndevice = "cpu"\ndynamic = false\n'
                                        f'models = [{samples}]\n')
    started = time.monotonic()
    code, out, err = _cli("sweep", str(sweep), "--name", "first", "--address", address, "--home", str(home))
    return {"code": code, "out": out, "err": err, "wall_s": time.monotonic() - started}


@pytest.mark.slow
def test_a_sweep_of_three_samples_under_two_settings_stores_six_runs(first, home):
    assert first["out"].splitlines()[-1] == "first", first["out"]  # the name, last
    assert first["code"] == 1  # one cell failed
    code, out, _ = _cli("fleet", "first", "--json", "--home", str(home))
    assert code == 0
    doc = json.loads(out)
    assert doc["engine"] == "ray" and doc["sweep"] == "first"
    samples = [c for c in doc["cells"] if c["model"] in SAMPLES]
    assert sorted((c["model"], c["setting"]) for c in samples) == sorted(
        (m, s) for m in SAMPLES for s in ("default", "static"))
    assert all(c["status"] == "complete" and c["graphs"] >= 1 and c["kernels"] >= 1 for c in samples), samples
    assert len({c["run"] for c in samples}) == 6
    store = RunStore(home)
    for c in samples:
        assert store.get(c["run"]).ok
    dyn = {c["setting"]: c for c in samples if c["model"] == "dynamic_shapes"}
    assert (dyn["default"]["recompiles"], dyn["static"]["recompiles"]) == (0, 1)  # batch 32 then 64, static shapes
    assert "8/8 done" in first["out"]
    # a worker runs cells back to back: a later cell's capture child was started (torch imported) ahead
    warm = [c["model"] for c in samples if store.get(c["run"]).meta.get("warm_child")]
    assert warm, "no cell ran in a warm capture child"


@pytest.mark.slow
def test_a_failing_cell_is_a_failed_run_with_its_reason_and_stops_nothing(first, home):
    doc = json.loads(_cli("fleet", "first", "--json", "--home", str(home))[1])
    assert doc["cells"][0]["model"].endswith(":BROKEN")  # failed cells first
    broken = doc["cells"][0]
    assert broken["status"] == "failed" and "made to fail for the fleet test" in broken["reason"]
    assert "\n" not in broken["reason"]
    assert RunStore(home).get(broken["run"]).status == "failed"
    assert [c["status"] for c in doc["cells"][1:]] == ["complete"] * 7
    assert "failed" in first["out"] and "made to fail" in first["out"]


@pytest.mark.slow
def test_a_lost_worker_is_retried_once_and_its_cell_stored_once(first, home, ray_address):
    _, marker = ray_address
    assert marker.is_file(), "the first capture of WORKER_KILLER did not run"
    key = f"{MODELS}:WORKER_KILLER|default"
    runs = cell_runs(RunStore(home), "first")[key]
    assert [r.status for r in runs] == ["complete"]
    assert key not in load_record(RunStore(home), "first").errors


@pytest.mark.slow
def test_a_task_that_finds_its_cell_complete_returns_that_run(first, home):
    """A worker lost after the run was stored, retried: the same run, nothing stored again."""
    store = RunStore(home)
    record = load_record(store, "first")
    cell = next(c for c in record.cells if c.key == "tiny_linear_relu|default")
    before = {r.id for r in store.list_runs()}
    answer = run_cell(cell.to_json(), "first", str(home))
    assert answer["reused"] and answer["run"] in before and answer["status"] == "complete"
    assert {r.id for r in store.list_runs()} == before


@pytest.mark.slow
def test_resume_reruns_nothing_that_completed(first, home, ray_address):
    address, _ = ray_address
    store = RunStore(home)
    before = {k: [r.id for r in v] for k, v in cell_runs(store, "first").items()}
    code, out, _ = _cli("sweep", "--resume", "first", "--address", address, "--home", str(home))
    after = {k: [r.id for r in v] for k, v in cell_runs(store, "first").items()}
    assert code == 1 and out.splitlines()[-1] == "first"
    assert out.count("skipped") == 7
    broken = f"{MODELS}:BROKEN|default"
    assert {k: v for k, v in after.items() if k != broken} == {k: v for k, v in before.items() if k != broken}
    assert len(after[broken]) == 1 and after[broken] != before[broken]  # rerun, and stored once
    assert sum(map(len, after.values())) == 8


@pytest.mark.slow
def test_two_sweeps_that_differ_name_the_model_and_say_why(first, home, ray_address):
    address, _ = ray_address
    sweep = _write(home / "second.toml", 'models = ["tiny_linear_relu", "dynamic_shapes"]\n'
                                         '[[settings]]\nname = "default"\ndevice = "cpu"\ndynamic = false\n')
    code, out, err = _cli("sweep", str(sweep), "--name", "second", "--address", address, "--home", str(home))
    assert code == 0, out + err
    code, out, _ = _cli("fleet", "first", "second", "--json", "--home", str(home))
    doc = json.loads(out)
    assert [c["model"] for c in doc["changes"]] == ["dynamic_shapes"], doc["changes"]
    change = doc["changes"][0]
    assert change["setting"] == "default"
    assert "1 new recompile (" in change["why"] and "size mismatch" in change["why"]
    assert "graphs 1 -> 2" in change["why"] and "launch group only in B" in change["why"]
    assert change["what"]["recompiles"] == [0, 1] and change["what"]["graphs"] == [1, 2]
    assert all(change["pair"]) and doc["same"] == 1  # tiny_linear_relu: no change
    assert {(u["model"], u["only_in"]) for u in doc["unpaired"]} >= {("pointwise_chain", "a")}
    text = _cli("fleet", "first", "second", "--home", str(home))[1]
    assert text.splitlines()[0].startswith("first -> second: 1 changed, 1 the same")
    assert "dynamic_shapes / default: 1 new recompile" in text
    assert f"compile-viz diff {change['pair'][0]} {change['pair'][1]}" in text


@pytest.fixture
def team_server(tmp_path):
    """A real `compile-viz serve --open` over a fresh store (SQLite index) on a loopback port, and a
    push token of project "fleet"; stopped by its PID."""
    from compile_viz.server.open import open_store
    from compile_viz.server.projects import add_project
    from compile_viz.server.tokens import create_token

    store = tmp_path / "server-store"
    index = open_store(str(store)).index
    add_project(index, "fleet", ["ann@example.com"])
    token = create_token(index, "fleet", "sweep-bot")[1]
    port = _free_port()
    with open(tmp_path / "serve.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "compile_viz", "serve", "--store", str(store), "--port",
                                 str(port), "--open"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "COMPILE_VIZ_WARM": "0"}, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"compile-viz serve did not start: {(tmp_path / 'serve.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield url, token, RunStore(store)
    finally:
        _stop(proc)


@pytest.mark.slow
def test_push_sends_each_complete_cell_once(first, home, team_server, monkeypatch):
    from compile_viz.cli.sweep import push_cells

    url, token, server_store = team_server
    monkeypatch.setenv("COMPILE_VIZ_TOKEN", token)
    store = RunStore(home)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert push_cells(store, "first", url) == 0
    pushed = load_record(store, "first").pushed
    assert len(pushed) == 7 and all(u.startswith(url) for u in pushed.values())  # the failed cell is not sent
    assert out.getvalue().count("pushed ") == 7
    assert len(server_store.list_runs()) == 7
    with contextlib.redirect_stdout(io.StringIO()) as again:
        assert push_cells(store, "first", url) == 0  # a later --push (or --resume --push) sends nothing twice
    assert again.getvalue() == "" and load_record(store, "first").pushed == pushed


def test_a_sweep_without_an_address_starts_and_stops_its_own_local_ray(tmp_path, monkeypatch):
    """The embedded default, on a cell that fails before any child starts (an unknown model): no capture cost."""
    pytest.importorskip("ray", reason="ray is not installed (requirements-dev.txt)")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    sweep = _write(tmp_path / "bad.toml", 'models = ["no_such_model"]\n')
    code, out, err = _cli("sweep", str(sweep), "--cpus", "1", "--home", str(tmp_path))
    assert code == 1 and out.splitlines()[-1].startswith("bad-")
    assert "on a local Ray" in out and "unknown model 'no_such_model'" in out
    import ray

    assert not ray.is_initialized()
    code, _, err = _cli("fleet", "nope", "--home", str(tmp_path))
    assert code == 2 and err.startswith("compile-viz: no sweep 'nope'")
