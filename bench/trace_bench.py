"""Whole-process reading of a TORCH_TRACE log: `compile-viz parse --json LOG > file` and
`compile-viz parse LOG > file` against `tlparse LOG -o DIR --overwrite --no-browser`, alternating,
median of N fresh processes; then where our time goes, in one process.

Usage: python bench/trace_bench.py [--repeat N] [--log PATH]
(default log: the trace/ of sample_runs/gpt_small.zip; tlparse from PATH or the venv: pip install tlparse)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def gpt_small_log(tmp: str) -> str:
    with zipfile.ZipFile(ROOT / "sample_runs" / "gpt_small.zip") as z:
        (name,) = [n for n in z.namelist() if n.startswith("trace/")]
        return z.extract(name, tmp)


def timed(cmd: list[str], out: str) -> float:
    t = time.perf_counter()
    with open(out, "w") as fh:
        subprocess.run(cmd, stdout=fh, stderr=subprocess.DEVNULL, check=True, cwd=ROOT)
    return time.perf_counter() - t


def stages(log: str) -> dict[str, float]:
    """Seconds per stage of `parse --json` in this process (imports already done)."""
    from compile_viz import parse_cli
    from compile_viz.artifacts.trace import parse_trace
    from compile_viz.artifacts.trace_graphs import trace_parse

    t = [time.perf_counter()]
    data = Path(log).read_bytes()
    trace = parse_trace(data, path=log)
    t.append(time.perf_counter())
    parsed = trace_parse(log, [trace])
    t.append(time.perf_counter())
    doc = parse_cli.debug_parse_json(parsed)
    t.append(time.perf_counter())
    json.dump(doc, io.StringIO(), indent=1)
    t.append(time.perf_counter())
    names = ("read the log", "parse its graphs", "link + build the JSON", "json.dump(indent=1)")
    return dict(zip(names, (b - a for a, b in zip(t, t[1:], strict=False)), strict=True))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--log")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    log = args.log or gpt_small_log(tmp)
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    cmds = {
        "compile-viz parse --json": [sys.executable, "-m", "compile_viz", "parse", "--json", log],
        "compile-viz parse": [sys.executable, "-m", "compile_viz", "parse", log],
        "python -c pass (interpreter start)": [sys.executable, "-c", "pass"],
    }
    if os.path.exists(tlparse):
        cmds["tlparse"] = [tlparse, log, "-o", os.path.join(tmp, "tl_out"), "--overwrite", "--no-browser"]
    else:
        print("tlparse not found: pip install tlparse")
    out = os.path.join(tmp, "out")
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for cmd in cmds.values():
        timed(cmd, out)  # warm the file cache and the .pyc
    for _ in range(args.repeat):  # alternating, so that a noisy moment hits every command
        for name, cmd in cmds.items():
            times[name].append(timed(cmd, out))
    print(f"log: {log} ({os.path.getsize(log) / 1e6:.1f} MB)")
    print(f"{'command':40s} {'median s':>8s} {'min s':>6s}")
    for name, ts in times.items():
        print(f"{name:40s} {statistics.median(ts):8.3f} {min(ts):6.3f}")
    for name, s in stages(log).items():
        print(f"  in process: {name:28s} {s:6.3f} s")


if __name__ == "__main__":
    main()
