"""A big graph drawn one level at a time: closed groups of launches as single boxes, open groups
as clusters of their children, launches as the collapsed view draws them (fx_dot).

Only what is visible is laid out: the first view of a thousand-launch backward is a handful of
boxes; opening the 48 blocks adds 48. Edges are the data flow between visible boxes, reduced to
what no longer path implies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from compile_viz.artifacts.model import FxGraph
from compile_viz.linking.hierarchy import Hierarchy, LaunchGroup
from compile_viz.linking.model import GraphIndex
from compile_viz.render.fx_dot import (
    GraphView,
    _attrs,
    _href,
    _launch_box,
    dot_quote,
    node_launches,
    transitive_reduction,
    unit_edges,
)
from compile_viz.render.palette import kind_label

GROUP_FILL, OPEN_FILL = "#eef2ff", "#f8f9fa"


def group_ids(group_id: str) -> tuple[str, str]:
    """The SVG ids of a group drawn closed (a box) and open (a cluster)."""
    return f"cvG_{group_id}", f"cvO_{group_id}"


def _kinds_line(index: GraphIndex, g: LaunchGroup) -> str:
    counts = Counter(index.launches[i].kind for i in g.launches)
    return ", ".join(f"{n} {kind_label(k)}" for k, n in counts.most_common())


NONE_OPEN = "-"  # `open=-`: every group closed (no `open` at all: the first view's choice)


def _open_href(view: GraphView, opened: frozenset[str], **extra: str) -> str:
    """A link to this view with exactly `opened` open (the URL's own `open=` replaced)."""
    path, _, query = view.link.partition("?")
    prefix = path + "?" + "&".join(p for p in query.split("&") if p and not p.startswith("open="))
    return _href(replace(view, link=prefix), open=",".join(sorted(opened)) or NONE_OPEN, **extra)


def _group_box(index: GraphIndex, g: LaunchGroup, view: GraphView) -> str:
    n = len(g.launches)
    label = f"{g.label}\n{n} launch{'es' if n != 1 else ''}" + (f"\n{g.pattern}" if g.pattern else "")
    attrs = {"shape": "box3d", "style": "filled", "fillcolor": GROUP_FILL, "label": label,
             "tooltip": f"{g.label}: {_kinds_line(index, g)}. Click to open.", "id": group_ids(g.id)[0]}
    if view.link:
        attrs.update(URL=_open_href(view, view.opened | {g.id}), target="_top")
    return f"  {dot_quote('G:' + g.id)} [{_attrs(attrs)}];"


def _cluster_head(index: GraphIndex, h: Hierarchy, g: LaunchGroup, view: GraphView, depth: int) -> list[str]:
    label = f"{g.label} ({len(g.launches)} launches{', ' + g.pattern if g.pattern else ''}) ▾"
    attrs = {"label": label, "style": "filled,rounded", "fillcolor": OPEN_FILL if depth % 2 else "#ffffff",
             "color": "#868e96", "tooltip": f"{g.label}: {_kinds_line(index, g)}. Click the title to close.",
             "id": group_ids(g.id)[1], "fontsize": "10"}
    if view.link:
        left = frozenset(o for o in view.opened if o != g.id and g.id not in h.ancestors(o))
        attrs.update(URL=_open_href(view, left, close=g.id), target="_top")
    return [f"  subgraph {dot_quote('cluster_G:' + g.id)} {{", *(f"    {k}={dot_quote(v)};" for k, v in attrs.items())]


def visible_units(h: Hierarchy, opened: frozenset[str]) -> dict[int, str]:
    """Launch -> the box it is drawn in: its own ("L3") or its outermost closed group's ("G:blocks")."""
    unit: dict[int, str] = {}

    def walk(g: LaunchGroup) -> None:
        for c in g.children:
            if isinstance(c, int):
                unit[c] = f"L{c}"
            elif c.id in opened:
                walk(c)
            else:
                unit.update(dict.fromkeys(c.launches, f"G:{c.id}"))

    walk(h.root)
    return unit


def hierarchy_dot(fx: FxGraph, index: GraphIndex, h: Hierarchy, view: GraphView) -> str:
    """The DOT text of `fx`'s launches at the level `view.opened` opens."""
    opened = view.opened
    unit = visible_units(h, opened)
    launches_of = node_launches(fx, index, view.graph)
    members: dict[int, list[str]] = {}
    for name, ls in launches_of.items():
        if ls and ls[0] in unit:
            members.setdefault(ls[0], []).append(name)
    lines = ["digraph fx {", '  graph [rankdir="TB", fontname="Helvetica", fontsize="10", nodesep="0.2", '
             'ranksep="0.3", tooltip=" "];',
             '  node [fontname="Helvetica", fontsize="9", height="0.2", margin="0.06"];',
             '  edge [arrowsize="0.5", color="#777777"];']

    def draw(g: LaunchGroup, depth: int) -> None:
        for c in g.children:
            if isinstance(c, int):
                lines.append(_launch_box(index.launches[c], members.get(c, []), view))
            elif c.id in opened:
                lines.extend(_cluster_head(index, h, c, view, depth))
                draw(c, depth + 1)
                lines.append("  }")
            else:
                lines.append(_group_box(index, c, view))

    draw(h.root, 0)
    units = {name: unit.get(ls[0]) if ls else None for name, ls in launches_of.items()}
    lines += [f"  {dot_quote(s)} -> {dot_quote(d)};" for s, d in transitive_reduction(unit_edges(fx, units))]
    lines.append("}")
    return "\n".join(lines)
