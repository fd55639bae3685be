"""The warm capture child (torch imported ahead, single use): real CPU captures, fallbacks, cleanup."""

from __future__ import annotations

import os
import signal
import time

import pytest

from compile_viz.capture import CaptureOptions, capture, prewarm, warm
from compile_viz.store import RunStore
from tests.conftest import in_parallel
from tests.test_capture_real import USER_PRELUDE, _user_file, assert_complete

pytestmark = pytest.mark.slow
CPU = CaptureOptions(device="cpu", timeout_s=300)


@pytest.fixture(autouse=True)
def no_warm_child_left():
    warm.shutdown()
    yield
    warm.shutdown()


def dot_folders(store: RunStore) -> list[str]:
    return [p.name for p in store.runs_dir.iterdir() if p.name.startswith(".")]


def warm_and_ready(store: RunStore) -> warm.WarmChild:
    assert prewarm(store)
    assert prewarm(store)  # a no-op while one is waiting
    child = warm.current()
    assert warm.wait_ready() and warm.current() is child
    return child


def test_warm_capture_completes_and_parses(tmp_path):
    store = RunStore(tmp_path / "home")
    child = warm_and_ready(store)
    run = capture("tiny_linear_relu", CPU, store=store, warm=True)
    assert_complete(run)
    assert run.meta["warm_child"] is True and run.meta["warm"]["import_s"] > 0
    assert run.meta["timings"]["import_s"] < 0.5  # torch was imported before the request
    assert "-tiny_linear_relu-" in run.id and "warm" not in run.id  # named when the request came
    assert [p.name.split("pid_")[1] for p in run.debug_dir.glob("torch_compile_debug/run_*")] == [str(child.proc.pid)]
    artifacts = pytest.importorskip("compile_viz.artifacts")
    if hasattr(artifacts, "parse_path"):
        assert len(artifacts.parse_path(str(run.debug_dir)).graphs) == 1
    # the next warm child was started; shutting it down leaves no temporary folder behind
    nxt = warm.current()
    assert nxt is not None and nxt is not child and nxt.tmp.is_dir()
    warm.shutdown()
    assert dot_folders(store) == [] and nxt.proc.poll() is not None


def test_killed_warm_child_falls_back_to_cold(tmp_path):
    store = RunStore(tmp_path / "home")
    assert prewarm(store)
    dead = warm.current()
    os.killpg(dead.proc.pid, signal.SIGKILL)
    dead.proc.wait()
    run = capture("tiny_linear_relu", CPU, store=store, warm=True)
    assert_complete(run)
    assert run.meta["warm_child"] is False and "warm" not in run.meta
    assert not dead.tmp.exists()


def test_two_parallel_captures_one_warm_child(tmp_path):
    store = RunStore(tmp_path / "home")
    warm_and_ready(store)
    a, b = in_parallel(*[lambda: capture("tiny_linear_relu", CPU, store=store, warm=True)] * 2)
    assert_complete(a)
    assert_complete(b)
    assert sorted([a.meta["warm_child"], b.meta["warm_child"]]) == [False, True]
    assert a.id != b.id
    pids = [{p.name.split("pid_")[1] for p in r.debug_dir.glob("torch_compile_debug/run_*")} for r in (a, b)]
    assert len(pids[0]) == len(pids[1]) == 1 and pids[0] != pids[1]
    warm.shutdown()
    assert {r.id for r in store.list_runs()} == {a.id, b.id} and dot_folders(store) == []


def test_timeout_in_warm_child_kills_it_and_stores_a_failed_run(tmp_path):
    path = _user_file(tmp_path, USER_PRELUDE + """\
import time


def build(device, dtype):
    time.sleep(120)


SPEC = SampleSpec("sleepy", "Sleepy", "sleeps", build=build, example_inputs=example_inputs)
""")
    store = RunStore(tmp_path / "home")
    child = warm_and_ready(store)
    t = time.monotonic()
    run = capture(path, CaptureOptions(device="cpu", timeout_s=4), store=store, warm=True)
    assert time.monotonic() - t < 20
    assert run.meta["warm_child"] is True and run.status == "failed"
    assert run.reason.startswith("timed out after 4 s while building")
    assert child.proc.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(child.proc.pid, 0)  # the whole group is gone


def test_parent_gone_the_idle_child_removes_its_folder(tmp_path):
    store = RunStore(tmp_path / "home")
    child = warm_and_ready(store)
    child.proc.stdin.close()  # what the parent's death looks like from the child
    assert child.proc.wait(timeout=30) == 0
    assert not child.tmp.exists() and dot_folders(store) == []


def test_mismatch_or_stale_is_discarded_and_capture_goes_cold(tmp_path, monkeypatch):
    store, other = RunStore(tmp_path / "a"), RunStore(tmp_path / "b")
    assert prewarm(store)
    first = warm.current()
    assert warm.take(other, CPU) is None  # another store home
    assert first.proc.wait(timeout=10) is not None and not first.tmp.exists()
    assert prewarm(store)
    second = warm.current()
    assert warm.take(store, CaptureOptions(device="cpu", extra_env=(("X_WARM_TEST", "1"),))) is None
    assert not second.tmp.exists()
    assert prewarm(store)
    third = warm.current()
    monkeypatch.setattr(warm, "MAX_AGE_S", 0.0)
    assert warm.take(store, CPU) is None and not third.tmp.exists()
    monkeypatch.setenv(warm.DISABLE_ENV, "0")
    assert prewarm(store) is False and warm.current() is None
