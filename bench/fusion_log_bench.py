"""What the fusion log adds to parsing a run: gpt_small (sample_runs/gpt_small.zip) with its
logs/fusion.log, and the same zip without it, alternating.

Usage: python bench/fusion_log_bench.py [--repeat N]
Prints in-process parse_path medians (every artifact, both graphs) and the whole process
`compile-viz parse --json > file`, each with and without the log, and the log's own parse.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compile_viz.artifacts import parse_path  # noqa: E402
from compile_viz.artifacts.fusion_log import parse_fusion_log  # noqa: E402


def without_log(src: Path, dst: Path) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if not info.filename.endswith("logs/fusion.log"):
                zout.writestr(info, zin.read(info.filename))


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    src = ROOT / "sample_runs" / "gpt_small.zip"
    tmp = Path(tempfile.mkdtemp())
    bare = tmp / "gpt_small_no_log.zip"
    without_log(src, bare)
    with zipfile.ZipFile(src) as zf:
        log = zf.read(next(n for n in zf.namelist() if n.endswith("logs/fusion.log")))
    out = tmp / "out.json"
    cli = [sys.executable, "-m", "compile_viz", "parse", "--json"]
    res: dict[str, list[float]] = {"with": [], "without": [], "log alone": [], "cli with": [], "cli without": []}
    for _ in range(args.repeat):
        res["with"].append(timed(lambda: parse_path(str(src))))
        res["without"].append(timed(lambda: parse_path(str(bare))))
        res["log alone"].append(timed(lambda: parse_fusion_log(log, path="fusion.log")))
    for _ in range(max(3, args.repeat // 3)):
        for key, z in (("cli with", src), ("cli without", bare)):
            with open(out, "w") as fh:
                res[key].append(timed(lambda z=z, fh=fh: subprocess.run([*cli, str(z)], stdout=fh, check=True, cwd=ROOT)))
    med = {k: statistics.median(v) for k, v in res.items()}
    lines = log.count(b"\n")
    print(f"fusion.log: {len(log) / 1e6:.2f} MB, {lines} lines")
    for k, v in res.items():
        print(f"{k:12s} median {med[k]:8.1f} ms  (min {min(v):.1f})")
    print(f"parse_path: +{100 * (med['with'] - med['without']) / med['without']:.1f}% with the log; "
          f"whole process parse --json: +{100 * (med['cli with'] - med['cli without']) / med['cli without']:.1f}%")
    os.remove(out)


if __name__ == "__main__":
    main()
