"""Big graphs in a real browser (issue 12): the backward graph of the 12-block and the 48-block GPT.

    .venv/bin/python bench/ui_scale_bench.py [--rounds 3] [--runs gpt_small,gpt_deep]

For each run and round: a fresh Streamlit server (empty caches), Debian's Chromium driven by
Playwright. Timed, wall clock in the browser, until what is waited for is in the page (looked for
at every animation frame: tests/test_browser.wait_attached):
- first view, cold server cache: the browser has loaded the app once (on the Runs page, so its
  JavaScript is in the browser's cache, as for anyone who used the app before), then opens the
  run's backward graph; until the graph's SVG is in the page;
- the same with a browser that never saw the app (its JavaScript loaded too), for reference;
- first view, warm: the same URL in a new tab of the same server (parse, links, layout cached;
  Streamlit's front end starts again in the tab), and the graph picked again in the open page
  (forward, then back to the backward graph);
- a kernel selected: a generated kernel inside an open layer clicked, until its code shows and
  its box is marked.
Prints a Markdown table of medians (min-max) for bench/RESULTS.md.
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
sys.path.insert(0, str(REPO / "tests"))

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
GRAPH_SVG = ".cv-graph svg"


APP_REPO = REPO  # --repo: the checkout whose app is served (a worktree of an older revision, say)


def start_server(home: Path) -> tuple[subprocess.Popen, str]:
    from test_browser import start_streamlit

    env = dict(os.environ, COMPILE_VIZ_HOME=str(home), COMPILE_VIZ_SAMPLE_RUNS=str(REPO / "sample_runs"),
               COMPILE_VIZ_WARM="0")
    proc, url = start_streamlit(APP_REPO, env, subprocess.DEVNULL, tries=240)
    if url is None:
        proc.kill()
        raise SystemExit("streamlit did not start")
    return proc, url


def _timed_view(page, url: str) -> float:
    from test_browser import wait_attached

    t0 = time.monotonic()
    page.goto(url)
    wait_attached(page, GRAPH_SVG, timeout_ms=120_000)
    return time.monotonic() - t0


def _pick_graph(page, kind: str) -> float:
    """Pick the graph of `kind` in the Graph selectbox; seconds until its SVG replaced the one shown."""
    graph = page.locator(".cv-graph").first
    old = graph.inner_html()
    t0 = time.monotonic()
    box = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text("Graph", exact=True)).first
    box.click()
    page.keyboard.type(kind)
    page.keyboard.press("Enter")
    while graph.inner_html() == old:  # the widget swaps the SVG in place when the new one arrives
        if time.monotonic() - t0 > 120:
            raise TimeoutError("the graph did not change")
        page.wait_for_timeout(20)
    return time.monotonic() - t0


def _switch_back(page) -> float:
    """The forward graph, then the backward graph again (both in the server's caches by then)."""
    _pick_graph(page, "forward")
    page.wait_for_timeout(300)
    return _pick_graph(page, "backward")


def one_round(run: str, graph: str, layers: str, block: str, launch: int, kernel: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    out = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        proc, url = start_server(Path(tmp) / "home")
        view = f"{url}/?run=bundled:{run}&graph={graph}"
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ctx = browser.new_context(viewport={"width": 1600, "height": 1300})
            page = ctx.new_page()
            page.goto(f"{url}/runs")  # the app's JavaScript into the browser's cache; no graph parsed
            page.wait_for_selector("text=Runs", timeout=60_000)
            out["first view, cold server cache"] = _timed_view(page, view)
            page2 = ctx.new_page()
            out["first view, warm (new tab)"] = _timed_view(page2, view)
            out["first view, warm (graph picked in the open page)"] = _switch_back(page2)
            if APP_REPO == REPO:  # an older revision has no layers to open
                from test_browser import select_in_layer

                out["select a kernel in a layer"] = select_in_layer(page2, layers, block, launch, kernel)
            browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return _cold_browser(run, graph, out)


def _cold_browser(run: str, graph: str, out: dict[str, float]) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        proc, url = start_server(Path(tmp) / "home")
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_context(viewport={"width": 1600, "height": 1300}).new_page()
            out["first view, cold server and browser"] = _timed_view(page, f"{url}/?run=bundled:{run}&graph={graph}")
            browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", default="gpt_small,gpt_deep")
    ap.add_argument("--repo", type=Path, help="serve the app of this checkout (first views only: an older "
                    "revision has no layers to open)")
    args = ap.parse_args()
    global APP_REPO
    if args.repo:
        APP_REPO = args.repo.resolve()
    from test_browser import backward_graph, layer_launch

    results: dict[str, dict[str, list[float]]] = {}
    picks = {}
    for run in args.runs.split(","):
        zip_path = REPO / "sample_runs" / f"{run}.zip"
        graph = backward_graph(zip_path)
        picks[run] = (graph, *layer_launch(zip_path, graph, 5))
    for _ in range(args.rounds):
        for run, (graph, layers, block, launch, kernel) in picks.items():  # runs alternate
            for k, v in one_round(run, graph, layers, block, launch, kernel).items():
                results.setdefault(run, {}).setdefault(k, []).append(v)
            print(run, {k: round(v[-1], 2) for k, v in results[run].items()}, flush=True)
    print("\n| run (backward graph) | what | median s | min-max s |\n| --- | --- | ---: | ---: |")
    for run, rows in results.items():
        for k, v in rows.items():
            print(f"| {run} ({picks[run][0]}) | {k} | {statistics.median(v):.2f} | {min(v):.2f}-{max(v):.2f} |")


if __name__ == "__main__":
    main()
