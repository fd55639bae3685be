"""Parse (and link) the largest real capture we have; print ms per MB and in total.

Usage: python bench/parse_bench.py [PATH] [--repeat N]
PATH defaults to sample_runs/gpt_small.zip, else the largest capture in ../shared/corpus.
Reads every artifact into memory first, so the figure is parsing, not disk.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
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
        for fx in (g.fx_graph, g.post_grad_graph):
            for n in (fx.nodes + fx.subgraph_nodes) if fx else ():
                n.constants  # noqa: B018
        for ir in (g.pre_fusion, g.post_fusion):
            for n in (ir.nodes + ir.member_nodes) if ir else ():
                n.writes, n.reads, n.unmet, n.outputs, n.loop_body_ops, n.device, n.buffer_names  # noqa: B018
        for la in g.output_code.launches if g.output_code else ():
            la.args  # noqa: B018


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    path = args.path or default_path()
    graphs = load(path)
    host_before = host_check()
    nbytes = sum(len(d) for _, files in graphs for d in files.values() if d)
    mb = nbytes / 1e6
    parsed, parse_ms = timed(lambda: parse_all(graphs), args.repeat)
    # parsers leave some fields to be read on first access: time a parse that reads them all too
    _, full_ms = timed(lambda: read_deferred(parse_all(graphs)), args.repeat)

    try:
        from compile_viz.linking import build_index
    except ImportError:
        build_index = None
    link_ms = []
    if build_index is not None:
        # a fresh parse for every run, so that the fields linking reads first are paid for here
        _, link_ms = timed(lambda p: [build_index(g) for g in p], args.repeat, setup=lambda: parse_all(graphs))

    lines_total = sum(d.count(b"\n") for _, files in graphs for d in files.values() if d)
    print(f"capture: {path}")
    print(f"graphs: {len(graphs)}, artifacts: {mb:.2f} MB, {lines_total} lines, cpu count {os.cpu_count()}")
    for g in parsed:
        oc = g.output_code
        print(f"  {g.folder.name}: {len(g.post_grad_graph.nodes) if g.post_grad_graph else 0} post-grad nodes, "
              f"{len(oc.kernels) if oc else 0} kernels, {len(oc.launches) if oc else 0} launches")
    med = statistics.median(parse_ms)
    print(f"parse: median {med:.1f} ms (min {min(parse_ms):.1f}, max {max(parse_ms):.1f}) over {args.repeat} runs; "
          f"{med / mb:.1f} ms per MB")
    print(f"parse, every field read: median {statistics.median(full_ms):.1f} ms (min {min(full_ms):.1f})")
    if link_ms:
        print(f"link:  median {statistics.median(link_ms):.1f} ms (min {min(link_ms):.1f}) for all graphs, "
              "on a fresh parse each run")
    print(f"host check (a fixed loop, median ms; higher = a slowed host): {host_before:.1f} before, "
          f"{host_check():.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
