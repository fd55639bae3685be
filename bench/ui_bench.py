"""Measure the dashboard's first view and re-view of a large graph.

    .venv/bin/python bench/ui_bench.py [RUN.zip | debug folder] [--graph ID] [--browser]

Server side, step by step (parse, link, DOT, Graphviz layout) for the collapsed first view and for
a kernel selected (the cached SVG restyled, the selection laid out apart); then the whole page
through AppTest: cold, cached, and several kernels each selected for the first time. With --browser, the
Playwright test's timings too (first view, kernel click, reload). Default run: sample_runs/gpt_small.zip.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from compile_viz.artifacts import parse_path  # noqa: E402
from compile_viz.linking import build_index  # noqa: E402
from compile_viz.linking.model import POST_GRAD  # noqa: E402
from compile_viz.render.fx_dot import GraphView, fx_dot, selection_ids  # noqa: E402
from compile_viz.render.selection import select  # noqa: E402
from compile_viz.render.svg import dot_to_svg, mark_svg  # noqa: E402


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def steps(path: str, graph_id: str | None) -> tuple[str, dict]:
    parse, t_parse = timed(parse_path, path)
    graph = parse.graph(graph_id) if graph_id else max(
        parse.graphs, key=lambda g: len(g.post_grad_graph.nodes) if g.post_grad_graph else 0)
    index, t_index = timed(build_index, graph)
    fx = graph.post_grad_graph
    dot, t_dot = timed(fx_dot, fx, index, GraphView(collapsed=True, link="?run=x"))
    svg, t_layout = timed(dot_to_svg, dot)
    biggest = max((la for la in index.launches if not la.is_extern), key=lambda la: len(la.post_grad_nodes))
    sel = select(index, POST_GRAD, launch=biggest.index)
    _, t_mark = timed(lambda: mark_svg(svg, selection_ids(fx, sel.launches, sel.nodes)))
    apart = GraphView(selected_launches=sel.launches, selected_nodes=sel.nodes, hops=1, link="?run=x")
    dot2, t_dot2 = timed(fx_dot, fx, index, apart)
    _, t_layout2 = timed(dot_to_svg, dot2)
    hop = GraphView(selected_launches=sel.launches, selected_nodes=sel.nodes, hops=2, link="?run=x")
    dot3, t_dot3 = timed(fx_dot, fx, index, hop)
    _, t_layout3 = timed(dot_to_svg, dot3)
    print(f"graph {graph.id}: {len(fx.nodes)} post-grad nodes, {len(index.launches)} launches")
    print(f"  parse {t_parse:.3f} s  link {t_index:.3f} s")
    print(f"  collapsed: DOT {t_dot:.3f} s  layout {t_layout:.3f} s  -> first view {t_parse + t_index + t_dot + t_layout:.2f} s")
    print(f"  kernel {biggest.kernel[:50]} ({len(biggest.post_grad_nodes)} nodes) selected: collapsed SVG marked "
          f"{t_mark:.4f} s; drawn apart with 1 hop: DOT {t_dot2:.3f} s  layout {t_layout2:.3f} s")
    print(f"  its 2-hop neighbourhood: DOT {t_dot3:.3f} s  layout {t_layout3:.3f} s")
    kernels = [la for la in index.launches if not la.is_extern]
    picks = [biggest] + [la for la in kernels[:: max(1, len(kernels) // 6)] if la.kernel != biggest.kernel][:5]
    return graph.id, [{"launch": la.index, "kernel": la.kernel} for la in picks]


def app_runs(path: str, graph_id: str, picks: list[dict], repeats: int = 5) -> None:
    """Whole page script runs (AppTest): cold, cached, then each kernel in `picks` selected for the
    first time (no earlier view of it), then the first again (cached)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    home = tempfile.mkdtemp(prefix="cv-bench-")
    os.environ["COMPILE_VIZ_HOME"] = home
    key = f"path:{os.path.abspath(path)}"
    st.cache_resource.clear()
    st.cache_data.clear()

    def run(**extra):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
        at.query_params.update(run=key, graph=graph_id, **extra)
        t = time.perf_counter()
        at.run()
        assert not at.exception, at.exception
        return time.perf_counter() - t

    cold = run()
    warm = [run() for _ in range(repeats)]
    new = [run(kernel=p["kernel"], launch=str(p["launch"])) for p in picks]
    again = [run(kernel=picks[0]["kernel"], launch=str(picks[0]["launch"])) for _ in range(repeats)]
    print(f"page (AppTest, server side): first view {cold:.2f} s, re-view median {statistics.median(warm):.3f} s; "
          f"a newly selected kernel: median {statistics.median(new):.3f} s, max {max(new):.3f} s "
          f"({len(new)} kernels); selected again: median {statistics.median(again):.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path", nargs="?", default=str(REPO / "sample_runs" / "gpt_small.zip"))
    ap.add_argument("--graph")
    ap.add_argument("--browser", action="store_true", help="also run the Playwright test and print its timings")
    args = ap.parse_args()
    graph_id, picks = steps(args.path, args.graph)
    app_runs(args.path, graph_id, picks)
    if args.browser:
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", str(REPO / "tests" / "test_browser.py")], cwd=REPO)


if __name__ == "__main__":
    main()
