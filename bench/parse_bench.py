"""Parse (and link) the largest real capture we have; print ms per MB and in total.

Usage: python bench/parse_bench.py [PATH] [--repeat N]
PATH defaults to sample_runs/gpt_small.zip, else the largest capture in ../shared/corpus.
Reads every artifact into memory first, so the figure is parsing, not disk.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compile_viz.artifacts import PARSERS, ArtifactReader, find_graphs, parse_graph_files  # noqa: E402
from compile_viz.artifacts.model import GraphParse  # noqa: E402


def default_path() -> str:
    bundled = ROOT / "sample_runs" / "gpt_small.zip"
    if bundled.exists():
        return str(bundled)
    cases = glob.glob(str(ROOT.parent / "shared" / "corpus" / "**" / "torch_compile_debug"), recursive=True)

    def size(p):
        return sum(f.stat().st_size for f in Path(p).rglob("*") if f.is_file())

    return max(cases, key=size)


def load(path: str):
    """Every artifact of every graph, as bytes: [(folder, {name: bytes})]."""
    reader = ArtifactReader(path)
    folders, _ = find_graphs(reader)
    out = [(f, {name: reader.read(f.location, name) for name in f.files if name in PARSERS}) for f in folders]
    reader.close()
    return out


def parse_all(graphs) -> list[GraphParse]:
    """The library's own per-graph parse (collector paused as in the app), from bytes in memory."""
    return [parse_graph_files(folder, files) for folder, files in graphs]


def timed(fn, repeat, setup=None):
    """Run fn `repeat` times (fn(setup()) when setup is given, setup untimed); return the last
    result and the times in ms."""
    times = []
    result = None
    for _ in range(repeat):
        arg = setup() if setup else None
        t0 = time.perf_counter()
        out = fn(arg) if setup else fn()
        t1 = time.perf_counter()
        # `result` still holds the previous run's objects: they are freed here, after the timer,
        # since freeing the last parse is not part of making this one.
        result = out
        times.append((t1 - t0) * 1000)
    return result, times


def host_check(repeat: int = 15) -> float:
    """Median ms of a fixed pure-Python loop: on a shared VM the same code runs up to twice as
    slow from one minute to the next; printed beside the figures so a slowed run shows."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s = 0
        for i in range(300_000):
            s += i * i
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def read_deferred(parsed) -> None:
    """Read every field a parser left to be filled on first access (nodes with a `_fill`)."""
    for g in parsed:
        for fx in (g.aot_graph, g.post_grad_graph):
            for n in (fx.nodes + fx.subgraph_nodes) if fx else ():
                n.constants  # noqa: B018
        for ir in (g.pre_fusion, g.post_fusion):
            for n in (ir.nodes + ir.member_nodes) if ir else ():
                n.writes, n.reads, n.unmet, n.outputs, n.loop_body_ops, n.device, n.buffer_names  # noqa: B018
        for la in g.output_code.launches if g.output_code else ():
            la.args  # noqa: B018


def phase_times(phase: str, graphs, repeat: int) -> list[float]:
    """ms of each run of one phase: parse, full (parse and read every deferred field), link."""
    if phase == "parse":
        return timed(lambda: parse_all(graphs), repeat)[1]
    if phase == "full":
        return timed(lambda: read_deferred(parse_all(graphs)), repeat)[1]
    from compile_viz.linking import build_index

    # a fresh parse for every run, so that the fields linking reads first are paid for here
    return timed(lambda p: [build_index(g) for g in p], repeat, setup=lambda: parse_all(graphs))[1]


def in_own_process(phase: str, path: str, repeat: int) -> list[float]:
    """Run phase_times in a new interpreter: one phase's heap does not slow the next (after 50
    parses and full reads in the same process, linking measured 5-10 ms more)."""
    out = subprocess.run([sys.executable, __file__, path, "--repeat", str(repeat), "--phase", phase],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def summary(ms: list[float]) -> str:
    return f"median {statistics.median(ms):.1f} ms (min {min(ms):.1f}, max {max(ms):.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--phase", choices=("parse", "full", "link", "one-process"), default=None,
                    help="run one phase here and print its times as JSON (used by the bench itself)")
    args = ap.parse_args()
    path = args.path or default_path()
    graphs = load(path)
    if args.phase == "one-process":  # every phase in this process, in turn: how the bench ran before
        print(json.dumps([phase_times(p, graphs, args.repeat) for p in ("parse", "full", "link")][-1]))
        return 0
    if args.phase:
        print(json.dumps(phase_times(args.phase, graphs, args.repeat)))
        return 0

    host_before = host_check()
    parse_ms, full_ms, link_ms, link_after_ms = (
        in_own_process(p, path, args.repeat) for p in ("parse", "full", "link", "one-process"))
    nbytes = sum(len(d) for _, files in graphs for d in files.values() if d)
    mb = nbytes / 1e6
    lines_total = sum(d.count(b"\n") for _, files in graphs for d in files.values() if d)
    print(f"capture: {path}")
    print(f"graphs: {len(graphs)}, artifacts: {mb:.2f} MB, {lines_total} lines, cpu count {os.cpu_count()}")
    for g in parse_all(graphs):
        oc = g.output_code
        print(f"  {g.folder.name}: {len(g.post_grad_graph.nodes) if g.post_grad_graph else 0} post-grad nodes, "
              f"{len(oc.kernels) if oc else 0} kernels, {len(oc.launches) if oc else 0} launches")
    print(f"each phase in its own process, {args.repeat} runs:")
    med = statistics.median(parse_ms)
    print(f"parse: {summary(parse_ms)}; {med / mb:.1f} ms per MB")
    print(f"parse, every field read: {summary(full_ms)}")
    print(f"link:  {summary(link_ms)} for all graphs, on a fresh parse each run")
    print(f"link, in one process after the parse and full-read runs: {summary(link_after_ms)}")
    print(f"host check (a fixed loop, median ms; higher = a slowed host): {host_before:.1f} before, "
          f"{host_check():.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
