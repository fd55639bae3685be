"""`compile-viz share` against `tlparse` on the same runs (issue 37): size and time, whole processes.

Usage: python bench/share_bench.py [--repeat N] [--run NAME=ZIP ...] [--tlparse PATH]

Each run zip is unzipped once into a temporary folder. `share` reads the run folder (as `compile-viz
share RUN OUT.html` reads a stored run) and writes one HTML file, and, for a run of one log, `share
LOG` reads only the trace tlparse reads; tlparse reads the same run's
TORCH_TRACE logs (its trace/ folder: one log, or one per rank with --all-ranks-html) and writes its
folder of HTML, with --inductor-provenance where the log has provenance entries. Every command is a
fresh process (bytecode caching on, as an installed package runs), output to files; one warm-up
each, then N rounds with the commands alternating, so a noisy minute on a shared host hits them
alike. Wall seconds (median, min), CPU seconds (user + system of the process and its children:
share's Graphviz processes count), peak RSS of its largest process, and what each wrote (bytes,
files). Default runs: the bundled gpt_small, the 48-layer GPT-2 fixture, the 2-GPU DDP job.
tlparse: from PATH, the venv, or /tmp/tlvenv/bin (python -m venv /tmp/tlvenv && /tmp/tlvenv/bin/pip
install tlparse==0.4.3).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYC = Path(tempfile.gettempdir()) / "compile_viz_bench_pyc"
RUNS = {
    "gpt_small": ROOT / "sample_runs" / "gpt_small.zip",
    "gpt2_deep (48 layers)": ROOT / "tests" / "fixtures" / "scale" / "gpt2_deep.zip",
    "gpt2_ddp_2gpu (2 ranks)": ROOT / "tests" / "fixtures" / "jobs" / "gpt2_ddp_2gpu.zip",
}


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYC)
    return env


def find_tlparse(given: str | None) -> str | None:
    for cand in (given, shutil.which("tlparse"), str(Path(sys.executable).parent / "tlparse"), "/tmp/tlvenv/bin/tlparse"):
        if cand and os.path.exists(cand):
            return cand
    return None


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s of it and its children, peak RSS KB) of one fresh process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=child_env())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def written(path: Path) -> tuple[int, int]:
    """(bytes, files) at `path`, a file or a folder."""
    if path.is_file():
        return path.stat().st_size, 1
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def commands(name: str, folder: Path, out: Path, tlparse: str | None) -> dict[str, tuple[list[str], Path]]:
    logs = sorted(p for p in (folder / "trace").iterdir() if p.is_file())
    cmds = {f"compile-viz share RUN {name}.html": ([sys.executable, "-m", "compile_viz", "share", str(folder),
                                                     str(out / f"{name}.html")], out / f"{name}.html")}
    if len(logs) == 1:  # what tlparse reads, and nothing else: the trace has no fusion log and no scheduler IR
        cmds[f"compile-viz share LOG {name}_log.html"] = ([sys.executable, "-m", "compile_viz", "share", str(logs[0]),
                                                          str(out / f"{name}_log.html")], out / f"{name}_log.html")
    if tlparse:
        provenance = any(b"inductor_provenance" in p.read_bytes() for p in logs)
        extra = ["--inductor-provenance"] if provenance else []
        tl_out = out / f"tl_{name}"
        if len(logs) > 1:
            cmd = [tlparse, str(folder / "trace"), "--all-ranks-html", *extra]
        else:
            cmd = [tlparse, str(logs[0]), *extra]
        label = "tlparse " + ("TRACE_DIR --all-ranks-html" if len(logs) > 1 else "LOG") + (" -i" if extra else "")
        cmds[label] = (cmd + ["-o", str(tl_out), "--overwrite", "--no-browser"], tl_out)
    return cmds


def race(cmds: dict[str, tuple[list[str], Path]], repeat: int) -> dict[str, list[tuple[float, float, int]]]:
    for cmd, _ in cmds.values():  # warm the file cache and the .pyc
        timed(cmd)
    runs: dict[str, list[tuple[float, float, int]]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for name, (cmd, _) in cmds.items():
            runs[name].append(timed(cmd))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--run", action="append", default=[], metavar="NAME=ZIP", help="a run zip instead of the default three")
    ap.add_argument("--tlparse")
    args = ap.parse_args()
    runs = dict(r.split("=", 1) for r in args.run) if args.run else RUNS
    tlparse = find_tlparse(args.tlparse)
    version = subprocess.run([tlparse, "--version"], capture_output=True, text=True).stdout.strip() if tlparse else "none"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {version}, "
          f"dot {'found' if shutil.which('dot') else 'MISSING'}; load average {load:.1f} at the start; {args.repeat} rounds")
    print("\n| run | zip MB | command | median s | min s | CPU s | peak RSS MB | wrote | tlparse / this (medians) |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, zpath in runs.items():
            slug = "".join(c if c.isalnum() else "_" for c in name.split(" (")[0])
            folder = Path(tmp, slug)
            with zipfile.ZipFile(zpath) as z:
                z.extractall(folder)
            out = Path(tmp, "out")
            out.mkdir(exist_ok=True)
            cmds = commands(slug, folder, out, tlparse)
            results = race(cmds, args.repeat)
            medians = {k: statistics.median(w for w, _, _ in v) for k, v in results.items()}
            tl = next((m for k, m in medians.items() if k.startswith("tlparse")), None)
            zip_mb = Path(zpath).stat().st_size / 1e6
            for k, v in results.items():
                size, files = written(cmds[k][1])
                ratio = f"{tl / medians[k]:.2f}x" if tl and not k.startswith("tlparse") else ""
                wrote = f"{size / 1e6:.2f} MB in {files} file{'s' if files != 1 else ''}"
                if not k.startswith("tlparse"):
                    wrote += f" ({size / Path(zpath).stat().st_size:.2f}x the zip)"
                print(f"| {name} | {zip_mb:.2f} | `{k}` | {medians[k]:.3f} | {min(w for w, _, _ in v):.3f} | "
                      f"{statistics.median(c for _, c, _ in v):.3f} | {statistics.median(m for _, _, m in v) / 1024:.0f} | "
                      f"{wrote} | {ratio} |", flush=True)
            shutil.rmtree(folder)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
