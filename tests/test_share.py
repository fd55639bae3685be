"""`compile-viz share` (issue 37): a run as one self-contained HTML file, opened in real Chromium
with the network blocked (any request that is not file:// is aborted and recorded).

Real runs only: the bundled 12-layer GPT-2 H100 capture, a 2-rank gloo DDP job recorded here with
torchrun (conftest's ddp_job), and a bundled run copied with a <script> planted in its artifacts.
Browser tests skip only where Chromium or Graphviz's dot is missing and COMPILE_VIZ_CI is unset.
"""

from __future__ import annotations

import html as _html
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from test_browser import ARGS, CHROMIUM, OUT, _require

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.trace.module_paths import read_dynamo_inputs
from compile_viz.linking import build_index
from compile_viz.linking.hierarchy import graph_hierarchy
from compile_viz.render.share_drawings import graph_views, short_label, slim_svg
from compile_viz.render.share_page import csp, json_for_html
from tests.conftest import SAMPLE_RUNS, compile_viz_cli

GPT_SMALL = SAMPLE_RUNS / "gpt_small.zip"
pytestmark = pytest.mark.slow  # real runs through the CLI, Chromium, a recorded torchrun job
PLANTED = "<script>window.__cv_planted = 1</script>"
PLANTED_IMG = '<img src=x onerror="window.__cv_planted = 2">'
PLANTED_END = "</script><script>window.__cv_planted = 3</script>"


def share(run: Path | str, out: Path, *args: str, env_path: str | None = None):
    """Run `python -m compile_viz.cli share RUN OUT ...` as a user would; return the process."""
    if env_path is None:
        return compile_viz_cli("share", str(run), str(out), *args)
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = dict(os.environ, PATH=env_path)
    return subprocess.run([sys.executable, "-m", "compile_viz.cli", "share", str(run), str(out), *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def page_data(text: str) -> dict:
    """The JSON the page's script reads."""
    m = re.search(r'<script type="application/json" id="cv-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def gpt_small_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("share") / "gpt_small.html"
    done = share(GPT_SMALL, out)
    assert done.returncode == 0, done.stderr
    return out


def test_the_file_is_one_small_page_that_fetches_nothing(gpt_small_html):
    text = gpt_small_html.read_text(encoding="utf-8")
    assert gpt_small_html.stat().st_size <= 2 * GPT_SMALL.stat().st_size  # the goal: at most 2x the run's zip
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text).group(1)
    assert "default-src 'none'" in policy and "img-src data:" in policy and "unsafe-inline'; img" in policy
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert len(scripts) == 1 and csp(scripts[0]) == policy  # the one script that may run is ours, by hash
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//|@import|url\(\s*["']?https?:""", text, re.I)
    data = page_data(text)
    assert [g["kind"] for g in data["graphs"]] == ["forward", "backward"]
    backward = data["graphs"][1]
    assert len(backward["launches"]) == 383 and backward["fusion"]["refused"] == 840
    assert len(backward["views"]) > 1 and backward["groupOf"]  # 383 launches: in layers, as the Viewer draws them
    # every launch is a box of some view, and every view's drawing is in the file
    shown = {it for v in backward["views"].values() for it in v[1] if isinstance(it, int)}
    assert shown == set(range(383))
    assert all(f'id="cv-d{v[0]}"' in text for v in backward["views"].values())


def test_alike_blocks_are_laid_out_once():
    parse = parse_path(str(GPT_SMALL))
    inputs = read_dynamo_inputs(str(GPT_SMALL))
    backward = next(g for g in parse.graphs if g.kind == "backward")
    index = build_index(backward)
    h = graph_hierarchy(parse.graphs, backward, index, inputs, open_graph=parse.graph)
    views = graph_views(backward.post_grad_graph, index, h)
    blocks = [v for v in views if re.fullmatch(r"blocks\.\d+", v.group)]
    assert len(blocks) == 12
    # the 12 blocks are 4 drawings (the first and last blocks differ at their edges, and blocks 1-5 from
    # 6-10 by which launch closes them), laid out once each
    assert len({v.dot for v in blocks}) <= 4
    assert len({v.items for v in blocks}) == 12  # ... whose boxes are each block's own launches
    assert short_label("blocks.3.attn", "blocks.3") == "attn" and short_label("blocks.3", "blocks") == "blocks.3"
    assert short_label("transformer.h.3", "transformer.h") == "h.3"
    assert short_label("block.0.layer", "block") == "block.0.layer"  # T5: a module of one child, folded


def test_what_the_page_is_made_of_is_escaped():
    assert json_for_html({"a": PLANTED_END}).count("<") == 0
    svg = ('<svg width="10pt" height="10pt" viewBox="0.00 0.00 10.00 10.00">\n<!-- a&#45;&gt;b -->\n'
           '<g id="node1" class="node">\n<title>a</title>\n<text x="1.23456" font-family="Helvetica,sans-Serif">'
           'x = 1.23456</text>\n</g>\n</svg>')
    slim = slim_svg(svg)
    assert "<title>" not in slim and "<!--" not in slim and "font-family" not in slim
    assert 'x="1.2"' in slim and "x = 1.23456" in slim  # geometry rounded, text as written


def test_a_torch_trace_log_alone(tmp_path):
    """What tlparse reads: the run's TORCH_TRACE log, without its debug tree or fusion log."""
    with zipfile.ZipFile(GPT_SMALL) as z:
        (name,) = [n for n in z.namelist() if n.startswith("trace/")]
        log = Path(z.extract(name, tmp_path))
    done = share(log, tmp_path / "log.html")
    assert done.returncode == 0, done.stderr
    data = page_data((tmp_path / "log.html").read_text(encoding="utf-8"))
    assert [len(g["launches"]) for g in data["graphs"]] == [199, 383] and data["graphs"][0]["fusion"] is None


def test_unknown_rank_and_graph_are_one_line(tmp_path):
    done = share(GPT_SMALL, tmp_path / "x.html", "--rank", "3")
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "no rank 3 in this run" in done.stderr
    done = share(GPT_SMALL, tmp_path / "x.html", "--graphs", "nope")
    assert done.returncode == 2 and "no graph nope in this run" in done.stderr
    assert not (tmp_path / "x.html").exists()


def test_without_graphviz_the_file_says_so(tmp_path):
    small = SAMPLE_RUNS / "mlp_gelu.zip"
    (tmp_path / "bin").mkdir()
    done = share(small, tmp_path / "x.html", env_path=str(tmp_path / "bin"))  # no `dot` on PATH
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "x.html").read_text()
    assert "<template" not in text and "Graphviz" in page_data(text)["noDrawing"]
    assert page_data(text)["graphs"][0]["launches"]  # the launches are there, to list and click


# --- in Chromium, offline ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    _require(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    _require(shutil.which("dot") is not None, "no Graphviz `dot` (apt-get install graphviz)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Offline:
    """A page of its own with every request that is not file:// aborted and recorded, and every
    script error, dialog and console complaint recorded."""

    def __init__(self, browser, path: Path, fragment: str = ""):
        self.page = browser.new_page(viewport={"width": 1500, "height": 1000})
        self.requests: list[str] = []
        self.problems: list[str] = []
        self.page.route("**/*", self._route)
        self.page.on("pageerror", lambda e: self.problems.append(f"error: {e}"))
        self.page.on("console", lambda m: self.problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        self.page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.goto(path.as_uri() + fragment)
        self.page.wait_for_selector("#cv-drawing svg", state="visible", timeout=20000)

    def _route(self, route):
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            self.requests.append(url)
            route.abort()

    def click_launch(self, kernel_prefix: str = "") -> int:
        """Click a launch box (or a node inside one) of a generated kernel; return its launch."""
        boxes = self.page.locator("#cv-drawing g.node[data-launch]")
        for k in range(boxes.count()):
            box = boxes.nth(k)
            if kernel_prefix and kernel_prefix not in (box.text_content() or "") and not box.get_attribute("data-node"):
                continue
            box.click()
            if self.page.locator("#cv-detail .cv-src").count():
                return int(box.get_attribute("data-launch"))
        raise AssertionError("no launch box opened a kernel's source")

    def offline_and_clean(self) -> None:
        assert self.requests == [], self.requests
        assert self.problems == [], self.problems


def test_gpt_small_offline_draws_and_a_click_shows_the_kernel(browser, gpt_small_html):
    OUT.mkdir(exist_ok=True)
    v = Offline(browser, gpt_small_html)
    page = v.page
    assert page.locator("#cv-drawing svg g.node").count() > 3
    launch = v.click_launch("triton_")
    source = page.inner_text("#cv-detail .cv-src")
    assert "@triton.jit" in source and "def triton_" in source
    assert page.inner_text("#cv-launch-title").startswith(f"#{launch} ")
    assert f"launch={launch}" in page.evaluate("location.hash")
    assert page.locator("#cv-drawing .cv-sel").count() >= 1
    page.screenshot(path=str(OUT / "share_gpt_small.png"))
    # the backward, opened in layers: a group opens its own view, a launch in it shows its code
    page.locator("#cv-nav button", has_text="backward").click()
    page.locator("#cv-drawing g.node[data-group]").first.click()
    assert page.locator("#cv-crumbs button").count() >= 2
    v.click_launch()
    assert page.inner_text("#cv-detail .cv-src").strip()
    v.offline_and_clean()


def test_a_deep_link_opens_one_launch(browser, gpt_small_html):
    data = page_data(gpt_small_html.read_text(encoding="utf-8"))
    backward = data["graphs"][1]
    n = next(i for i, la in enumerate(backward["launches"]) if la[2] >= 0 and backward["groupOf"][i].count(".") >= 1)
    v = Offline(browser, gpt_small_html, f"#graph={backward['id']}&launch={n}")
    assert v.page.inner_text("#cv-launch-title").startswith(f"#{n} ")
    assert v.page.locator(f'#cv-drawing .cv-sel[data-launch="{n}"]').count() == 1  # the view that shows it, marked
    assert "def " in v.page.inner_text("#cv-detail .cv-src")
    v.offline_and_clean()


def test_a_recorded_two_rank_cpu_job(browser, ddp_job, tmp_path):
    run, _ = ddp_job("recompile")
    out = tmp_path / "ddp.html"
    done = share(run, out)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "recompile on some ranks" in text and "rank 1" in text  # the divergence, in the summary
    data = page_data(text)
    assert {g["rank"] for g in data["graphs"]} == {0, 1}
    assert any(k[1] == "cpp" for g in data["graphs"] for k in g["kernels"])
    v = Offline(browser, out)
    page = v.page
    page.select_option("#cv-nav select", "1")
    assert page.locator("#cv-nav button.cv-on").inner_text().startswith("rank 1 ·")
    v.click_launch()
    assert 'extern "C"' in page.inner_text("#cv-detail .cv-src")  # a C++ kernel's source
    page.screenshot(path=str(OUT / "share_ddp_rank1.png"))
    v.offline_and_clean()
    only = tmp_path / "rank1.html"
    assert share(run, only, "--rank", "1").returncode == 0
    assert {g["rank"] for g in page_data(only.read_text(encoding="utf-8"))["graphs"]} == {1}


def _planted_copy(tmp_path: Path) -> Path:
    """mlp_gelu's bundled zip with <script>s planted in its kernel's source, its FX graphs' source
    comments (drawn into the SVG's tooltips too) and meta.json's title and graph breaks."""
    src, dst = SAMPLE_RUNS / "mlp_gelu.zip", tmp_path / "planted.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename.endswith("output_code.py"):
                data = re.sub(rb"(\ndef triton_[^\n]*\n)", rb"\1    # " + (PLANTED + PLANTED_IMG).encode() + b"\n", data, count=1)
            elif item.filename.endswith(("fx_graph_transformed.py", "fx_graph_readable.py")):
                data = data.replace(b"code: return self.fc2", b"code: " + PLANTED_END.encode() + b"return self.fc2")
            elif item.filename.endswith("meta.json"):
                meta = json.loads(data)
                meta["title"] = PLANTED + meta["title"]
                meta["graph_breaks"] = [{"summary": PLANTED_IMG, "file": PLANTED_END, "line": 1}]
                data = json.dumps(meta).encode()
            zout.writestr(item, data)
    return dst


def test_a_planted_script_stays_inert(browser, tmp_path):
    out = tmp_path / "planted.html"
    done = share(_planted_copy(tmp_path), out)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert text.count("<script") == 2 and "__cv_planted" in text  # ours (data, code); the planted ones as text
    v = Offline(browser, out)
    page = v.page
    v.click_launch("triton_")
    assert PLANTED + PLANTED_IMG in page.inner_text("#cv-detail .cv-src")  # shown as written, not run
    assert PLANTED_END in page.inner_text("#cv-detail")  # the source line's code, from the FX graph
    assert PLANTED in page.inner_text("h1") and PLANTED_IMG in page.text_content("header")  # a graph break
    tooltips = page.eval_on_selector_all("#cv-drawing a", "els => els.map(e => e.getAttribute('xlink:title') || '')")
    assert any(PLANTED_END in t for t in tooltips)  # Graphviz's tooltip: the text, escaped
    assert page.evaluate("window.__cv_planted") is None
    assert page.locator("#cv-detail img, header img, #cv-drawing script").count() == 0
    v.offline_and_clean()
    assert _html.escape(PLANTED) in text  # the summary's copy, escaped in the markup


def test_the_viewer_has_a_share_button(tmp_path, monkeypatch):
    """The Viewer's Share button downloads what `compile-viz share` writes, made when clicked."""
    from test_app_fixtures import REPO, fresh_store, no_errors, run_app

    from compile_viz.ui.loaders import run_info
    from compile_viz.ui.share_button import _share_file

    store = fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch)
    next(store)
    try:
        at = run_app(REPO / "app.py", run="bundled:mlp_gelu")
        no_errors(at)
        assert [b.proto.label for b in at.get("download_button")] == ["Share"]
        run = run_info("bundled:mlp_gelu")  # what a click downloads, made as the button's callable makes it
        made = _share_file(str(run.run_dir or run.debug_path), 0.0, run.meta).decode()
        assert page_data(made)["graphs"][0]["launches"] and "default-src 'none'" in made
    finally:
        store.close()
