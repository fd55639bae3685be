"""A run's graphs drawn ahead of time for a shared file: every view laid out, in one Graphviz run.

A graph of up to HIERARCHY_ABOVE launches is one drawing, as the Viewer draws it (fx_dot: every node,
or one box per launch above COLLAPSE_ABOVE nodes; SVG ids cvn / cvL / cvC). A bigger graph is its
launch groups (linking/hierarchy.py): one view per group, its children as boxes and its largest
children opened as clusters, as the Viewer's first view opens the root (first_open). A file cannot lay
a graph out when a group is clicked, so each group's view is drawn now. Ids in these views are
relative to the view (cvu0, cvk1) and launch labels carry no launch number: the 48 alike blocks of a
deep model give one DOT text, laid out once, and the page maps each view's ids to its own launches.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from compile_viz.artifacts.model import FxGraph
from compile_viz.linking.hierarchy import HIERARCHY_ABOVE, Hierarchy, LaunchGroup, first_open
from compile_viz.linking.model import POST_GRAD, GraphIndex
from compile_viz.render.fx_dot import (
    LABEL_CHARS,
    GraphView,
    dot_quote,
    fx_dot,
    transitive_reduction,
    unit_edges,
)
from compile_viz.render.palette import kind_color, kind_label
from compile_viz.render.svg import LayoutError

COLLAPSE_ABOVE = 150  # nodes: above this a small graph is one box per launch (the Viewer: 300, with zoom and k-hop to get about)
GROUP_FILL = "#eef2ff"
_HEAD = ['  graph [rankdir="TB", fontname="Helvetica", fontsize="10", nodesep="0.2", ranksep="0.3"];',
         '  node [fontname="Helvetica", fontsize="9", height="0.2", margin="0.06", shape="box", style="filled"];',
         '  edge [arrowsize="0.5", color="#777777"];']


@dataclass(frozen=True)
class View:
    """One drawing of a graph as the page shows it: which laid-out drawing, and what its relative
    ids stand for (`items[k]` is box cvu{k} or cluster cvk{k}: a launch index or a group id)."""

    group: str  # the group drawn ("" for the root or a graph drawn whole)
    dot: str
    items: tuple[int | str, ...] = ()  # () for a graph drawn whole: its ids are fx_dot's own


def graph_views(fx: FxGraph, index: GraphIndex, hierarchy: Hierarchy | None, graph: str = POST_GRAD) -> list[View]:
    """The views of one graph: one whole drawing, or one per launch group (root first) when
    `hierarchy` is given and the graph has more than HIERARCHY_ABOVE launches."""
    if hierarchy is None or len(index.launches) <= HIERARCHY_ABOVE:
        view = GraphView(graph=graph, collapsed=len(fx.nodes) > COLLAPSE_ABOVE)
        return [View("", fx_dot(fx, index, view))]
    edges = launch_edges(fx, index, graph)
    groups = [hierarchy.root, *(g for g in hierarchy.groups.values() if g.children)]
    return [group_view(index, hierarchy, g, edges, graph) for g in groups]


def launch_edges(fx: FxGraph, index: GraphIndex, graph: str = POST_GRAD) -> dict[int, set[int]]:
    """Launch -> the later launches that read what it writes (through nodes no launch computes).
    An edge back to an earlier launch is left out: it comes from a node that a later launch
    computes and an earlier one recomputes inside itself (an iota fused into an embedding), and it
    drew an arrow against call()'s order."""
    units: dict[str, str | None] = {}
    for n in fx.nodes:
        if n.op in ("placeholder", "output"):
            continue
        link = index.node(n.name, graph)
        units[n.name] = f"{link.launches[0]}" if link and link.launches else None
    out: dict[int, set[int]] = {}
    for s, d in unit_edges(fx, units):
        if int(s) < int(d):
            out.setdefault(int(s), set()).add(int(d))
    return out


def group_view(index: GraphIndex, h: Hierarchy, group: LaunchGroup, edges: dict[int, set[int]],
               graph: str = POST_GRAD) -> View:
    """The view of one group: its children, its largest child groups opened as clusters."""
    opened = first_open(Hierarchy(group, h.evidence))
    items: list[int | str] = []
    unit: dict[int, int] = {}  # launch -> the box it is drawn in
    lines = ["digraph g {", *_HEAD]

    def draw(g: LaunchGroup, depth: int) -> None:
        for c in g.children:
            k = len(items)
            if isinstance(c, int):
                items.append(c)
                unit[c] = k
                lines.append(_launch_stmt(index, c, k, graph))
            elif c.id in opened:
                items.append(c.id)
                lines.extend(_cluster_head(c, g, k, depth))
                draw(c, depth + 1)
                lines.append("  }")
            else:
                items.append(c.id)
                unit.update(dict.fromkeys(c.launches, k))
                lines.append(_group_stmt(index, c, g, k))

    draw(group, 0)
    pairs = {(unit[a], unit[b]) for a in group.launches if a in unit
             for b in edges.get(a, ()) if b in unit and unit[a] != unit[b]}
    lines += [f"  u{s} -> u{d};" for s, d in transitive_reduction(sorted(pairs))]
    lines.append("}")
    return View(group.id, "\n".join(lines), tuple(items))


def short_label(child: str, parent: str) -> str:
    """A child group's name inside its parent's view: `attn` for `transformer.h.3.attn` in
    `transformer.h.3`; a name that starts with a number keeps the parent's last part (`h.3`, not
    `3`; `block.0.layer`, not `0.layer`)."""
    if parent and child.startswith(parent + "."):
        rest = child[len(parent) + 1:]
        return f"{parent.rsplit('.', 1)[-1]}.{rest}" if rest.split(".", 1)[0].isdigit() else rest
    return child


def _launch_stmt(index: GraphIndex, launch: int, k: int, graph: str) -> str:
    la = index.launches[launch]
    name = la.kernel if len(la.kernel) <= LABEL_CHARS else la.kernel[: LABEL_CHARS - 1] + "…"
    ops = len(la.post_grad_nodes if graph == POST_GRAD else la.fx_nodes)
    attrs = {"label": f"{name}\n{ops} op{'s' if ops != 1 else ''}", "fillcolor": kind_color(la.kind), "id": f"cvu{k}", "class": "cv-launch"}
    return f"  u{k} [{_attrs(attrs)}];"


def _group_stmt(index: GraphIndex, g: LaunchGroup, parent: LaunchGroup, k: int) -> str:
    n = len(g.launches)
    label = f"{short_label(g.label, parent.label if parent.kind != 'root' else '')}\n{n} launch{'es' if n != 1 else ''}"
    attrs = {"label": label + (f"\n{g.pattern}" if g.pattern else ""), "shape": "box3d", "fillcolor": GROUP_FILL,
             "id": f"cvu{k}", "class": "cv-group"}
    return f"  u{k} [{_attrs(attrs)}];"


def _cluster_head(g: LaunchGroup, parent: LaunchGroup, k: int, depth: int) -> list[str]:
    name = short_label(g.label, parent.label if parent.kind != "root" else "")
    attrs = {"label": f"{name} ({len(g.launches)} launches{', ' + g.pattern if g.pattern else ''})",
             "style": "filled,rounded", "fillcolor": "#f8f9fa" if depth % 2 else "#ffffff", "color": "#868e96",
             "id": f"cvk{k}", "class": "cv-open", "fontsize": "10"}
    return [f"  subgraph cluster_k{k} {{", *(f"    {a}={dot_quote(v)};" for a, v in attrs.items())]


def _attrs(attrs: dict[str, str]) -> str:
    return ", ".join(f"{a}={dot_quote(v)}" for a, v in attrs.items())


def kind_legend(index: GraphIndex) -> list[tuple[str, str]]:
    """(colour, label) of each kernel kind this graph launches."""
    kinds = dict.fromkeys(la.kind for la in index.launches)
    return [(kind_color(k), kind_label(k)) for k in kinds]


# --- laying out many DOT texts at once ------------------------------------------------------------

_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_NOISE = re.compile(r"<!--.*?-->\n?|<title>.*?</title>\n?", re.S)
_FONT = re.compile(r' font-family="[^"]*"')
_GEOMETRY = re.compile(r' (points|d|x|y|viewBox|transform)="([^"]*)"')
_NUMBER = re.compile(r"(\d\.\d)\d+")
_ONE_DECIMAL = r"\1"
_WRAP = re.compile(r'<g id="a_[^"]*"><a xlink:title=" ">\n(.*?)</a>\n</g>\n', re.S)  # a tooltip of " ": none


def layout_all(dots: Sequence[str], *, timeout_s: float = 300.0, processes: int = 2) -> list[str]:
    """The SVG of each DOT text, slimmed (slim_svg), laid out by Graphviz's `dot`; LayoutError (one
    line) when `dot` is missing, fails or runs past `timeout_s`."""
    return Layout(dots, timeout_s=timeout_s, processes=processes).svgs()


class Layout:
    """DOT texts being laid out in the background, in `processes` Graphviz processes that each read
    many graphs (a process per graph costs ~10 ms each); `svgs()` waits for them. Started first, the
    layout runs beside the Python work that follows (another core)."""

    def __init__(self, dots: Sequence[str], *, timeout_s: float = 300.0, processes: int = 2) -> None:
        self._dots, self._timeout = list(dots), timeout_s
        self._exe = shutil.which("dot")
        self._chunks = _balanced(self._dots, max(1, min(processes, len(self._dots)))) if self._dots else []
        self._results: list[list[str] | Exception] = [[] for _ in self._chunks]
        self._threads = [threading.Thread(target=self._run, args=(i,)) for i in range(len(self._chunks))]
        if self._exe is not None:
            for t in self._threads:
                t.start()

    def _run(self, i: int) -> None:
        try:
            self._results[i] = _layout_chunk(self._exe, [self._dots[k] for k in self._chunks[i]], self._timeout)
        except LayoutError as e:
            self._results[i] = e

    def svgs(self) -> list[str]:
        if self._exe is None:
            raise LayoutError("Graphviz's `dot` is not installed where this file was made (apt-get install graphviz)")
        for t in self._threads:
            t.join()
        out: list[str] = [""] * len(self._dots)
        for chunk, svgs in zip(self._chunks, self._results, strict=True):
            if isinstance(svgs, Exception):
                raise svgs
            for k, svg in zip(chunk, svgs, strict=True):
                out[k] = svg
        return out


def _balanced(dots: Sequence[str], n: int) -> list[list[int]]:
    """Indices of `dots` in `n` chunks of about equal text (the biggest first, each to the lightest)."""
    chunks: list[list[int]] = [[] for _ in range(n)]
    weight = [0] * n
    for k in sorted(range(len(dots)), key=lambda k: -len(dots[k])):
        i = weight.index(min(weight))
        chunks[i].append(k)
        weight[i] += len(dots[k])
    return [sorted(c) for c in chunks if c]


def _layout_chunk(exe: str, dots: list[str], timeout_s: float) -> list[str]:
    try:
        proc = subprocess.run([exe, "-Tsvg"], input="\n".join(dots).encode(), capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"Graphviz took more than {timeout_s:g} s to lay out {len(dots)} drawings") from None
    svgs = _SVG.findall(proc.stdout.decode("utf-8", "replace"))
    if proc.returncode != 0 or len(svgs) != len(dots):
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"Graphviz failed: {msg[-1] if msg else proc.returncode}")
    return [slim_svg(s) for s in svgs]


def slim_svg(svg: str) -> str:
    """`svg` without what a page does not need: comments, <title> (the node's DOT name), empty
    tooltips, font families (the page's CSS sets one), digits past the first decimal."""
    svg = _FONT.sub("", _WRAP.sub(r"\1", _NOISE.sub("", svg)))
    return _GEOMETRY.sub(_rounded, svg)


def _rounded(m: re.Match) -> str:
    return f' {m.group(1)}="{_NUMBER.sub(_ONE_DECIMAL, m.group(2))}"'
