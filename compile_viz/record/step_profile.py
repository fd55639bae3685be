"""A run's torch.profiler (Kineto) traces, in its `profile/` folder: a few of a recorded job's
training steps (`compile-viz record --profile`), or a capture's compiled step (`capture --profile`,
`profile_calls`, from the capture child).

The record hook loads this file by its path once `torch.optim.optimizer` is imported (the job need
not have compile_viz on its path) and calls `install`. It registers a global optimizer step post
hook: after `warmup` steps of the first optimizer that steps (a job with two optimizers counts
one of them, so a step is one training iteration), the profiler starts; after `steps` more it
stops and the trace goes to `profile/<name>.pt.trace.json` in the run folder (`rank<R>-pid<P>`
for a rank, `pid<P>` otherwise); the hook then returns at once (it stays registered: removing it
from inside the optimizer's own loop over its hooks would change the dict it iterates). A profile still running at exit is
stopped and written with the steps it has (none when no step ended under it). Each profiled process notes what it did in its record
(`profile` in logs/processes/<pid>.json). Nothing here may break the job: every step is guarded.

Steady steps: a step that compiled (Dynamo traced, Inductor generated or Triton autotuned: any of
torch's `dynamo_timed` compile events counted in `torch._dynamo.utils.compilation_time_metrics`) is
no step to time. The profile starts after the warm-up at the first step that compiled nothing (at
most SETTLE_STEPS later, then anyway); when a step inside the window compiles, the window so far is
written (so a job that ends now still leaves a profile, whose compile work the reader sets apart)
and the profile re-arms: it starts again after the next quiet step, at most REARMS times. The
process record's `profile` says which steps were profiled (`first_step`, `last_step`, counted in
optimizer steps from 1), which compiled (`compiled_steps`) and why (`why`, one line).

The trace carries no `ProfilerStep#N` ranges: the hook runs inside `Optimizer.step`'s own
record_function, and a range begun there and ended in the next step would not nest. The number of
steps it covers is in the trace's `compile_viz_steps` field instead. Stdlib only at import: torch
is half imported when this loads, and is used only from the hook, once the job steps.
"""

from __future__ import annotations

import os
import sys

ENV = "COMPILE_VIZ_RECORD_PROFILE"  # "WARMUP,STEPS", set by `compile-viz record --profile`
FOLDER = "profile"
CAPTURE_TRACE = "capture.pt.trace.json"
SETTLE_STEPS = 10  # steps past the warm-up to wait for a step that compiles nothing
REARMS = 2  # windows restarted after a recompile inside them, at most


def compile_events() -> int | None:
    """How many compile events (Dynamo, AOTAutograd, Inductor, Triton autotuning) this process has
    timed so far; None where torch keeps no such count (the window is then never re-armed)."""
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return 0 if "torch" in sys.modules else None  # Dynamo never imported: nothing compiled yet
    metrics = getattr(utils, "compilation_time_metrics", None)
    if isinstance(metrics, dict):
        return sum(len(v) for v in metrics.values() if isinstance(v, list))
    counters = getattr(utils, "counters", None)
    try:
        return int(counters["stats"]["unique_graphs"])
    except Exception:
        return None


def parse_setting(text: str) -> tuple[int, int]:
    """(warmup, steps) from "W,N"; ValueError when it is not two counts, steps at least 1."""
    warmup, steps = (int(part) for part in text.split(","))
    if warmup < 1 or steps < 1:
        raise ValueError(f"{ENV}={text!r}: warm-up and steps must be at least 1")
    return warmup, steps


def trace_name(pid: int, rank: str | None) -> str:
    """`rank1-pid4321.pt.trace.json` for a rank, `pid4321.pt.trace.json` otherwise."""
    who = f"rank{rank}-pid{pid}" if rank and rank.isdigit() else f"pid{pid}"
    return f"{who}.pt.trace.json"


def profile_calls(torch, call, *, device: str, run_dir, warmup: int = 1, steps: int = 3) -> dict:
    """Call `call()` `warmup` times, then `steps` times under torch.profiler (one `ProfilerStep#N` range
    each); write the trace to profile/capture.pt.trace.json in `run_dir`; return meta.json's `profile`."""
    from torch.profiler import ProfilerAction, ProfilerActivity, profile

    for _ in range(warmup):
        call()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    with profile(activities=activities, schedule=lambda _step: ProfilerAction.RECORD) as prof:
        for i in range(steps):
            if i:
                prof.step()  # closes ProfilerStep#(i-1), opens ProfilerStep#i
            call()
    folder = os.path.join(str(run_dir), FOLDER)
    os.makedirs(folder, exist_ok=True)
    part = os.path.join(folder, CAPTURE_TRACE + ".part")
    prof.export_chrome_trace(part)
    os.replace(part, os.path.join(folder, CAPTURE_TRACE))
    return {"files": [f"{FOLDER}/{CAPTURE_TRACE}"], "warmup": warmup, "steps": steps,
            "activities": [a.name for a in activities]}


def install(optimizer_module, *, run: str, setting: str, record) -> None:
    """Register the step hook on the just-imported `torch.optim.optimizer`; `record` is the hook's
    process record (its `data` dict and `finish(ended=False)`, which writes it)."""
    warmup, steps = parse_setting(setting)
    optimizer_module.register_optimizer_step_post_hook(StepProfile(run, warmup, steps, record))


class StepProfile:
    """The optimizer step post hook, and the profiler it starts and stops."""

    def __init__(self, run: str, warmup: int, steps: int, record) -> None:
        self.run, self.warmup, self.steps, self.record = run, warmup, steps, record
        self.first = None  # id() of the optimizer whose steps are counted
        self.count = 0  # its steps so far
        self.profiled = 0  # steps since the profiler started
        self.prof = None
        self.done = False
        self.events = compile_events()  # compile events so far: a step that adds some compiled
        self.compiled: list[int] = []  # the steps that compiled
        self.rearms, self.waiting_since, self.first_step, self.why = 0, None, None, ""
        self.note = record.data.setdefault("profile", {"warmup": warmup, "steps": steps, "optimizer_steps": 0})

    def __call__(self, optimizer, args, kwargs) -> None:
        if self.done:
            return
        try:
            self._step(optimizer)
        except Exception as e:  # the job goes on without a profile
            self._give_up(f"{type(e).__name__}: {e}")

    def _step(self, optimizer) -> None:
        if self.first is None:
            self.first = id(optimizer)
            self.record.finish(ended=False)  # a process that trains is recorded, even if it never compiles
        if id(optimizer) != self.first:
            return
        self.count += 1
        self.note["optimizer_steps"] = self.count
        events = compile_events()
        compiled = events is not None and self.events is not None and events != self.events
        self.events = events
        if compiled:
            self.compiled.append(self.count)
        if self.prof is None:
            self._maybe_start(compiled)
            return
        self.profiled += 1
        if compiled and self.rearms < REARMS:
            self._stop()  # kept unless a quiet window follows
            self.done, self.rearms = False, self.rearms + 1
            self.waiting_since = self.count
            return
        if self.profiled >= self.steps:
            self._stop()

    def _maybe_start(self, compiled: bool) -> None:
        """Start after the warm-up, at the first step that compiled nothing (or once waiting is over)."""
        if self.count < self.warmup:
            return
        waited = self.count - max(self.warmup, self.waiting_since or 0)
        if compiled and waited < SETTLE_STEPS:
            return
        if self.rearms:
            self.why = f"re-armed after step {self.compiled[-1]} compiled; step {self.count} compiled nothing"
        elif compiled:
            self.why = (f"compiles had not settled {SETTLE_STEPS} steps after the warm-up (step {self.count} "
                        f"compiled too); their compile and autotune kernels are set apart when read")
        elif self.count > self.warmup:
            self.why = f"the first steps after the compiles settled (step {self.count} compiled nothing)"
        else:
            self.why = f"after {self.warmup} warm-up steps (step {self.count} compiled nothing)"
        self.first_step = self.count + 1
        self.profiled = 0
        self._start()

    def _start(self) -> None:
        import atexit

        import torch
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            activities.append(ProfilerActivity.CUDA)
        self.prof = profile(activities=activities)
        self.prof.start()
        self.note["activities"] = [a.name for a in activities]
        if not self.rearms:
            atexit.register(self._at_exit)  # registered now: it runs before torch's own exit handlers

    def _stop(self, at_exit: bool = False) -> None:
        prof, self.prof, self.done = self.prof, None, True
        prof.add_metadata_json("compile_viz_steps", str(self.profiled))
        prof.add_metadata_json("compile_viz_first_step", str(self.first_step))
        prof.stop()
        folder = os.path.join(self.run, FOLDER)
        os.makedirs(folder, exist_ok=True)
        name = trace_name(os.getpid(), os.environ.get("RANK"))
        part = os.path.join(folder, name + ".part")
        prof.export_chrome_trace(part)
        os.replace(part, os.path.join(folder, name))
        last = self.first_step + self.profiled - 1
        in_window = [s for s in self.compiled if self.first_step <= s <= last]
        if not in_window:
            why = self.why
        elif self.rearms < REARMS and not at_exit:
            why = f"{self.why}; step {in_window[-1]} compiled inside the window: re-armed, kept unless a quiet window follows"
        else:
            why = (f"{self.why}; step {in_window[-1]} compiled inside the window and no quiet window followed: "
                   f"its compile and autotune kernels are set apart when read")
        self.note.update(file=f"{FOLDER}/{name}", profiled_steps=self.profiled, stopped_at_exit=at_exit,
                         first_step=self.first_step, last_step=last, compiled_steps=in_window, why=why)
        self.record.finish(ended=False)

    def _at_exit(self) -> None:
        try:
            if self.prof is not None and self.profiled:
                self._stop(at_exit=True)
                return
            if self.prof is not None:  # no step ended under the profiler: nothing worth a trace
                prof, self.prof, self.done = self.prof, None, True
                prof.stop()
            if self.rearms and self.note.get("file"):  # re-armed, and the job ended first: the last window stays
                self.note["why"] = self.note.get("why", "").replace(
                    "re-armed, kept unless a quiet window follows",
                    "re-armed, but the job ended before a quiet window; its compile and autotune kernels "
                    "are set apart when read")
                self.record.finish(ended=False)
        except Exception as e:
            self._give_up(f"{type(e).__name__}: {e}")

    def _give_up(self, error: str) -> None:
        self.done = True
        try:
            if self.prof is not None:
                prof, self.prof = self.prof, None
                prof.stop()
        except Exception:
            pass
        self.note["error"] = " ".join(error.split())[:300]
        print(f"compile-viz record: no profile from this process: {self.note['error']}", file=sys.stderr)
        try:
            self.record.finish(ended=False)
        except Exception:
            pass
