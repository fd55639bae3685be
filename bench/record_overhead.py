"""What `compile-viz record` costs: a job's wall time recorded against the same job unrecorded, both as
whole processes, interleaved (plain, recorded, plain, recorded, ...), each started the way a user
starts it.

    python bench/record_overhead.py [--rounds 3] [--out FILE.json] -- CMD [ARGS...]

Each round runs CMD plain, then `python -m compile_viz record --home TMP -- CMD`. The plain job runs
with its usual Inductor caches (a fresh cache folder for the round: its compiles are cold, as a first
run is); the recorded one runs with caches off, as record always does. Prints, per round, both wall
times and their ratio, then the medians, and the recorded run's compile time (Dynamo's whole-frame
time of the slowest rank, from its trace): what the caches being off and the debug files cost sits there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], env: dict[str, str], log: Path) -> tuple[float, str]:
    """Wall seconds of one whole process (output to `log`), and its stdout's last line."""
    started = time.monotonic()
    with open(log, "ab") as out:
        done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=out, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - started
    text = done.stdout.decode("utf-8", "replace")
    with open(log, "ab") as out:
        out.write(done.stdout)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:6]} exited with {done.returncode}; see {log}")
    lines = text.strip().splitlines()
    return wall, lines[-1] if lines else ""


def ablated(cmd: list[str], tmp: Path, log: Path) -> dict[str, float]:
    """Wall seconds of the job with parts of record's environment (see --ablate)."""
    from compile_viz.record.job import HOOK_DIR, HOOK_ENV, record_env

    tmp.mkdir(parents=True)
    full = record_env(tmp)
    hook = {HOOK_ENV, HOOK_ENV + "_PARENT"}
    no_hook = {k: v for k, v in full.items() if k not in hook}
    no_hook["PYTHONPATH"] = os.pathsep.join(p for p in full["PYTHONPATH"].split(os.pathsep) if p != str(HOOK_DIR))
    variants = {
        "trace_only_s": dict(os.environ, TORCH_TRACE=str(tmp / "t1"), TORCHINDUCTOR_CACHE_DIR=str(tmp / "c1")),
        "trace_debug_caches_on_s": {k: v for k, v in no_hook.items() if k != "TORCHINDUCTOR_FORCE_DISABLE_CACHES"}
                                   | {"TORCHINDUCTOR_CACHE_DIR": str(tmp / "c2"), "TORCH_TRACE": str(tmp / "t2"),
                                      "TORCH_COMPILE_DEBUG_DIR": str(tmp / "d2")},
        "trace_debug_caches_off_s": no_hook | {"TORCHINDUCTOR_CACHE_DIR": str(tmp / "c3"), "TORCH_TRACE": str(tmp / "t3"),
                                               "TORCH_COMPILE_DEBUG_DIR": str(tmp / "d3")},
    }
    return {name: round(timed(cmd, env, log)[0], 2) for name, env in variants.items()}


def compile_s(trace_dir: Path) -> float | None:
    from compile_viz.trace_import import trace_fields

    return trace_fields(trace_dir).get("compile_s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="write the figures as JSON here too")
    parser.add_argument("--ablate", action="store_true",
                        help="also run the job with part of record's environment each round: TORCH_TRACE alone; "
                             "the trace and the debug tree with Inductor's caches on (fresh); the same with caches "
                             "off but no record hook (no fusion log, no process records)")
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("give the job's command after --")
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="record-bench-"))
    log = work / "jobs.log"
    rows = []
    for i in range(args.rounds):
        plain_env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(work / f"cache{i}"),
                         TRITON_CACHE_DIR=str(work / f"cache{i}" / "triton"))
        plain, _ = timed(cmd, plain_env, log)
        rec_env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
        recorded, run = timed([sys.executable, "-m", "compile_viz", "record", "--home", str(work / "home"), "--", *cmd],
                              rec_env, log)
        parts = ablated(cmd, work / f"ablate{i}", log) if args.ablate else {}
        rows.append({"round": i, "plain_s": round(plain, 2), "recorded_s": round(recorded, 2), **parts,
                     "ratio": round(recorded / plain, 3),
                     "recorded_compile_s": compile_s(Path(run) / "trace"), "run": run})
        print(json.dumps(rows[-1]), flush=True)
    summary = {
        "command": cmd, "rounds": rows, "host": platform.node(), "date": time.strftime("%Y-%m-%d"),
        "median_plain_s": statistics.median(r["plain_s"] for r in rows),
        "median_recorded_s": statistics.median(r["recorded_s"] for r in rows),
        "median_ratio": statistics.median(r["ratio"] for r in rows),
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rounds"}))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
