"""FX graph -> DOT text: one cluster per kernel launch, coloured by kernel kind.

Three shapes of the same picture: every node (small graphs), one box per launch with the
selected launches opened up (large graphs), and the k-hop neighbourhood of the selection.
Everything taken from the artifacts is escaped for DOT here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from urllib.parse import quote

from compile_viz.artifacts.model import FxGraph, FxNode
from compile_viz.linking.model import POST_GRAD, GraphIndex, LaunchLink
from compile_viz.render.kernel_names import short_kernel_name
from compile_viz.render.palette import NO_KERNEL, SELECTED, kind_color, kind_label

INPUTS, OUTPUTS = "__inputs__", "__outputs__"
MAX_TOOLTIP_NODES = 25
FAST_LAYOUT_ABOVE = 150  # drawn nodes
LABEL_CHARS = 36  # kernel names in labels are cut here; tooltips keep them whole


@dataclass(frozen=True)
class GraphView:
    """What to draw: which graph, how folded, what is selected, where clicks go."""

    graph: str = POST_GRAD  # linking.model.AOT or POST_GRAD: whose node names to look up
    collapsed: bool = False  # one box per launch, except the launches in `expanded`
    expanded: frozenset[int] = field(default_factory=frozenset)
    selected_launches: frozenset[int] = field(default_factory=frozenset)
    selected_nodes: frozenset[str] = field(default_factory=frozenset)
    hops: int = 0  # > 0: only nodes within `hops` edges of the selection, all opened up
    modules: bool = False  # launches grouped into modules (linking/hierarchy.py), `opened` open
    opened: frozenset[str] = field(default_factory=frozenset)  # group ids, with modules=True
    link: str = ""  # this view's link ("/viewer?run=..&graph=..") that clickable nodes add their parameters to; "" = none
    short_names: bool = False  # projector mode: launches labelled "#3 K2 · fused add, gelu" (tooltips keep the name)


def layout_view(view: GraphView) -> GraphView:
    """Return the view whose drawing `view` shares: without the selection, unless it decides what
    is drawn (k hops). The selection is then marked on the cached SVG (svg.mark_svg), not laid out."""
    if view.hops > 0 and (view.selected_nodes or view.selected_launches):
        return view
    return replace(view, expanded=frozenset(), selected_launches=frozenset(), selected_nodes=frozenset())


# SVG ids of what can be selected: Graphviz writes a DOT `id` as the <g id> of the node or cluster.
def node_id(position: int) -> str:
    return f"cvn{position}"


def launch_ids(launch: int) -> tuple[str, str]:
    """Return the ids of a launch drawn as one box and drawn as a cluster."""
    return f"cvL{launch}", f"cvC{launch}"


def selection_ids(fx: FxGraph, launches: frozenset[int], nodes: frozenset[str]) -> set[str]:
    """Return the SVG ids to mark for a selection: its launches (box or cluster) and its nodes."""
    ids = {i for la in launches for i in launch_ids(la)}
    ids.update(node_id(k) for k, n in enumerate(fx.nodes) if n.name in nodes)
    return ids


def dot_quote(text: str) -> str:
    """Return `text` as a DOT double-quoted string (backslashes, quotes and newlines escaped)."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r", "").replace("\n", "\\n") + '"'


def short_target(target: str) -> str:
    """Return an op's name without the `aten.` prefix and `.default` overload."""
    for prefix in ("torch.ops.aten.", "aten."):
        if target.startswith(prefix):
            target = target[len(prefix):]
    return target.removesuffix(".default")


def shape_text(node: FxNode) -> str:
    """Return "f32[32, 1024]" (or what is known of it)."""
    shape = f"[{', '.join(node.shape)}]" if node.shape is not None else ""
    return f"{node.dtype or ''}{shape}"


def node_launches(fx: FxGraph, index: GraphIndex, graph: str) -> dict[str, tuple[int, ...]]:
    """Return node name -> the launches that compute it (empty when none)."""
    out = {}
    for n in fx.nodes:
        link = index.node(n.name, graph)
        out[n.name] = tuple(link.launches) if link else ()
    return out


def neighbourhood(fx: FxGraph, seeds: set[str], hops: int) -> set[str]:
    """Return the nodes within `hops` edges (either direction) of `seeds`."""
    adj: dict[str, set[str]] = {n.name: set() for n in fx.nodes}
    for n in fx.nodes:
        for a in n.args:
            if a in adj:
                adj[n.name].add(a)
                adj[a].add(n.name)
    seen = {s for s in seeds if s in adj}
    frontier = deque((s, 0) for s in seen)
    while frontier:
        name, d = frontier.popleft()
        if d == hops:
            continue
        for m in adj[name]:
            if m not in seen:
                seen.add(m)
                frontier.append((m, d + 1))
    return seen


def transitive_reduction(edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Return `edges` without those implied by a longer path (unchanged if there is a cycle)."""
    succ: dict[str, list[str]] = {}
    indeg: dict[str, int] = {}
    for s, d in edges:
        succ.setdefault(s, []).append(d)
        indeg[d] = indeg.get(d, 0) + 1
        indeg.setdefault(s, 0)
    order, ready = [], [n for n, k in indeg.items() if k == 0]
    while ready:
        n = ready.pop()
        order.append(n)
        for d in succ.get(n, ()):
            indeg[d] -= 1
            if indeg[d] == 0:
                ready.append(d)
    if len(order) != len(indeg):
        return edges
    bit = {n: 1 << i for i, n in enumerate(order)}
    reach: dict[str, int] = {}
    for n in reversed(order):  # descendants of n, n excluded
        r = 0
        for d in succ.get(n, ()):
            r |= bit[d] | reach[d]
        reach[n] = r
    keep = []
    for s, d in edges:
        implied = 0
        for w in succ[s]:
            implied |= reach[w]
        if not implied & bit[d]:
            keep.append((s, d))
    return keep


def _href(view: GraphView, **params: object) -> str:
    query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
    sep = "" if view.link.endswith(("?", "&")) else "&" if "?" in view.link else "?"
    return view.link + sep + query


def _node_stmt(node: FxNode, position: int, launches: tuple[int, ...], index: GraphIndex, view: GraphView) -> str:
    """Return the DOT statement of one FX node."""
    if node.op == "placeholder":
        label, attrs = f"{node.name}\n{shape_text(node)}", {"shape": "invhouse", "fillcolor": "#e7f5ff"}
    elif node.op == "output":
        label, attrs = "output", {"shape": "house", "fillcolor": "#e7f5ff"}
    else:
        label = f"{node.name}\n{short_target(node.target)}\n{shape_text(node)}"
        attrs = {"shape": "box", "fillcolor": "#ffffff"}
        if not launches:
            attrs["style"] = "filled,dashed"
    tip = [f"{node.name} = {node.target or node.op}", shape_text(node)]
    if node.source:
        tip.append(f"{node.source.file}:{node.source.line}  {node.source.code}")
    tip.append(", ".join(f"#{i} {index.launches[i].kernel}" for i in launches if i < len(index.launches))
               or "no kernel")
    attrs.setdefault("style", "filled")
    if node.name in view.selected_nodes:
        attrs.update(color=SELECTED, penwidth="3", **{"class": "cv-sel"})
    attrs.update(label=label, tooltip="\n".join(t for t in tip if t), id=node_id(position))
    if view.link:
        attrs.update(URL=_href(view, node=node.name), target="_top")
    return f"  {dot_quote(node.name)} [{_attrs(attrs)}];"


def _attrs(attrs: dict[str, str]) -> str:
    return ", ".join(f"{k}={dot_quote(v)}" for k, v in attrs.items())


def _launch_title(launch: LaunchLink, limit: int = 0, *, short: bool = False) -> str:
    name = short_kernel_name(launch.kernel) if short else launch.kernel
    if limit and len(name) > limit:
        name = name[: limit - 1] + "…"
    return f"#{launch.index} {name}"


def _launch_box(launch: LaunchLink, members: list[str], view: GraphView) -> str:
    """Return the DOT statement of a collapsed launch: one box."""
    tip = [f"{_launch_title(launch)} ({kind_label(launch.kind)})", *members[:MAX_TOOLTIP_NODES]]
    if len(members) > MAX_TOOLTIP_NODES:
        tip.append(f"... {len(members) - MAX_TOOLTIP_NODES} more")
    attrs = {"shape": "box", "style": "filled,rounded", "fillcolor": kind_color(launch.kind),
             "label": f"{_launch_title(launch, LABEL_CHARS, short=view.short_names)}\n{len(members)} ops",
             "tooltip": "\n".join(tip),
             "id": launch_ids(launch.index)[0]}
    if launch.index in view.selected_launches:
        attrs.update(color=SELECTED, penwidth="3", **{"class": "cv-sel"})
    if view.link:
        attrs.update(URL=_href(view, kernel=launch.kernel, launch=launch.index), target="_top")
    return f"  {dot_quote(f'L{launch.index}')} [{_attrs(attrs)}];"


def _owner(n, ls: list[int], index) -> int:
    """The launch whose box a node is drawn in: the first that lists it, except for the node of a
    user-defined Triton kernel's call (`triton_kernel_wrapper_*`), which that kernel's launch owns
    (PyTorch's provenance also gives it to the kernel launched before it)."""
    if "triton_kernel_wrapper" in n.target:
        for i in ls:
            if i < len(index.launches) and index.launches[i].kind == "user":
                return i
    return ls[0]


def _cluster(launch: LaunchLink, stmts: list[str], view: GraphView) -> list[str]:
    selected = launch.index in view.selected_launches
    attrs = {"label": f"{_launch_title(launch, LABEL_CHARS, short=view.short_names)} ({kind_label(launch.kind)})",
             "style": "filled,rounded",
             "fillcolor": kind_color(launch.kind), "color": SELECTED if selected else "#555555",
             "penwidth": "3" if selected else "1", "tooltip": _launch_title(launch),
             "class": "cv-sel-cluster" if selected else "cv-cluster", "id": launch_ids(launch.index)[1]}
    if view.link:
        attrs.update(URL=_href(view, kernel=launch.kernel, launch=launch.index), target="_top")
    head = [f"  subgraph {dot_quote(f'cluster_L{launch.index}')} {{"]
    head += [f"    {k}={dot_quote(v)};" for k, v in attrs.items()]
    return head + ["  " + s for s in stmts] + ["  }"]


def unit_edges(fx: FxGraph, units: dict[str, str | None], *, ignore: str = "") -> list[tuple[str, str]]:
    """Data flow between drawn boxes: `units` maps the nodes taken (others are skipped) to the box
    each is drawn in, or None for a node folded into what feeds it, which passes its sources on.
    An edge from the box `ignore` is left out."""
    sources: dict[str, frozenset[str]] = {}
    edges: dict[tuple[str, str], None] = {}
    for n in fx.nodes:
        if n.name not in units:
            continue
        feeding = frozenset().union(*(sources.get(a, frozenset()) for a in n.args))
        u = units[n.name]
        sources[n.name] = frozenset((u,)) if u else feeding
        if u:
            for s in feeding:
                if s != u and s != ignore:
                    edges[(s, u)] = None
    return list(edges)


def fx_dot(fx: FxGraph, index: GraphIndex, view: GraphView) -> str:
    """Return the DOT text of `fx` drawn as `view` says."""
    launches_of = node_launches(fx, index, view.graph)
    by_name = {n.name: n for n in fx.nodes}
    position = {n.name: k for k, n in enumerate(fx.nodes)}
    keep = set(by_name)
    seeds = {n for n in view.selected_nodes if n in by_name}
    if view.hops > 0:
        seeds |= {name for name, ls in launches_of.items() if set(ls) & view.selected_launches}
    hop_mode = view.hops > 0 and bool(seeds)  # no seeds: draw as if no hops were asked for
    if hop_mode:
        keep = neighbourhood(fx, seeds, view.hops)

    def unit(n: FxNode) -> str | None:
        """The box a node is drawn in; None: folded into whatever feeds it."""
        if not view.collapsed or hop_mode:
            return n.name
        ls = launches_of[n.name]
        if ls and ls[0] < len(index.launches) and ls[0] not in view.expanded:
            return f"L{ls[0]}"
        if n.op == "placeholder":
            return INPUTS  # one box; its edges would tie every launch to the top rank
        if n.op == "output":
            return OUTPUTS
        return n.name if ls else None

    units: dict[str, str | None] = {n.name: unit(n) for n in fx.nodes if n.name in keep}
    edges = unit_edges(fx, units, ignore=INPUTS)

    lines = ["digraph fx {", '  graph [rankdir="TB", fontname="Helvetica", fontsize="10", nodesep="0.15", '
             'ranksep="0.3", tooltip=" "];',
             # Big drawings: cap Graphviz's rank and crossing searches (minutes -> about 2 s for
             # 1,500 nodes) and draw straight edges, at the price of a few more crossings.
             *(['  graph [nslimit="2", mclimit="0.2", searchsize="10", splines="line"];'] if len(units) > FAST_LAYOUT_ABOVE else []), '  node [fontname="Helvetica", fontsize="9", height="0.2", margin="0.05"];',
             '  edge [arrowsize="0.5", color="#777777"];']
    in_cluster: dict[int, list[str]] = {}
    folded: dict[int, list[str]] = {}
    counts = {INPUTS: 0, OUTPUTS: 0}
    for n in fx.nodes:
        u = units.get(n.name)
        if u is None:
            continue
        if u in counts:
            counts[u] += 1
        elif u.startswith("L") and u not in by_name:
            folded.setdefault(int(u[1:]), []).append(n.name)
        else:
            ls = launches_of[n.name]
            stmt = _node_stmt(n, position[n.name], ls, index, view)
            if ls and ls[0] < len(index.launches) and n.op == "call_function":
                in_cluster.setdefault(_owner(n, ls, index), []).append(stmt)
            else:
                lines.append(stmt)
    for u, label, shape in ((INPUTS, "inputs", "invhouse"), (OUTPUTS, "outputs", "house")):
        if counts[u]:
            lines.append(f"  {dot_quote(u)} [{_attrs({'shape': shape, 'style': 'filled', 'fillcolor': '#e7f5ff', 'label': f'{label} ({counts[u]})', 'tooltip': label})}];")
    for i, members in folded.items():
        lines.append(_launch_box(index.launches[i], members, view))
    for i, stmts in in_cluster.items():
        lines.extend(_cluster(index.launches[i], stmts, view))
    drawn = list(edges)
    if view.collapsed and not hop_mode:
        drawn = transitive_reduction(drawn)  # an overview of launch order, not every tensor
    lines += [f"  {dot_quote(s)} -> {dot_quote(d)};" for s, d in drawn]
    lines.append("}")
    return "\n".join(lines)


def kinds_present(index: GraphIndex) -> list[str]:
    """Return the kernel kinds of this graph's launches, plus 'no kernel', for the legend."""
    seen = list(dict.fromkeys(la.kind for la in index.launches))
    return seen + [NO_KERNEL]
