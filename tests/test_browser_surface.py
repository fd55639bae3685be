"""The whole surface in real Chromium (issue 33, points 3 and 4): every graph of every run we keep
opens fitted to its pane, and every link the Compiles, Runs, Viewer and Compare pages render on a
multi-rank run opens what it names. One browser and one server per test; pages opened by URL.

The runs: sample_runs/ (bundled), every run zip of tests/fixtures/* (the GPU fixtures: jobs,
third_party, scale, aoti, classes, unseen, flex; and the CPU ones) imported into a store, and a two-rank gloo DDP job recorded here with torchrun (conftest's
ddp_runs, where rank 1 alone recompiles). Skips only where Chromium or Graphviz is missing and
COMPILE_VIZ_CI is unset (test_browser.chromium_page); screenshots of failures in test-artifacts/.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from test_browser import OUT, REPO, chromium_page, start_streamlit

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.trace.index import LAZY_FILE_BYTES
from compile_viz.linking import build_index
from compile_viz.linking.graph_labels import graph_rank
from compile_viz.linking.model import AOT, POST_GRAD
from compile_viz.store import RunStore, bundled_runs
from compile_viz.ui.page_registry import URL_PATHS, page_url
from compile_viz.ui.runs import BUNDLED, resolve
from tests.services import stop

pytestmark = pytest.mark.slow
FIXTURES = REPO / "tests" / "fixtures"
# every folder of tests/fixtures that holds runs: a new one is opened without being named here
GPU_FIXTURES = tuple(sorted(d.name for d in FIXTURES.iterdir() if d.is_dir() and any(d.glob("*.zip"))))
SAMPLE_RUNS = REPO / "sample_runs"
SCRIPT_DONE = "[data-testid='stApp'][data-test-script-state='notRunning']"

# Every graph pane on the page (each graph widget draws into a shadow root of its own): the pane's
# box, the drawing's, how many of its boxes (nodes, clusters) lie in the pane, and the zoom shown.
_PANES = """() => {
  const roots = [document], panes = [];
  while (roots.length) {
    const r = roots.pop();
    panes.push(...r.querySelectorAll('.cv-graph'));
    for (const e of r.querySelectorAll('*')) if (e.shadowRoot) roots.push(e.shadowRoot);
  }
  return panes.map(p => {
    const a = p.getBoundingClientRect(), s = p.querySelector('svg');
    const b = s ? s.getBoundingClientRect() : null;
    const shapes = s ? [...s.querySelectorAll('g.node, g.cluster')] : [];
    const seen = shapes.filter(g => { const r = g.getBoundingClientRect();
      return r.width > 1 && r.height > 1 && r.right > a.left && r.left < a.right && r.bottom > a.top && r.top < a.bottom;
    }).length;
    const pct = p.parentElement.querySelector('.cv-zoom-pct');
    return {pane: [a.left, a.top, a.right, a.bottom], svg: b && [b.left, b.top, b.right, b.bottom],
            shapes: shapes.length, seen, zoom: pct ? pct.textContent : ''};
  });
}"""
# Every link in the page's main area (shadow roots included: the graphs' SVG links) and its sidebar.
_LINKS = """() => {
  const out = [];
  const roots = [...document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebarNav"]')];
  while (roots.length) {
    const r = roots.pop();
    for (const a of r.querySelectorAll('a')) {
      const h = a.getAttribute('href') || a.getAttribute('xlink:href');
      if (h) out.push({href: h, svg: !!a.closest('svg'), nav: !!a.closest('[data-testid="stSidebarNav"]')});
    }
    for (const e of r.querySelectorAll('*')) if (e.shadowRoot) roots.push(e.shadowRoot);
  }
  return out;
}"""


def settle(page, timeout_s: float = 120) -> None:
    """Until the app's script has run to its end and stays there (a switch_page or st.rerun runs it
    again), then until every graph pane has drawn."""
    deadline = time.monotonic() + timeout_s
    while True:
        page.wait_for_selector(SCRIPT_DONE, state="attached", timeout=max(1, deadline - time.monotonic()) * 1000)
        page.wait_for_timeout(300)
        if page.locator(SCRIPT_DONE).count():
            break
    page.wait_for_function("""() => { const roots = [document], pcts = [];
        while (roots.length) { const r = roots.pop(); pcts.push(...r.querySelectorAll('.cv-graph'));
          for (const e of r.querySelectorAll('*')) if (e.shadowRoot) roots.push(e.shadowRoot); }
        return pcts.every(p => { const t = p.parentElement.querySelector('.cv-zoom-pct'); return t && t.textContent; }); }""",
                           timeout=max(1, deadline - time.monotonic()) * 1000)


def page_problems(page) -> list[str]:
    """What must never show: an exception, Streamlit's "Page not found", a link to nothing said."""
    out = []
    if page.locator("[data-testid='stException']").count():
        out.append("exception: " + page.locator("[data-testid='stException']").first.inner_text()[:300])
    if page.get_by_text("Page not found").count():
        out.append("Page not found")
    for text in page.locator("[data-testid='stAlertContentWarning']").all_inner_texts():
        if text.startswith("No "):
            out.append(f"unknown: {text[:200]}")
    return out


def fitted(panes: list[dict]) -> list[str]:
    """Every pane's drawing fitted, of a size to see, with boxes in view: inside its pane, or (one too
    flat or tall to read whole) filling the pane's other side from the pane's corner."""
    out = []
    if not panes:
        return ["no graph pane"]
    for i, p in enumerate(panes):
        if p["svg"] is None or not p["shapes"]:
            out.append(f"pane {i}: no drawing")
            continue
        (pl, pt, pr, pb), (sl, st_, sr, sb) = p["pane"], p["svg"]
        if min(sr - sl, sb - st_) < 12:
            out.append(f"pane {i}: drawing {sr - sl:.0f} x {sb - st_:.0f} px")
        whole = p["zoom"].endswith("(fit)")  # else "(fit width)", "(fit height)", "(readable)": too flat or tall to read whole
        if whole and (sl < pl - 1 or st_ < pt - 1 or sr > pr + 1 or sb > pb + 1):
            out.append(f"pane {i}: drawing {p['svg']} outside pane {p['pane']}")
        if not whole and (abs(sl - pl) > 2 or abs(st_ - pt) > 2 or int(p["zoom"].split("%")[0]) < 5):
            out.append(f"pane {i}: drawing {p['svg']} does not start at the pane's corner {p['pane']} at {p['zoom']}")
        if not re.search(r"\((fit( width| height)?|readable)\)$", p["zoom"]) or p["seen"] == 0:
            out.append(f"pane {i}: zoom {p['zoom']!r}, {p['seen']} of {p['shapes']} boxes in view")
    return out


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@contextmanager
def serving(home: Path, sample_runs: Path, log_path: Path):
    env = dict(os.environ, COMPILE_VIZ_HOME=str(home), COMPILE_VIZ_SAMPLE_RUNS=str(sample_runs), COMPILE_VIZ_WARM="0")
    log = open(log_path, "wb")
    proc, url = start_streamlit(REPO, env, log)
    try:
        assert url is not None, log_path.read_text()[-2000:]
        yield url
    finally:
        stop(proc)
        log.close()


def copy_run(run_folder: Path, store: RunStore, tmp: Path):
    """Import a run recorded into another home (ddp_runs) into `store`, through the store's own zip."""
    zip_path = RunStore(run_folder.parent.parent).export_run(run_folder.name, tmp / f"{run_folder.name}.zip")
    return store.import_zip(zip_path)


def viewer_graphs(key: str, store: RunStore) -> list[str]:
    """The graph ids the Viewer lists for a run (its loader's parse, uncached)."""
    info = resolve(key, store)
    return [g.id for g in parse_path(str(info.run_dir or info.debug_path), lazy_above=LAZY_FILE_BYTES).graphs]


def test_every_graph_of_every_run_opens_fitted_in_chromium(tmp_path, ddp_runs, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("COMPILE_VIZ_SAMPLE_RUNS", str(SAMPLE_RUNS))
    store = RunStore(home)
    keys = [BUNDLED + b.name for b in bundled_runs(SAMPLE_RUNS)]
    keys += [store.import_zip(z).id for d in GPU_FIXTURES for z in sorted((FIXTURES / d).glob("*.zip"))]
    keys.append(copy_run(ddp_runs["recompile"][0], store, tmp_path).id)
    work = [(key, gid) for key in keys for gid in viewer_graphs(key, store)]
    assert len(work) >= 140, len(work)
    problems, took = [], []
    (OUT / "every_graph").mkdir(parents=True, exist_ok=True)
    t_all = time.monotonic()
    with serving(home, SAMPLE_RUNS, tmp_path / "streamlit.log") as url, chromium_page(1300) as page:
        for n, (key, gid) in enumerate(work):
            t0 = time.monotonic()
            page.goto(url + page_url("viewer", run=key, graph=gid))
            try:
                settle(page)
                found = page_problems(page) + fitted(page.evaluate(_PANES))
                if query_of(page.url).get("graph") != gid:
                    found.append(f"shows graph {query_of(page.url).get('graph')!r}")
            except Exception as e:  # a timeout: said with the others, not the first alone
                found = [f"{type(e).__name__}: {str(e).splitlines()[0]}"]
            took.append((time.monotonic() - t0, key, gid))
            if found:
                page.screenshot(path=str(OUT / "every_graph" / f"{n:03d}.png"), full_page=True)
                problems.append(f"{key} {gid} (every_graph/{n:03d}.png): {'; '.join(found)}")
    total = time.monotonic() - t_all
    slowest = ", ".join(f"{gid.rsplit('/', 1)[-1]} {s:.1f} s" for s, _, gid in sorted(took, reverse=True)[:3])
    print(f"\nbrowser: {len(work)} graphs of {len(keys)} runs in {total:.0f} s "
          f"({total / len(work):.2f} s a graph; slowest: {slowest})")
    assert not problems, "\n".join(problems)


def test_the_fsdp2_backward_opens_fitted_and_keeps_the_zoom_in_chromium(tmp_path):
    """Issue 33's blank pane: rank 0's [10/0] backward of the FSDP2 job (151 nodes, 29 launches)
    opens fitted; zoomed in and a kernel clicked, the zoom is kept; `fit` fits it again."""
    store = RunStore(tmp_path / "home")
    run = store.import_zip(FIXTURES / "jobs" / "gpt2_fsdp2_2gpu.zip")
    graph = next(g for g in viewer_graphs(run.id, store) if g.endswith("pid_6485/model__1_backward_24.12"))
    with serving(store.home, SAMPLE_RUNS, tmp_path / "streamlit.log") as url, chromium_page(1300) as page:
        page.goto(url + page_url("viewer", run=run.id, graph=graph))
        settle(page)
        assert not page_problems(page) and not fitted(page.evaluate(_PANES))
        pct = page.locator(".cv-zoom-pct").first
        assert re.fullmatch(r"\d+% \((fit( width| height)?|readable)\)", pct.inner_text())  # too wide to read whole
        assert int(pct.inner_text().split("%")[0]) <= 40
        for _ in range(3):
            page.locator(".cv-zoombar button[data-z=in]").first.click()
        zoomed = pct.inner_text()
        assert not zoomed.endswith("(fit)")
        pane = page.locator(".cv-graph").first
        before = pane.evaluate("p => [p.scrollLeft, p.scrollTop]")
        b = pane.bounding_box()
        x, y = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x - 150, y - 100, steps=5)
        page.mouse.up()
        after = pane.evaluate("p => [p.scrollLeft, p.scrollTop]")
        assert after[0] > before[0] and after[1] > before[1]  # dragged: panned
        assert pct.inner_text() == zoomed
        page.locator(".cv-graph a[*|href*='kernel=triton_']").first.click()
        page.wait_for_function("() => location.search.includes('kernel=triton_')", timeout=60_000)
        settle(page)
        assert page.locator(".cv-zoom-pct").first.inner_text() == zoomed  # the zoom kept across the rerun
        page.screenshot(path=str(OUT / "fsdp2_backward_zoomed.png"))
        page.locator(".cv-zoombar button[data-z=fit]").first.click()
        assert page.locator(".cv-zoom-pct").first.inner_text().endswith("(fit)")
        assert not fitted(page.evaluate(_PANES))


# -- every link ----------------------------------------------------------------------------------------

PAGE_OF_PATH = {f"/{path}": name for name, path in URL_PATHS.items()}


def page_name(url: str) -> str:
    """The page a URL names (the root, "/", opens the Viewer or the Compare page: app_pages.root)."""
    path = urlsplit(url).path
    if path in ("", "/"):
        return "compare" if query_of(url).get("compare") else "viewer"
    return PAGE_OF_PATH.get(path, path)


def combo(page, label: str) -> str:
    """The picker's value: a dropdown's, or (above the Viewer's LIST_MAX entries: gpt_small's 1,155-node
    forward, which the Lessons page links to) its search box's."""
    for role in ("combobox", "textbox"):
        box = page.get_by_role(role, name=label, exact=True)
        if box.count():
            return box.first.input_value()
    return ""


def opens_what_it_names(page, href: str, facts: dict) -> list[str]:
    """What the page now open shows that the link did not name: another page, graph, rank, compile id,
    kernel, node or group; an exception, "Page not found" or an unknown parameter said."""
    want, q, got = page_name(href), query_of(href), query_of(page.url)
    out = page_problems(page)
    if page_name(page.url) != want:
        out.append(f"opened {urlsplit(page.url).path}, not the {want} page")
    if want == "viewer" and q.get("graph"):
        graph = q["graph"]
        if got.get("graph") != graph:
            out.append(f"shows graph {got.get('graph')!r}")
        rank = facts["ranks"].get(graph)
        if rank is not None and not combo(page, "Rank").startswith(f"rank {rank} "):
            out.append(f"rank picker at {combo(page, 'Rank')!r}, the graph is rank {rank}'s")
        if q.get("launch") and not combo(page, "Kernel launch").startswith(f"#{q['launch']} {q.get('kernel', '')}"):
            out.append(f"kernel launch {combo(page, 'Kernel launch')!r}")
        if q.get("node") and combo(page, "FX node") != q["node"]:
            out.append(f"FX node {combo(page, 'FX node')!r}")
    elif want == "compiles":
        if q.get("rank") and not combo(page, "Rank").startswith(f"rank {q['rank']} "):
            out.append(f"rank picker at {combo(page, 'Rank')!r}")
        if q.get("compile") and not combo(page, "Compile id").startswith(f"[{q['compile']}]"):
            out.append(f"compile id {combo(page, 'Compile id')!r}")
    elif want == "compare":
        for param, label in (("rank", "Rank of A"), ("compare_rank", "Rank of B")):
            if q.get(param) and combo(page, label) != f"rank {q[param]}":
                out.append(f"{label} at {combo(page, label)!r}")
        if q.get("cid") and got.get("cid"):
            out.append(f"compile id {q['cid']} not found on either side")
        if q.get("launch") and q.get("kernel", "") not in combo(page, "Group"):
            out.append(f"group {combo(page, 'Group')!r} lacks launch {q['launch']} ({q.get('kernel')})")
    return out


def svg_link_problems(href: str, here: str, facts: dict) -> list[str]:
    """A graph's node or launch link, checked without opening it: it keeps the page, run, graph
    (Viewer) or comparison (Compare) and names a launch or node the graph has."""
    q, h = query_of(href), query_of(here)
    if page_name(href) != page_name(here):
        return [f"{href}: on another page than {here}"]
    keep = ("run", "graph") if page_name(here) == "viewer" else ("run", "compare", "rank", "compare_rank")
    out = [f"{href}: {k}={q.get(k)!r}, the page's is {h.get(k)!r}" for k in keep if q.get(k) != h.get(k)]
    index = facts["indexes"].get(q.get("graph", ""))
    if index is not None and "launch" in q:
        launch = int(q["launch"])
        if not (0 <= launch < len(index.launches) and index.launches[launch].kernel == q.get("kernel")):
            out.append(f"{href}: no launch {launch} of {q.get('kernel')}")
    nodes = facts["nodes"].get((q.get("graph", ""), q.get("view") or POST_GRAD))
    if nodes is not None and q.get("node") and q["node"] not in nodes:
        out.append(f"{href}: no node {q['node']}")
    return out


def link_kind(href: str) -> str:
    q = query_of(href)
    return "node" if "node" in q else "launch" if "launch" in q else "open" if "open" in q else "other"


def run_facts(key: str, store: RunStore) -> dict:
    info = resolve(key, store)
    graphs = parse_path(str(info.run_dir or info.debug_path), lazy_above=LAZY_FILE_BYTES).graphs
    nodes = {(g.id, view): {n.name for n in fx.nodes} for g in graphs for view in (POST_GRAD, AOT)
             if (fx := g.artifact(view)) is not None}
    return {"ranks": {g.id: graph_rank(g) for g in graphs}, "indexes": {g.id: build_index(g) for g in graphs},
            "nodes": nodes}


def open_compile_section(page) -> None:
    section = page.locator("summary").filter(has_text="Compile: guards and phase timings")
    if section.count():
        section.first.click()
        page.wait_for_timeout(200)
        settle(page)


def click_table_row(page, row: int) -> None:
    """Select row `row` of the Runs table (a canvas: its row-marker column, by position)."""
    grid = page.locator("[data-testid='stDataFrame']").first.bounding_box()
    page.mouse.click(grid["x"] + 14, grid["y"] + 35 * (row + 1) + 17)


def test_every_link_opens_what_it_names_in_chromium(tmp_path, ddp_runs):
    """The Compiles page (ranks grid, divergences, each compile's graphs), the Viewer (each graph's
    compile link, node and launch links), the Compare page (both graphs' launch links), the Runs page
    (a row, each bundled run) and the sidebar, on the two-GPU DDP job and the CPU job where rank 1
    alone recompiles: every link is opened (a graph's node and launch links: every one checked
    against the graph, one of each kind per rank opened) and shows what it names."""
    store = RunStore(tmp_path / "home")
    runs = [store.import_zip(FIXTURES / "jobs" / "gpt2_ddp_2gpu.zip").id, copy_run(ddp_runs["recompile"][0], store, tmp_path).id]
    facts = {r: run_facts(r, store) for r in runs}
    queue = [page_url("runs")]
    for r in runs:
        queue += [page_url("compiles", run=r), page_url("viewer", run=r),
                  page_url("compare", run=r, compare=r, rank=0, compare_rank=1)]
    seen, sampled, problems, checked = set(), set(), [], Counter()
    (OUT / "every_link").mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with serving(store.home, SAMPLE_RUNS, tmp_path / "streamlit.log") as url, chromium_page(1300) as page:
        while queue:
            href = queue.pop(0)
            key = (urlsplit(href).path, tuple(sorted(query_of(href).items())))
            if key in seen:
                continue
            seen.add(key)
            page.goto(urljoin(url, href))
            try:
                settle(page)
                run = query_of(href).get("run", "")
                found = opens_what_it_names(page, href, facts.get(run, {"ranks": {}}))
                if page_name(page.url) == "viewer":
                    open_compile_section(page)
                links = page.evaluate(_LINKS)
            except Exception as e:
                found, links = [f"{type(e).__name__}: {str(e).splitlines()[0]}"], []
            checked[page_name(href)] += 1
            if found:
                page.screenshot(path=str(OUT / "every_link" / f"{len(seen):03d}.png"), full_page=True)
                problems.append(f"{href} (every_link/{len(seen):03d}.png): {'; '.join(found)}")
            here = page.url
            for link in links:
                target = urljoin(here, link["href"])
                if urlsplit(target).netloc != urlsplit(url).netloc or link["href"].startswith("#"):
                    continue  # another site, or an anchor in the page
                target = target[len(url):]
                if link["svg"]:
                    run = query_of(here).get("run", "")
                    problems += svg_link_problems(target, here, facts.get(run, {"indexes": {}, "nodes": {}}))
                    checked["graph link"] += 1
                    q = query_of(target)
                    sample = (page_name(here), q.get("run"), facts.get(run, {"ranks": {}})["ranks"].get(q.get("graph")),
                              q.get("side"), link_kind(target))
                    if sample in sampled:
                        continue
                    sampled.add(sample)
                queue.append(target)
        problems += runs_page_links(page, url, store, checked)
    (OUT / "every_link" / "problems.txt").write_text("\n".join(problems))
    print(f"\nbrowser: every link: {sum(checked.values())} links ({dict(checked)}) in {time.monotonic() - t0:.0f} s")
    assert not problems, "\n".join(problems)


def runs_page_links(page, url: str, store: RunStore, checked: Counter) -> list[str]:
    """The Runs page's rows (each stored run) and its bundled runs' buttons open that run in the Viewer."""
    out = []
    targets = [(i, r.id) for i, r in enumerate(store.list_runs(limit=200))]
    targets += [(b.meta.get("title") or b.name, BUNDLED + b.name) for b in bundled_runs(SAMPLE_RUNS)]
    for what, key in targets:
        page.goto(url + page_url("runs"))
        settle(page)
        if isinstance(what, int):
            click_table_row(page, what)
        else:
            page.get_by_role("button", name=what, exact=True).click()
        try:
            page.wait_for_url(re.compile(r"/viewer\?"), timeout=60_000)
            settle(page)
            found = page_problems(page)
            if query_of(page.url).get("run") != key:
                found.append(f"opened run {query_of(page.url).get('run')!r}")
        except Exception as e:
            found = [f"{type(e).__name__}: {str(e).splitlines()[0]}"]
        checked["runs page"] += 1
        if found:
            out.append(f"Runs page, {what!r} -> {key}: {'; '.join(found)}")
    return out
