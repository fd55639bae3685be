"""What a recorded job's run says of itself (its meta.json), read from what the job wrote: the
record hook's process records, the TORCH_TRACE logs, the debug tree and the generated code.
Torch-free.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

from compile_viz.artifacts.discover import inductor_graphs  # the same list a capture keeps
from compile_viz.record.process import file_tail
from compile_viz.record.reasons import one_line, signal_name, triton_error
from compile_viz.trace_import import code_facts, trace_fields

KIND = "job"  # meta["kind"] of a recorded job
ERROR_TAIL = 64 * 1024  # the stderr bytes searched for the job's error line


def processes(run_dir: Path) -> list[dict]:
    """The record hook's process records (logs/processes/*.json), by start time."""
    out = []
    for path in sorted((run_dir / "logs" / "processes").glob("*.json")):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return sorted(out, key=lambda p: p.get("started") or 0)


def folder_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def _error(proc: dict) -> str:
    """A process's uncaught exception in one line; a Triton compile error with its kernel, the offending
    line and where the caret points, as a capture's reason gives it (the hook keeps Triton's text whole)."""
    triton = proc.get("triton_error")
    if isinstance(triton, dict) and triton.get("text"):
        src = triton.get("src")
        return (f"Triton compile error: {triton.get('kind') or 'CompilationError'}"
                f"{triton_error(str(triton['text']), src if isinstance(src, str) else None)}")
    return str(proc["error"])


def ranks_of(procs: list[dict], trace_ranks: list) -> list[int]:
    found = {p["rank"] for p in procs if isinstance(p.get("rank"), int)}
    found |= {r for r in trace_ranks if isinstance(r, int)}
    return sorted(found)


def failure(procs: list[dict], ended: str, exit_code: int | None, stderr_tail: str) -> str | None:
    """One line on why the job failed, or None when it exited 0: the first rank's uncaught
    exception (where it was raised in the user's code), else how it ended, else its last error line."""
    if ended == "exited" and exit_code == 0:
        return None
    errors = [p for p in procs if p.get("error")]
    ranked = sorted(errors, key=lambda p: (p.get("rank") is None, p.get("rank") or 0))
    if ended != "exited":
        head = ended
    elif exit_code is not None and exit_code < 0:
        head = f"killed by {signal_name(-exit_code)}"
    else:
        head = f"exited with code {exit_code}"
    if ranked:
        p = ranked[0]
        who = f"rank {p['rank']}: " if p.get("rank") is not None else ""
        where = f" (at {p['error_at']})" if p.get("error_at") else ""
        others = len({q["rank"] for q in ranked if q.get("rank") is not None} - {p.get("rank")})
        more = f"; {others} more rank{'s' if others > 1 else ''} failed" if others > 0 else ""
        return one_line(f"{head}: {who}{_error(p)}{where}{more}")
    last = _error_line(stderr_tail)
    return one_line(f"{head}: {last}" if last else head)


def _error_line(text: str) -> str:
    """The last line of `text` that reads like a Python error (`ValueError: ...`), else its last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if ":" in line and (head.endswith(("Error", "Exception", "Interrupt")) or head == "AssertionError"):
            return line
    return lines[-1] if lines else ""


def versions(procs: list[dict]) -> dict:
    """torch, triton and CUDA versions as the job's processes saw them (the first that knew)."""
    out = {"python": platform.python_version()}
    for key in ("torch", "triton", "cuda", "hip"):
        value = next((p[key] for p in procs if p.get(key)), None)
        if value:
            out[key] = value
    return out


def hardware(procs: list[dict], device: str | None) -> dict:
    names = sorted({p["device_name"] for p in procs if p.get("device_name")})
    out = {"device": device or "?", "platform": platform.platform(), "node": platform.node()}
    if names:
        out["gpu"] = ", ".join(names)
        out["gpus_used"] = len({(p.get("rank"), p.get("device")) for p in procs if p.get("device_name")})
    return out


def job_meta(run_dir: Path, *, argv: list[str], name: str, created: str, ended: str, exit_code: int | None,
             wall_s: float, streams: dict, keep_caches: bool = False, profile: tuple[int, int] | None = None) -> dict:
    """meta.json of a recorded job, from what it wrote into `run_dir`."""
    procs = processes(run_dir)
    trace = trace_fields(run_dir / "trace")
    device, dtype = code_facts(run_dir)
    graphs = inductor_graphs(run_dir / "debug")
    reason = failure(procs, ended, exit_code, file_tail(run_dir / "logs" / "stderr.txt", ERROR_TAIL))
    if reason is None and not graphs and not trace.get("graphs"):
        reason = ("the job ran but compiled nothing: no torch.compile'd function was called, or the job "
                  "ran under `python -I`/`-S`, which skip the record hook")
    ranks = ranks_of(procs, trace.get("ranks") or [])
    world = max((p.get("world_size") or 0 for p in procs), default=0) or None
    meta = {
        "schema": 1, "kind": KIND, "model": name, "title": name, "created": created,
        "status": "complete" if reason is None else "failed", "reason": reason,
        "job": {"argv": argv, "cwd": os.getcwd(), "exit_code": exit_code, "ended": ended, "wall_s": wall_s,
                "ranks": ranks, "world_size": world, "processes": len(procs),
                "failed_ranks": sorted({p["rank"] for p in procs if p.get("error") and p.get("rank") is not None}),
                "streams": streams, "caches": "kept (per rank)" if keep_caches else "off",
                "sizes": {"trace": folder_bytes(run_dir / "trace"), "debug": folder_bytes(run_dir / "debug")}},
        "resolved": {"device": device or "?", "dtype": dtype},
        "versions": versions(procs), "hardware": hardware(procs, device),
        "trace": trace, "graphs": graphs,
        "timings": {"wall_s": wall_s, **({"compile_s": trace["compile_s"]} if trace.get("compile_s") else {})},
    }
    if profile is not None:
        meta["job"]["profile"] = profile_meta(run_dir, procs, *profile)
    return meta


def profile_meta(run_dir: Path, procs: list[dict], warmup: int, steps: int) -> dict:
    """meta.json's `job.profile` under `record --profile`: the traces written (paths in the run) and
    what each process profiled, or in one line why there is none."""
    files = sorted(p.relative_to(run_dir).as_posix() for p in (run_dir / "profile").glob("*.pt.trace.json"))
    notes = [p["profile"] | {"pid": p.get("pid"), "rank": p.get("rank")} for p in procs
             if isinstance(p.get("profile"), dict)]
    out = {"warmup": warmup, "steps": steps, "files": files,
           "processes": [n for n in notes if n.get("file") or n.get("error")]}
    if not files:
        out["reason"] = _no_profile(notes, warmup)
    return out


def _no_profile(notes: list[dict], warmup: int) -> str:
    errors = [n["error"] for n in notes if n.get("error")]
    most = max((n.get("optimizer_steps") or 0 for n in notes), default=0)
    if errors:
        return one_line(f"no profile: {errors[0]}")
    if most == 0:
        return ("no profile: the job never called a torch.optim optimizer's step(), which starts and stops "
                "the profile")
    if most <= warmup:
        return (f"no profile: the job made {most} optimizer step{'s' if most > 1 else ''}; the profile starts "
                f"after {warmup} (--profile-warmup) and needs one more")
    return "no profile: the profiled process wrote no trace (killed before it could?)"


def profile_note(meta: dict) -> str | None:
    """One line on the profile of a run recorded with --profile (its files, or why none), else None."""
    profile = (meta.get("job") or {}).get("profile")
    if not profile:
        return None
    if not profile.get("files"):
        return profile.get("reason") or "no profile"
    files = profile["files"]
    where = ", ".join(files) if len(files) <= 3 else f"{len(files)} traces in profile/"
    first = next((p for p in profile.get("processes") or () if p.get("first_step")), None)
    if first is None:  # recorded before the window said which steps it took
        return f"profiled {profile['steps']} steps after {profile['warmup']}: {where}"
    span = f"steps {first['first_step']}-{first['last_step']}" if first["last_step"] > first["first_step"] \
        else f"step {first['first_step']}"
    who = "" if len(files) == 1 else f" (rank {first['rank']}; each rank its own)" if first.get("rank") is not None else ""
    return f"profiled {span}{who}, {first.get('why') or 'after the warm-up'}: {where}"


def kept_note(meta: dict) -> str | None:
    """One line when the job's output was not all kept (what was, what was not), else None."""
    streams = (meta.get("job") or {}).get("streams") or {}
    cut = [f"{name} {s['kept'] / 1e6:.0f} of {s['bytes'] / 1e6:.0f} MB (head and tail)"
           for name, s in streams.items() if s.get("bytes", 0) > s.get("kept", 0)]
    return ("kept " + "; ".join(cut) + " in logs/") if cut else None
