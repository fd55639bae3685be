"""Whole-process `compile-viz parse --json SRC > file` on captures nobody here wrote: wall time
(median of N fresh processes, interpreter start and imports included) and the JSON's size.

Usage: python bench/parse_cli_bench.py [--repeat N]   (the public corpus sets, then tests/fixtures/third_party)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trace_bench import child_env  # bytecode caching on, as an installed package runs

ROOT = Path(__file__).resolve().parents[1]


def sources() -> list[Path]:
    public = ROOT.parent / "shared" / "corpus" / "public"
    found = sorted(p for p in public.iterdir() if p.is_dir()) if public.is_dir() else []
    return found + sorted((ROOT / "tests" / "fixtures" / "third_party").glob("*.zip"))


def one(src: Path, out: str) -> float:
    t = time.perf_counter()
    with open(out, "w") as fh:
        subprocess.run([sys.executable, "-m", "compile_viz", "parse", "--json", str(src)], stdout=fh, check=True, cwd=ROOT,
                       env=child_env())
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    out = os.path.join(tempfile.mkdtemp(), "parse.json")
    one(sources()[0], out)  # warm the file cache
    print(f"{'capture':48s} {'median s':>8s} {'min s':>6s} {'JSON KB':>8s}")
    for src in sources():
        times = [one(src, out) for _ in range(args.repeat)]
        print(f"{src.name:48s} {statistics.median(times):8.3f} {min(times):6.3f} {os.path.getsize(out) / 1024:8.0f}")


if __name__ == "__main__":
    main()
