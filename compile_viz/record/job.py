"""`compile-viz record -- CMD ...`: run a user's job unchanged and keep everything torch.compile
writes about it, as a stored run.

The job runs with the environment that makes PyTorch write what the parsers read (the TORCH_TRACE
folder, the debug tree, caches off as a capture has them, Inductor's provenance) and with the
record hook first on PYTHONPATH (hook/sitecustomize.py: each rank's debug tree apart, the
fusion log per process, a record of each process; with `--profile`, a torch.profiler trace of a few
optimizer steps per process that trains, step_profile.py). Its stdout and stderr pass through live and
are kept in logs/ (capped: the head and the tail are kept and meta.json says how much was not).
Everything lands in the store's temporary folder for the run, renamed into place at the end, so a
job that fails, is killed or is interrupted leaves nothing half-written outside it.
Torch-free: this process never imports torch.
"""

from __future__ import annotations

import collections
import datetime as _dt
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from compile_viz.record.meta import job_meta
from compile_viz.record.process import compile_env
from compile_viz.record.reasons import one_line
from compile_viz.store import Run, RunStore

HOOK_DIR = Path(__file__).resolve().parent / "hook"
HOOK_ENV = "COMPILE_VIZ_RECORD"
KEEP_BYTES = 32 * 1024 * 1024  # of each stream's head, and again of its tail
STOP_GRACE_S = (10.0, 5.0)  # after SIGINT, then after SIGTERM, before SIGKILL
PROFILE_ENV = HOOK_ENV + "_PROFILE"  # "WARMUP,STEPS": the hook profiles that many optimizer steps
KERNEL_PROFILE_ENV = "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE"  # torch._inductor.config.cpp.enable_kernel_profile


def record_env(tmp: Path, base: dict[str, str] | None = None, *, keep_caches: bool = False,
               profile: tuple[int, int] | None = None) -> dict[str, str]:
    """The job's environment: its own, plus what makes torch write every artifact into `tmp`.
    `keep_caches`: Inductor's caches stay on (fresh, in `tmp`, one per rank: the hook splits them),
    so a graph compiled twice (a recompile to the same graph, FSDP's per-block frames) is served
    from the cache the second time, faster, and without a debug folder of its own. `profile`:
    (warm-up steps, profiled steps) for the hook's torch.profiler trace (step_profile.py)."""
    env = compile_env(tmp, base, path_first=HOOK_DIR, caches_off=not keep_caches)
    env.setdefault("PYTHONUNBUFFERED", "1")  # the job's lines pass through as it prints them
    env.update({HOOK_ENV: str(tmp), HOOK_ENV + "_PARENT": str(os.getpid())})
    if keep_caches:
        env[HOOK_ENV + "_CACHES"] = "1"
    if profile is not None:
        env[PROFILE_ENV] = f"{profile[0]},{profile[1]}"
        env.setdefault(KERNEL_PROFILE_ENV, "1")  # C++ kernels appear in the profile only with this on
    return env


def job_name(argv: list[str]) -> str:
    """What a run of `argv` is called: the script's or module's name (`train` for `torchrun ...
    train.py`, `pkg.train` for `python -m pkg.train`), else the program's."""
    for i, arg in enumerate(argv):
        if arg == "-m" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.endswith(".py"):
            return Path(arg).stem
    return Path(argv[0]).name if argv else "job"


class _Stream:
    """Copies one of the job's streams to ours as it comes, and keeps its head and tail in a file."""

    def __init__(self, source, sink, path: Path, keep: int) -> None:
        self.source, self.sink, self.path, self.keep = source, sink, path, keep
        self.total = 0
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_bytes = 0
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        with open(self.path, "wb") as out:
            for chunk in iter(lambda: self.source.read1(65536), b""):
                self._pass(chunk)
                room = self.keep - self.total
                if room > 0:
                    out.write(chunk[:room])
                if len(chunk) > room:
                    self._keep_tail(chunk[max(room, 0):])
                self.total += len(chunk)
            if self.tail:
                out.write(f"\n[compile-viz record: {self.dropped} bytes not kept here]\n".encode())
                out.write(b"".join(self.tail)[-self.keep:])

    def _pass(self, chunk: bytes) -> None:
        try:
            self.sink.write(chunk)
            self.sink.flush()
        except (OSError, ValueError):  # our own reader left: keep recording
            pass

    def _keep_tail(self, chunk: bytes) -> None:
        self.tail.append(chunk)
        self.tail_bytes += len(chunk)
        while self.tail_bytes - len(self.tail[0]) >= self.keep:
            self.tail_bytes -= len(self.tail.popleft())

    @property
    def kept(self) -> int:
        return min(self.total, self.keep) + min(self.tail_bytes, self.keep)

    @property
    def dropped(self) -> int:
        return self.total - self.kept

    def join(self) -> None:
        self.thread.join()


def record(argv: list[str], *, store: RunStore | None = None, name: str | None = None,
           timeout_s: float | None = None, keep_caches: bool = False, keep_bytes: int = KEEP_BYTES,
           profile: tuple[int, int] | None = None, stdout=None, stderr=None) -> Run:
    """Run `argv` to its end (or timeout, or Ctrl-C) and return the stored run; never raises for a
    failed job. The job's output goes to `stdout`/`stderr` (binary; default ours) as it comes.
    `profile`: (warm-up, steps): each process that steps an optimizer writes a torch.profiler trace
    of `steps` steps after the first `warm-up` ones to profile/."""
    store = store or RunStore()
    name = name or job_name(argv)
    started, created = time.monotonic(), _now()
    run_id, tmp = store.begin(name)
    (tmp / "logs" / "processes").mkdir()
    ended, code = "exited", None
    try:
        env = record_env(tmp, keep_caches=keep_caches, profile=profile)
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        ended, proc, streams = f"could not start: {e.strerror or e}", None, []
    else:
        streams = [_Stream(proc.stdout, stdout or sys.stdout.buffer, tmp / "logs" / "stdout.txt", keep_bytes),
                   _Stream(proc.stderr, stderr or sys.stderr.buffer, tmp / "logs" / "stderr.txt", keep_bytes)]
        ended, code = _wait(proc, timeout_s)
    for stream in streams:
        stream.join()
    shutil.rmtree(tmp / "inductor_cache", ignore_errors=True)
    wall_s = round(time.monotonic() - started, 3)
    meta = job_meta(tmp, argv=argv, name=name, created=created, ended=ended, exit_code=code, wall_s=wall_s,
                    streams={"stdout": _kept(streams, 0), "stderr": _kept(streams, 1)}, keep_caches=keep_caches,
                    profile=profile)
    meta["finished"] = _now()
    return store.commit(run_id, tmp, meta)


def _kept(streams: list[_Stream], i: int) -> dict:
    if i >= len(streams):
        return {"bytes": 0, "kept": 0}
    return {"bytes": streams[i].total, "kept": streams[i].kept}


def _wait(proc: subprocess.Popen, timeout_s: float | None) -> tuple[str, int | None]:
    """Wait for the job; on timeout or Ctrl-C stop its whole process group. Return (how it ended,
    its exit code: negative for a signal, as subprocess gives it)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while True:
            try:
                code = proc.wait(timeout=0.2)
                _stop_group(proc, grace=False)  # workers the job left behind (compile pools)
                return "exited", code
            except subprocess.TimeoutExpired:
                if deadline is not None and time.monotonic() > deadline:
                    _stop_group(proc)
                    return f"timed out after {timeout_s:g} s", proc.returncode
    except KeyboardInterrupt:
        _stop_group(proc)
        return "interrupted (Ctrl-C)", proc.returncode


def _stop_group(proc: subprocess.Popen, grace: bool = True) -> None:
    """SIGINT the job's process group (what Ctrl-C would have sent), then SIGTERM, then SIGKILL."""
    steps = [(signal.SIGINT, STOP_GRACE_S[0]), (signal.SIGTERM, STOP_GRACE_S[1])] if grace else []
    for sig, wait_s in steps:
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=wait_s)
            break
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:  # a second Ctrl-C: no more grace
            break
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def exit_status(run: Run) -> int:
    """The command's exit code for a recorded run: the job's own; 128+N for a signal (as a shell
    says it); 130 when interrupted; 1 when the job could not start or compiled nothing."""
    job = run.meta.get("job") or {}
    code = job.get("exit_code")
    if str(job.get("ended", "")).startswith("interrupted"):
        return 130
    if code is None:
        return 1
    if code < 0:
        return 128 - code
    return code or (0 if run.ok else 1)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def summary_line(run: Run) -> str:
    """One line on a recorded run for the terminal: status, ranks, compile ids, graphs, time."""
    job, trace = run.meta.get("job") or {}, run.meta.get("trace") or {}
    ranks = [r for r in job.get("ranks") or [] if r is not None]
    parts = [f"recorded {run.model}: {run.status}" + (f" ({run.reason})" if run.reason else ""),
             f"{len(ranks)} ranks" if len(ranks) > 1 else "",
             f"{trace.get('compile_ids', 0)} compile ids", f"{len(run.meta.get('graphs') or [])} graphs",
             f"{job.get('wall_s', 0):.1f} s"]
    return one_line(", ".join(p for p in parts if p))
