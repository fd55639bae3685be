"""Big TORCH_TRACE logs (issue 25): whole processes, interleaved round by round, on one folder of
per-rank logs (bench/gpu_big_logs.sh records one: GPT-2 of 48 layers, DDP on 4 H100s, a recompile
per sequence length: 2.14 GB).

    .venv/bin/python bench/big_logs.py TRACE_DIR [--rounds 3] [--no-tlparse] [--import-only] [--before TREE]
    .venv/bin/python bench/big_logs.py TRACE_DIR --make [--times 18]   # the one-rank 535 MB log first

`--make` writes issue 34's big log into TRACE_DIR (a new folder): gpt2_deep's 29.7 MB TORCH_TRACE
log (tests/fixtures/scale/gpt2_deep.zip, trace/) repeated `--times` times, the k-th copy's entries
given frame id k so that no two compile ids collide (535 MB at 18). `--import-only` times read and
import alone (issue 34's goal: import <= 2x read, wall and CPU).

Each round, each a fresh process, wall time, CPU time and peak memory (getrusage of the waited-for
process: its largest process):
- read: a Python process reading every log's bytes (what any reader pays at least);
- import: `compile-viz import TRACE_DIR` into a new store, with no index kept (a first import);
- first view: a new process opening that stored run as the Viewer does (lazy parse, from the index
  the import kept) and drawing its biggest graph (link, DOT, Graphviz layout);
- first view, no index: the same on the log folder itself with no index kept (a folder opened
  without an import: the logs are indexed first);
- tlparse --all-ranks-html on the same folder (tlparse 0.4.3, pip install tlparse).
Then the Viewer page itself (AppTest, one process) on the imported run, cold then cached.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
BIN = Path(PY).parent

READ = "import sys\nfor f in sys.argv[1:]: open(f, 'rb').read()"
VIEW = """
import sys, time
t = time.perf_counter()
from compile_viz.artifacts import parse_path
from compile_viz.artifacts.trace.index import LAZY_FILE_BYTES
from compile_viz.linking import build_index
from compile_viz.render.fx_dot import GraphView, fx_dot
from compile_viz.render.svg import dot_to_svg
parse = parse_path(sys.argv[1], lazy_above=LAZY_FILE_BYTES)
opened = time.perf_counter()
def size(g):
    job = getattr(parse, "pending", {}).get(g.id)
    return job.size if job else 0
g = parse.graph(max(parse.graphs, key=size).id)
index = build_index(g)
dot = fx_dot(g.post_grad_graph, index, GraphView(collapsed=True, link="?run=x"))
try:
    svg = dot_to_svg(dot)
except Exception as e:  # no Graphviz on this machine
    print(f"layout skipped: {e}", file=sys.stderr)
print(f"{len(parse.graphs)} graphs; opened in {opened - t:.2f} s; {g.id}: {len(index.launches)} launches, "
      f"{len(g.post_grad_graph.nodes)} nodes, shown in {time.perf_counter() - opened:.2f} s", file=sys.stderr)
"""


RUSAGE = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write(p.stderr)
print(p.returncode, wall, r.ru_utime + r.ru_stime, r.ru_maxrss)
"""


def timed(cmd: list[str], env: dict | None = None, cwd: Path = REPO) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak MB, stderr's last line) of one whole process tree (the peak: its largest
    process, as getrusage of a waited-for child gives it)."""
    p = subprocess.run([PY, "-c", RUSAGE, *cmd], capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, cwd=cwd)
    code, wall, cpu, peak = p.stdout.split()
    if int(code):
        raise SystemExit(f"{cmd[:3]} failed ({code}): {p.stderr[-500:]}")
    tail = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    return float(wall), float(cpu), int(peak) / 1024, tail


SOURCE_ZIP = REPO / "tests" / "fixtures" / "scale" / "gpt2_deep.zip"


def make_big_log(trace_dir: Path, times: int) -> Path:
    """Write gpt2_deep's log `times` times over into trace_dir/rank_0.log (its envelopes' frame id
    0 made k in the k-th copy; payloads untouched, so their MD5s hold) and return its path."""
    import zipfile

    with zipfile.ZipFile(SOURCE_ZIP) as zf:
        name = next(n for n in zf.namelist() if n.startswith("trace/") and n.endswith(".log"))
        log = zf.read(name)
    trace_dir.mkdir(parents=True, exist_ok=False)
    out = trace_dir / "rank_0.log"
    with open(out, "wb") as fh:
        for k in range(times):
            fh.write(log.replace(b'"frame_id": 0, ', f'"frame_id": {k}, '.encode()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace_dir")
    ap.add_argument("--make", action="store_true", help="write the repeated gpt2_deep log into TRACE_DIR, then stop")
    ap.add_argument("--times", type=int, default=18, help="copies of gpt2_deep's log --make writes")
    ap.add_argument("--import-only", action="store_true", help="time read and import alone")
    ap.add_argument("--before", help="another tree of compile_viz (e.g. `git archive` of an older commit) whose "
                                     "import is timed in the same rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-tlparse", action="store_true")
    ap.add_argument("--tlparse", default=shutil.which("tlparse") or str(BIN / "tlparse"))
    ap.add_argument("--browser", action="store_true", help="also open the run in Chromium (the app served)")
    args = ap.parse_args()
    if args.make:
        out = make_big_log(Path(args.trace_dir), args.times)
        print(f"{out}: {out.stat().st_size / 1e6:.0f} MB")
        return
    logs = sorted(str(p) for p in Path(args.trace_dir).iterdir() if p.is_file())
    size = sum(os.path.getsize(f) for f in logs)
    print(f"{len(logs)} logs, {size / 1e9:.2f} GB; {os.cpu_count()} CPUs")
    work = Path(tempfile.mkdtemp(prefix="big-logs-"))
    rows: dict[str, list[tuple[float, float]]] = {}
    notes: dict[str, str] = {}
    try:
        for r in range(args.rounds):
            home, cache = work / f"home{r}", work / f"cache{r}"
            env = {"XDG_CACHE_HOME": str(cache)}
            steps = [("read", [PY, "-c", READ, *logs], None),
                     ("import", [PY, "-m", "compile_viz", "import", args.trace_dir, "--home", str(home)], env)]
            if args.before:
                old = work / f"before{r}"
                steps.append(("import (before)", [PY, "-m", "compile_viz", "import", args.trace_dir, "--home",
                                                  str(old / "home")],
                              {"XDG_CACHE_HOME": str(old / "cache"), "PYTHONPATH": args.before}))
            for name, cmd, e in steps:
                wall, cpu, peak, tail = timed(cmd, e, Path(args.before) if name == "import (before)" else REPO)
                rows.setdefault(name, []).append((wall, cpu, peak))
            if args.import_only:
                for d in (home, cache, work / f"before{r}"):
                    shutil.rmtree(d, ignore_errors=True)
                continue
            run = next((home / "runs").iterdir())
            for name, target, e in (("first view", str(run), env),
                                    ("first view, no index", args.trace_dir, {"XDG_CACHE_HOME": str(work / f"none{r}")})):
                wall, cpu, peak, tail = timed([PY, "-c", VIEW, target], e)
                rows.setdefault(name, []).append((wall, cpu, peak))
                notes[name] = tail
            if not args.no_tlparse:
                out = work / "tl_out"
                wall, cpu, peak, _ = timed([args.tlparse, args.trace_dir, "--all-ranks-html", "-o", str(out),
                                            "--overwrite", "--no-browser"])
                rows.setdefault("tlparse --all-ranks-html", []).append((wall, cpu, peak))
                notes["tlparse --all-ranks-html"] = f"writes {sum(f.stat().st_size for f in out.rglob('*') if f.is_file()) / 1e9:.1f} GB"
                shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(work / f"none{r}", ignore_errors=True)
        read = statistics.median(w for w, _, _ in rows["read"])
        if args.import_only:
            imp, rd = rows["import"], rows["read"]
            cpu_read = statistics.median(c for _, c, _ in rd)
            for k, ((wi, ci, _), (wr, cr, _)) in enumerate(zip(imp, rd, strict=True)):
                print(f"round {k}: read {wr:.2f} s wall / {cr:.2f} s CPU; import {wi:.2f} / {ci:.2f}; "
                      f"import / read {wi / wr:.2f}x wall, {ci / cr:.2f}x CPU")
            for name in ("import", "import (before)") if args.before else ("import",):
                imp = rows[name]
                print(f"median: {name} / read {statistics.median(w for w, _, _ in imp) / read:.2f}x wall, "
                      f"{statistics.median(c for _, c, _ in imp) / cpu_read:.2f}x CPU (goal <= 2x)")
        print(f"\n| step | wall s, median of {args.rounds} (min-max) | / read | CPU s | peak MB | note |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, vals in rows.items():
            walls = [w for w, _, _ in vals]
            med = statistics.median(walls)
            print(f"| {name} | {med:.2f} ({min(walls):.2f}-{max(walls):.2f}) | {med / read:.2f}x | "
                  f"{statistics.median(c for _, c, _ in vals):.2f} | {max(p for _, _, p in vals):.0f} | "
                  f"{notes.get(name, '')} |")
        if args.import_only:
            return
        run = next((work / "home0" / "runs").iterdir())
        try:
            app_view(run, work / "home0", work / "cache0")
        except ImportError:
            print("\nViewer page: not timed (no streamlit here)")
        if args.browser:
            browser_view(run, work / "home0", work / "cache0")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def app_view(run: Path, home: Path, cache: Path) -> None:
    """The Viewer page itself on the imported run (AppTest): the first script run, then a rerun."""
    os.environ.update(COMPILE_VIZ_HOME=str(home), XDG_CACHE_HOME=str(cache), COMPILE_VIZ_WARM="0")
    sys.path.insert(0, str(REPO))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.query_params["run"] = run.name
    t = time.perf_counter()
    at.run()
    first = time.perf_counter() - t
    t = time.perf_counter()
    at.run()
    again = time.perf_counter() - t
    errors = [e.value for e in (*at.exception, *at.error)]
    print(f"\nViewer page (AppTest, app.py?run={run.name}): first script run {first:.2f} s, rerun {again:.2f} s"
          + (f"; errors: {errors}" if errors else ""))


def browser_view(run: Path, home: Path, cache: Path) -> None:
    """The Viewer in Chromium (Playwright) on the imported run, the app served by streamlit: the
    first view of the biggest graph of rank 3, then another rank's graph, then a reload."""
    import urllib.parse

    sys.path.insert(0, str(REPO / "tests"))
    from test_browser import chromium_page, start_streamlit

    sys.path.insert(0, str(REPO))
    from compile_viz.artifacts import parse_path
    from compile_viz.artifacts.trace.index import LAZY_FILE_BYTES

    os.environ["XDG_CACHE_HOME"] = str(cache)
    parse = parse_path(str(run), lazy_above=LAZY_FILE_BYTES)
    ids = sorted(parse.graphs, key=lambda g: parse.pending[g.id].size)
    big = next(g.id for g in reversed(ids) if g.id.startswith("rank 3 "))
    other = next(g.id for g in reversed(ids) if g.id.startswith("rank 1 "))
    env = {**os.environ, "COMPILE_VIZ_HOME": str(home), "XDG_CACHE_HOME": str(cache), "COMPILE_VIZ_WARM": "0"}
    with tempfile.TemporaryFile("w+") as log:
        proc, url = start_streamlit(REPO, env, log)
        try:
            if url is None:
                raise SystemExit("streamlit did not start")
            out = REPO / "test-artifacts"
            out.mkdir(exist_ok=True)
            with chromium_page(1300) as page:
                times = []
                for rank, gid in ((3, big), (1, other)):
                    t = time.monotonic()
                    page.goto(f"{url}/?run={run.name}&rank={rank}&graph={urllib.parse.quote(gid)}")
                    page.wait_for_selector(".cv-graph svg", state="attached", timeout=120_000)
                    times.append(time.monotonic() - t)
                page.screenshot(path=str(out / "big_logs_viewer.png"), full_page=True)
                t = time.monotonic()
                page.reload()
                page.wait_for_selector(".cv-graph svg", state="attached", timeout=120_000)
                again = time.monotonic() - t
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"Viewer in Chromium: {big}: first view {times[0]:.2f} s (the server's first page: the run "
          f"opened from its index); {other}: {times[1]:.2f} s; reload {again:.2f} s")


if __name__ == "__main__":
    main()
