"""The parent side of a capture: spawn the child, relay progress, enforce timeout and cancel,
store the run. Torch-free: importing this does not import torch.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from compile_viz.artifacts.discover import inductor_graphs
from compile_viz.capture import warm as warm_child
from compile_viz.capture.options import CaptureOptions
from compile_viz.capture.protocol import REQUEST_FILE, RESULT_FILE, Progress, parse_progress
from compile_viz.capture.userfile import ModelRef, ModelRefError, resolve_model_ref
from compile_viz.record.process import child_env, file_tail, kill_group, kill_leftovers
from compile_viz.record.reasons import one_line, signal_name
from compile_viz.store import Run, RunStore, new_run_id

STDERR_TAIL = 4000
ProgressCallback = Callable[[Progress], None]


def capture(model: str, options: CaptureOptions | None = None, *, store: RunStore | None = None,
            on_progress: ProgressCallback | None = None, cancel: threading.Event | None = None,
            warm: bool = False, warm_ahead: bool = False) -> Run:
    """Return the stored Run of compiling `model` in a child process; never raises for a failed capture.

    `model` is a sample name, "path.py" or "path.py:NAME". `on_progress` is called on this thread
    with each Progress; setting `cancel` kills the child's process group and stores a failed run.
    `warm`: use the warm child (torch already imported) when one matches, else start cold as
    always; either way start the next warm child when done (see warm.py). `warm_ahead`: start it
    as soon as this capture's child is under way instead, so that its import of torch overlaps this
    compile (a sweep's worker, which runs cells back to back on a machine with cores to spare).
    """
    options = options or CaptureOptions()
    store = store or RunStore()
    started = time.monotonic()
    meta = {"schema": 1, "model": model, "model_source": None, "options": options.to_json(),
            "created": _now(), "status": "failed", "reason": None, "timings": {},
            "graph_breaks": [], "recompiles": [], "host": host_info()}
    try:
        ref = resolve_model_ref(model)
    except ModelRefError as e:
        ref, meta["reason"] = None, str(e)
    label = ref.label if ref else "invalid"
    taken = _take_warm(ref, options, store) if warm and ref is not None else None
    run_id, tmp = (new_run_id(label), taken.tmp) if taken else store.begin(label)
    if warm and warm_ahead:
        _prewarm(store, options)
    try:
        if ref is not None:
            meta.update(model=label, model_source=ref.kind, model_ref=asdict(ref), warm_child=taken is not None)
            meta.update(_run_child(ref, options, tmp, on_progress, cancel, taken.proc if taken else None))
    except Exception as e:  # the capture machinery itself failed; still store what we have
        meta["reason"] = one_line(f"capture failed: {type(e).__name__}: {e}")
    meta["timings"]["wall_s"] = round(time.monotonic() - started, 3)
    meta["finished"] = _now()
    run = store.commit(run_id, tmp, meta)
    _relay(on_progress, Progress("stored", meta["timings"]["wall_s"], str(run.path),
                                 {"status": run.status, "reason": run.reason}))
    if warm:
        _prewarm(store, options)  # a no-op when the one started ahead is waiting
    return run


def _prewarm(store: RunStore, options: CaptureOptions) -> None:
    try:
        warm_child.prewarm(store, options)
    except Exception:  # the next capture simply starts cold
        pass


def _take_warm(ref: ModelRef, options: CaptureOptions, store: RunStore) -> warm_child.WarmChild | None:
    """Return the warm child, already holding this capture's request, or None (then go cold)."""
    taken = warm_child.take(store, options)
    if taken is None:
        return None
    if taken.send(_write_request(ref, options, taken.tmp)):
        return taken
    warm_child.discard(taken)
    return None


def _write_request(ref: ModelRef, options: CaptureOptions, tmp: Path) -> Path:
    logs = tmp / "logs"
    request = {"model_ref": asdict(ref), "options": options.to_json(), "result_path": str(logs / RESULT_FILE)}
    (logs / REQUEST_FILE).write_text(json.dumps(request, indent=1), encoding="utf-8")
    return logs / REQUEST_FILE


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def _relay(callback: ProgressCallback | None, progress: Progress) -> None:
    if callback is None:
        return
    try:
        callback(progress)
    except Exception:  # a broken UI callback must not break the capture
        pass


def _run_child(ref: ModelRef, options: CaptureOptions, tmp: Path, on_progress: ProgressCallback | None,
               cancel: threading.Event | None, proc: subprocess.Popen | None = None) -> dict:
    """Run the child (a cold one, unless `proc` is a warm one holding its request) to the end,
    timeout or cancel; return the meta fields it produced."""
    logs = tmp / "logs"
    if proc is None:
        request_path = _write_request(ref, options, tmp)
        env = child_env(tmp)
        env.update(dict(options.extra_env))
        with open(logs / "stderr.txt", "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "compile_viz.capture.child", str(request_path)],
                                    cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=err, start_new_session=True)
    ended, last_phase = _watch(proc, logs / "stdout.txt", options.timeout_s, on_progress, cancel)
    shutil.rmtree(tmp / "inductor_cache", ignore_errors=True)
    return _outcome(tmp, proc.returncode, ended, last_phase, options.timeout_s)


def _watch(proc: subprocess.Popen, stdout_path: Path, timeout_s: float, on_progress: ProgressCallback | None,
           cancel: threading.Event | None) -> tuple[str, str]:
    """Relay progress until the child exits; return (how it ended, last phase seen)."""
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_read_stdout, args=(proc, stdout_path, lines), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout_s
    ended, last_phase, exited_at = "exited", "starting", None
    while True:
        try:
            item = lines.get(timeout=0.1)
            if item is None:  # stdout closed: the child (and everything holding the pipe) is gone
                break
            last_phase = item.phase
            _relay(on_progress, item)
            continue
        except queue.Empty:
            pass
        if cancel is not None and cancel.is_set():
            ended = "cancelled"
        elif time.monotonic() > deadline:
            ended = "timeout"
        elif proc.poll() is not None:
            exited_at = exited_at or time.monotonic()
            if not reader.is_alive():
                break
            if time.monotonic() - exited_at > 5:  # leftover workers still hold stdout open
                kill_leftovers(proc)
        if ended != "exited":
            kill_group(proc)
            break
    proc.wait()
    kill_leftovers(proc)
    reader.join(timeout=5)
    return ended, last_phase


def _read_stdout(proc: subprocess.Popen, stdout_path: Path, lines: queue.Queue) -> None:
    with open(stdout_path, "wb") as out:
        for raw in proc.stdout:
            out.write(raw)
            out.flush()
            progress = parse_progress(raw.decode("utf-8", "replace").rstrip("\n"))
            if progress is not None:
                lines.put(progress)
    lines.put(None)


def _outcome(tmp: Path, returncode: int, ended: str, last_phase: str, timeout_s: float) -> dict:
    """Return the meta fields from the child's result file, its exit and the debug tree."""
    logs = tmp / "logs"
    try:
        result = json.loads((logs / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        result = {}
    stderr_tail = file_tail(logs / "stderr.txt", STDERR_TAIL)
    meta = {k: v for k, v in result.items() if k not in ("status", "reason")}
    meta.update(exit_code=returncode, stderr_tail=stderr_tail, phase=result.get("phase", last_phase))
    meta.setdefault("timings", {})
    meta["graphs"] = inductor_graphs(tmp / "debug")
    if ended == "timeout":
        reason = f"timed out after {timeout_s:g} s while {last_phase}; the child's process group was killed"
    elif ended == "cancelled":
        reason = f"cancelled while {last_phase}; the child's process group was killed"
    elif result.get("status") == "complete" and returncode == 0:
        reason = None if meta["graphs"] else "torch wrote no Inductor graph folders under debug/ (warm cache?)"
    elif result.get("reason"):
        reason = result["reason"]
    elif returncode is not None and returncode < 0:
        reason = f"child process died from {signal_name(-returncode)} while {last_phase}"
    else:
        last = next((ln for ln in reversed(stderr_tail.splitlines()) if ln.strip()), "")
        reason = one_line(f"child exited with code {returncode} while {last_phase}: {last}")
    meta["status"] = "complete" if reason is None else "failed"
    meta["reason"] = reason
    return meta






def host_info() -> dict:
    return {"node": platform.node(), "platform": platform.platform()}
