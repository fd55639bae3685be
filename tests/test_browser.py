"""The main flow in real Chromium: open the largest bundled run's backward graph, click a kernel,
see its highlighted code and its marked nodes; screenshots in test-artifacts/, timings printed.

Skips only where /usr/bin/chromium (or Graphviz's dot) is missing AND COMPILE_VIZ_CI is unset.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from test_app_fixtures import REPO, make_bundled

from compile_viz.artifacts import parse_path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
OUT = REPO / "test-artifacts"
pytestmark = pytest.mark.slow


def _require(ok: bool, why: str) -> None:
    if ok:
        return
    if os.environ.get("COMPILE_VIZ_CI"):
        pytest.fail(f"{why}, and COMPILE_VIZ_CI is set: the browser test must run in CI")
    pytest.skip(why)


@contextmanager
def chromium_page(height: int):
    """A 1600-pixel-wide page of Debian's Chromium, driven by Playwright; the test skips without
    Chromium or Graphviz's dot (fails under COMPILE_VIZ_CI)."""
    _require(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    _require(shutil.which("dot") is not None, "no Graphviz `dot` (apt-get install graphviz)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page(viewport={"width": 1600, "height": height})
        finally:
            browser.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_streamlit(app_dir: Path, env: dict, log, *, tries: int = 120) -> tuple[subprocess.Popen, str | None]:
    """Start `streamlit run APP_DIR/app.py` headless on a free port, output to `log`; return the
    process and its URL once /_stcore/health answers, or None after `tries` quarter seconds."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app_dir / "app.py"), "--server.headless",
                             "true", "--server.port", str(port), "--browser.gatherUsageStats", "false",
                             "--server.fileWatcherType", "none"], cwd=app_dir, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    for _ in range(tries):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.25)
    return proc, None


def pick_run(tmp: Path) -> tuple[Path, str]:
    """Return (sample_runs folder, run name): gpt_small when bundled, else the largest zip we can make."""
    bundled = REPO / "sample_runs"
    if (bundled / "gpt_small.zip").is_file():
        return bundled, "gpt_small"
    zips = sorted(bundled.glob("*.zip"), key=lambda p: p.stat().st_size) if bundled.is_dir() else []
    if zips:
        return bundled, zips[-1].stem
    return make_bundled(tmp / "sample_runs", ("mlp_train_step",)), "mlp_train_step"


def backward_graph(zip_path: Path) -> str:
    parse = parse_path(str(zip_path))
    graphs = sorted(parse.graphs, key=lambda g: (g.kind != "backward",
                                                  -len(g.post_grad_graph.nodes) if g.post_grad_graph else 0))
    return graphs[0].id


@pytest.fixture
def server(tmp_path):
    folder, name = pick_run(tmp_path)
    env = dict(os.environ, COMPILE_VIZ_HOME=str(tmp_path / "home"), COMPILE_VIZ_SAMPLE_RUNS=str(folder))
    log = open(tmp_path / "streamlit.log", "wb")
    proc, url = start_streamlit(REPO, env, log)
    try:
        if url is None:
            pytest.fail("streamlit did not start: " + (tmp_path / "streamlit.log").read_text()[-2000:])
        yield url, name, backward_graph(folder / f"{name}.zip")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def click_kernel(page, other_than: str = "") -> tuple[str, int, float]:
    """Click a generated kernel (not an extern call) in the main graph: its box (collapsed) or its
    cluster (full view). Return (kernel, launch, seconds until its code shows and it is marked)."""
    graph = page.locator(".cv-graph").first
    hrefs = graph.locator("a[*|href*='kernel=triton_'], a[*|href*='kernel=cpp_']").evaluate_all(
        "els => els.map(a => a.getAttribute('xlink:href') || a.getAttribute('href'))")
    params = [parse_qs(h.split("?", 1)[1]) for h in hrefs]
    nth, q = next((i, q) for i, q in enumerate(params) if "launch" in q and q["kernel"][0] != other_than)
    kernel, launch = q["kernel"][0], int(q["launch"][0])
    t0 = time.monotonic()
    graph.locator("a[*|href*='kernel=triton_'], a[*|href*='kernel=cpp_']").nth(nth).click()
    page.wait_for_selector(f".cv-code:has-text('{kernel[:40]}')", state="attached", timeout=30_000)
    page.wait_for_selector(f".cv-graph g#cvL{launch}.cv-sel, .cv-graph g#cvC{launch}.cv-sel-cluster",
                           state="attached", timeout=30_000)
    return kernel, launch, time.monotonic() - t0


def test_main_flow_in_chromium(server):
    url, name, graph = server
    OUT.mkdir(exist_ok=True)
    view = f"{url}/?run=bundled:{name}&graph={graph}"
    with chromium_page(1300) as page:
        t0 = time.monotonic()
        page.goto(view)
        page.wait_for_selector(".cv-graph svg", state="attached", timeout=60_000)
        first = time.monotonic() - t0
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT / "viewer_graph.png"), full_page=True)

        collapsed = page.locator(".cv-graph g[id^='cvL']").count() > 0
        first_kernel, _, select_s = click_kernel(page)
        kernel, launch, select2_s = click_kernel(page, other_than=first_kernel)  # a second, new kernel
        code = page.locator(".cv-code").first
        assert code.locator("span[style*='color']").count() > 10  # Pygments' inline colours
        assert page.locator(".cv-graph .node.cv-sel").count() >= 1  # its nodes, outlined
        if collapsed:  # its box marked in the overview, its nodes marked in the drawing of the selection
            assert page.locator(f".cv-graph g#cvL{launch}.cv-sel").count() == 1
            assert page.locator(".cv-graph g[id^='cvL'].cv-sel").count() == 1  # the previous one unmarked
            assert page.locator(".cv-graph g[id^='cvn'].cv-sel").count() >= 1
        assert page.locator(".cv-selected").count() >= 1  # its fusion group row
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT / "viewer_kernel_selected.png"), full_page=True)

        t0 = time.monotonic()
        page.reload()  # the same URL again: parse, index and layout come from the caches
        page.wait_for_selector(".cv-graph .cv-sel, .cv-graph .cv-sel-cluster", state="attached", timeout=30_000)
        again = time.monotonic() - t0
        assert "kernel=" in page.url
    print(f"\nbrowser: {name}/{graph}: first view {first:.2f} s, select a kernel {select_s:.2f} s, "
          f"then another {select2_s:.2f} s, re-view (reload, cached) {again:.2f} s")


def refused_pair(zip_path: Path) -> tuple[str, str, str, str]:
    """(graph, label of launch a, label of launch b, reason kind) of two launches Inductor refused to fuse."""
    from compile_viz.linking import build_index
    from compile_viz.linking.fusion import why_separate
    from compile_viz.render.fusion import launch_label

    for g in parse_path(str(zip_path)).graphs:
        if g.fusion_decisions is None:
            continue
        idx = build_index(g)
        for a in range(len(idx.launches)):
            for b in range(a + 1, len(idx.launches)):
                refused = [p for p in why_separate(g, idx, g.fusion_decisions, a, b).pairs if not p.result]
                if refused:
                    return g.id, launch_label(idx, a), launch_label(idx, b), refused[0].kind
    raise AssertionError(f"no refused pair in {zip_path}")


def pick(page, label: str, option: str) -> None:
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    box.click()
    page.keyboard.type(option)
    page.keyboard.press("Enter")


def test_why_not_fused_in_chromium(server):
    """Pick two kernels of a bundled run that Inductor refused to fuse; the reason is on the page."""
    url, _, _ = server
    name = "many_row_sums"
    zip_path = REPO / "sample_runs" / f"{name}.zip"
    _require(zip_path.is_file(), f"no bundled {zip_path.name}")
    graph, first, second, kind = refused_pair(zip_path)
    OUT.mkdir(exist_ok=True)
    with chromium_page(1400) as page:
        page.goto(f"{url}/?run=bundled:{name}&graph={graph}")
        page.wait_for_selector(".cv-graph svg", state="attached", timeout=60_000)
        page.locator("summary").filter(has_text="Why not fused? Inductor").first.click()
        page.wait_for_selector('[data-testid="stSelectbox"]:has-text("First kernel")', timeout=30_000)
        pick(page, "First kernel", first)
        page.wait_for_timeout(1500)
        pick(page, "Second kernel", second)
        words = kind.replace("_", " ")
        page.wait_for_selector(f"text=/refused .*{words}/i", timeout=30_000)
        assert "why=" in page.url
        page.get_by_text(words).first.scroll_into_view_if_needed()
        page.screenshot(path=str(OUT / "why_not_fused.png"), full_page=True)


def test_comparison_link_in_chromium(server):
    """A comparison link (?run=A&compare=B) shows both runs' numbers and graphs coloured by class:
    the H100 pair before/after a matmul that splits one fusion (tests/fixtures/compare/)."""
    from compile_viz.render.compare import class_color

    url, _, _ = server
    pairs = REPO / "tests" / "fixtures" / "compare"
    a, b = pairs / "split_before.zip", pairs / "split_after.zip"
    OUT.mkdir(exist_ok=True)
    with chromium_page(1400) as page:
        page.goto(f"{url}/?run=path:{a}&compare=path:{b}")
        page.wait_for_selector(".cv-compare-rows", state="attached", timeout=60_000)
        page.wait_for_selector(".cv-compare-rows >> nth=1", state="attached", timeout=60_000)
        rows = "\n".join(page.locator(".cv-compare-rows").all_inner_texts())
        assert "graphs" in rows and "kernels" in rows and "+1" in rows  # both runs' numbers, with deltas
        page.wait_for_selector(".cv-graph svg", state="attached", timeout=60_000)
        assert page.locator(".cv-graph svg").count() >= 2  # A's graph and B's
        svg = "".join(page.locator(".cv-graph svg").evaluate_all("els => els.map(e => e.outerHTML)"))
        assert class_color("split").lower() in svg.lower()  # a launch filled by its class
        assert page.locator(".cv-match").count() == 2  # the split group and the new matmul
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT / "compare_split_fusion.png"), full_page=True)


def layer_launch(zip_path: Path, graph_id: str, layer: int) -> tuple[str, str, int, str]:
    """(layers group id, id of layer `layer`'s group, a generated kernel's launch in it, its kernel)."""
    from compile_viz.artifacts.trace.module_paths import read_dynamo_inputs
    from compile_viz.linking import build_index
    from compile_viz.linking.hierarchy import graph_hierarchy

    parse = parse_path(str(zip_path))
    g = parse.graph(graph_id)
    index = build_index(g)
    h = graph_hierarchy(parse.graphs, g, index, read_dynamo_inputs(str(zip_path)))
    layers = max((x for x in h.groups.values() if x.pattern), key=lambda x: len(x.launches))
    block = layers.children[layer]
    launch = next(i for i in block.launches if not index.launches[i].is_extern and i in block.children)
    return layers.id, block.id, launch, index.launches[launch].kernel


# Shadow roots included: the graph widget (components.v2) draws into one.
_FOUND = """([css, text]) => {
  const roots = [document];
  while (roots.length) {
    const root = roots.pop();
    for (const e of root.querySelectorAll(css)) if (!text || e.textContent.includes(text)) return true;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) roots.push(e.shadowRoot);
  }
  return false;
}"""


def wait_attached(page, css: str, text: str = "", timeout_ms: int = 60_000) -> None:
    """Until an element matching `css` (and holding `text`) is in the page, looked for at every
    animation frame. For timings: wait_for_selector looks at growing intervals, up to 0.5 s apart,
    and a view that showed in 0.8 s was timed at 0.8 or 1.3 s from one tab to the next."""
    page.wait_for_function(_FOUND, arg=[css, text], polling="raf", timeout=timeout_ms)


def select_in_layer(page, layers: str, block: str, launch: int, kernel: str) -> float:
    """Open the layers group (unless open) and one block in the graph, click `launch` in it; return the
    seconds from that click until the kernel's code shows and its box is marked."""
    graph = page.locator(".cv-graph").first
    if graph.locator(f"g[id='cvO_{layers}']").count() == 0:
        graph.locator(f"g[id='cvG_{layers}'] a").first.click()
        page.wait_for_selector(f".cv-graph g[id='cvG_{block}']", state="attached", timeout=60_000)
    graph.locator(f"g[id='cvG_{block}'] a").first.click()
    page.wait_for_selector(f".cv-graph g[id='cvO_{block}']", state="attached", timeout=60_000)
    t0 = time.monotonic()
    graph.locator(f"g#cvL{launch} a").first.click()
    wait_attached(page, ".cv-code", kernel[:40])
    wait_attached(page, f".cv-graph g#cvL{launch}.cv-sel")
    return time.monotonic() - t0


def test_big_graph_opens_in_layers_in_chromium(server):
    """The 48-block backward (1,499 launches) opens as a handful of module boxes; open the blocks,
    open block 17, click a kernel in it: its code shows and it is marked."""
    url, _, _ = server
    zip_path = REPO / "sample_runs" / "gpt_deep.zip"
    _require(zip_path.is_file(), f"no bundled {zip_path.name}")
    graph = backward_graph(zip_path)
    layers, block, launch, kernel = layer_launch(zip_path, graph, 17)
    OUT.mkdir(exist_ok=True)
    with chromium_page(1300) as page:
        t0 = time.monotonic()
        page.goto(f"{url}/?run=bundled:gpt_deep&graph={graph}")
        page.wait_for_selector(f".cv-graph g[id='cvG_{layers}']", state="attached", timeout=60_000)
        first = time.monotonic() - t0
        assert page.locator(".cv-graph g.node").count() <= 30  # a few dozen boxes, not 1,499
        select_s = select_in_layer(page, layers, block, launch, kernel)
        assert page.locator(".cv-graph g[id^='cvG_']").count() >= 47  # the other blocks, closed
        assert f"launch={launch}" in page.url and "open=" in page.url
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT / "viewer_big_graph_layer.png"), full_page=True)
    print(f"\nbrowser: gpt_deep/{graph}: first view {first:.2f} s, select a kernel in {block} {select_s:.2f} s")


def test_ranks_in_chromium(tmp_path, ddp_runs):
    """A two-rank job recorded here (rank 1 alone recompiles): the Viewer's rank picker switches the
    graphs to rank 1's; the Compiles page lists the divergence first, and its link opens the two
    ranks side by side on the Compare page."""
    run, _ = ddp_runs["recompile"]
    env = dict(os.environ, COMPILE_VIZ_HOME=str(tmp_path / "home"), COMPILE_VIZ_WARM="0")
    log = open(tmp_path / "streamlit.log", "wb")
    proc, url = start_streamlit(REPO, env, log)
    OUT.mkdir(exist_ok=True)
    try:
        assert url is not None, (tmp_path / "streamlit.log").read_text()[-2000:]
        with chromium_page(1200) as page:
            page.goto(f"{url}/?run=path:{run}")
            rank, graph = page.get_by_role("combobox", name="Rank"), page.get_by_role("combobox", name="Graph")
            rank.wait_for(timeout=90_000)
            assert re.match(r"rank 0 \(\d+ graphs\)", rank.input_value())
            rank.click()
            page.get_by_role("option", name=re.compile(r"^rank 1")).click()
            page.wait_for_url(re.compile(r"[?&]rank=1"), timeout=60_000)
            page.wait_for_function("() => [...document.querySelectorAll('input[aria-label=Graph]')]"
                                   ".some(e => e.value.startsWith('rank 1 · [0/'))", timeout=60_000)
            assert graph.input_value().startswith("rank 1 · [0/")
            page.screenshot(path=str(OUT / "ranks_viewer_rank1.png"))
            page.goto(f"{url}/compiles?run=path:{run}")
            page.wait_for_selector(".cv-div", state="attached", timeout=60_000)
            assert "compiled on rank 1 only" in page.locator(".cv-div").first.inner_text()
            page.wait_for_timeout(300)
            page.screenshot(path=str(OUT / "ranks_compiles.png"), full_page=True)
            page.locator("a.cv-div-compare").first.click()
            page.wait_for_url(re.compile(r"\?.*compare_rank=1"), timeout=60_000)
            page.wait_for_selector(".cv-compare-rows", state="attached", timeout=90_000)
            page.get_by_role("combobox", name="Rank of B").wait_for(timeout=60_000)
            assert page.get_by_text("Page not found").count() == 0
            assert page.get_by_role("combobox", name="Rank of B").input_value().startswith("rank 1")
            page.wait_for_timeout(300)
            page.screenshot(path=str(OUT / "ranks_compare.png"), full_page=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()
