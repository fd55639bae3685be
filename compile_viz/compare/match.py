"""Launches of two runs of one graph matched by the FX nodes and source lines they cover.

Kernel names change between runs (a new index suffix, another fused-op list), and FX node names
shift when a pass inserts a node; what a node computes and where it comes from do not. So a node
is known by two keys (where it comes from in the user's source, and which op it is: node_keys),
and a launch by the set of its nodes' keys. Each launch points at the launch of the other run whose set
is most like its own (Jaccard; then the same kernel kind; then the nearer place in call()); the
launches joined by those pointers form a group, classified by how many launches each side has
and their kinds. Every launch of both runs lands in exactly one group.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict

from compile_viz.artifacts.model import FxGraph, GraphParse
from compile_viz.compare.model import (
    MERGED,
    MOVED,
    ONLY_A,
    ONLY_B,
    REGROUPED,
    SAME,
    SPLIT,
    GraphMatch,
    LaunchRef,
    MatchGroup,
)
from compile_viz.linking.model import GraphIndex, LaunchLink
from compile_viz.measurements import GraphCosts

Key = tuple


def node_keys(fx: FxGraph | None, *, sources: bool = True) -> dict[str, tuple[Key, Key]]:
    """Return FX node name -> two keys that name the same node in another run of the same model.

    One says where the node comes from: (op, target, source file name, line, occurrence among
    nodes alike in all four); it survives nodes added elsewhere. The other says which op it is:
    (op, target, source file name, occurrence among those); it survives source lines that moved
    within a file, and never pairs two models written in different files.
    `sources=False` leaves the source out of both (op, target, occurrence): for a graph Dynamo
    traced against one torch.export traced, whose nodes name other lines for the same code
    (Dynamo the model's call of a torch module, export the line inside torch's module).
    """
    if fx is None:
        return {}
    at: Counter = Counter()
    ops: Counter = Counter()
    keys = {}
    for n in fx.nodes:
        src = n.source if sources else None
        file = os.path.basename(src.file) if src else ""
        where, what = (n.op, n.target, file, src.line if src else 0), (n.op, n.target, file)
        keys[n.name] = (("at", *where, at[where]), ("op", *what, ops[what]))
        at[where] += 1
        ops[what] += 1
    return keys


def launch_keys(graph: GraphParse, index: GraphIndex, *, sources: bool = True) -> list[tuple[dict[Key, str], str]]:
    """Return, per launch, (key -> the node's name in this run, the basis: nodes | lines | name).

    AOT nodes when the launch has them, else post-grad nodes, else its source lines (node keys
    without their source when `sources` is False: see node_keys).
    """
    aot, post = node_keys(graph.aot_graph, sources=sources), node_keys(graph.post_grad_graph, sources=sources)
    out = []
    for la in index.launches:
        if la.fx_nodes or la.post_grad_nodes:
            graph_keys, names, tag = (aot, la.fx_nodes, "fx") if la.fx_nodes else (post, la.post_grad_nodes, "pg")
            keys = {}
            for n in names:
                for k in graph_keys.get(n, (("name", n),)):
                    keys[(tag, *k)] = n
            out.append((keys, "nodes"))
        elif la.source_lines:
            out.append(({("line", os.path.basename(f), ln): f"{os.path.basename(f)}:{ln}"
                         for f, ln in la.source_lines}, "lines"))
        else:
            out.append(({}, "name"))
    return out


def _scores(keys: list[dict], kinds: list[str], other_keys: list[dict], other_kinds: list[str]) -> list[dict[int, tuple]]:
    """Return, per launch of one side, {launch of the other side sharing a key: how alike they are}.

    Alike: Jaccard of the key sets, then the same kernel kind, then the nearer place in call().
    """
    where: dict[Key, list[int]] = defaultdict(list)
    for j, ks in enumerate(other_keys):
        for k in ks:
            where[k].append(j)
    n, m = max(len(keys), 1), max(len(other_keys), 1)
    out = []
    for i, ks in enumerate(keys):
        shared: Counter = Counter()
        for k in ks:
            shared.update(where.get(k, ()))
        out.append({j: (c / (len(ks) + len(other_keys[j]) - c), kinds[i] == other_kinds[j], -abs(i / n - j / m), -j)
                    for j, c in shared.items()})
    return out


def _links(scores_ab: list[dict[int, tuple]], scores_ba: list[dict[int, tuple]]) -> list[tuple[int, int]]:
    """Return the (a, b) links that make the groups.

    First the mutual best pairs. Then each launch left points at its best counterpart among those
    left too (a 1:1 change beside an unchanged pair), or, when all its candidates are paired, at
    its best one (it joins that pair: merged or split).
    """
    best_ab = [max(s, key=s.get) if s else None for s in scores_ab]
    best_ba = [max(s, key=s.get) if s else None for s in scores_ba]
    links = [(i, j) for i, j in enumerate(best_ab) if j is not None and best_ba[j] == i]
    paired_a, paired_b = {i for i, _ in links}, {j for _, j in links}
    for i, s in enumerate(scores_ab):
        if s and i not in paired_a:
            free = {j: v for j, v in s.items() if j not in paired_b}
            links.append((i, max(free or s, key=(free or s).get)))
    for j, s in enumerate(scores_ba):
        if s and j not in paired_b:
            free = {i: v for i, v in s.items() if i not in paired_a}
            links.append((max(free or s, key=(free or s).get), j))
    return links


def _by_name(a: list[LaunchLink], b: list[LaunchLink], a_free: list[int], b_free: list[int]) -> list[tuple[int, int]]:
    """Return (a, b) pairs of keyless launches with the same kernel name, in order: the last resort."""
    queue: dict[str, list[int]] = defaultdict(list)
    for j in b_free:
        queue[b[j].kernel].append(j)
    return [(i, queue[a[i].kernel].pop(0)) for i in a_free if queue.get(a[i].kernel)]


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, x: int, y: int) -> None:
        self.parent[self.find(x)] = self.find(y)


def classify(a: tuple[LaunchRef, ...], b: tuple[LaunchRef, ...]) -> str:
    """Return the class of a group with these launches on each side."""
    if not b:
        return ONLY_A
    if not a:
        return ONLY_B
    if len(a) == 1 and len(b) == 1:
        return SAME if a[0].kind == b[0].kind else MOVED
    if len(b) == 1:
        return MERGED
    if len(a) == 1:
        return SPLIT
    return REGROUPED


def launch_time_ms(index: GraphIndex, costs: GraphCosts | None) -> dict[int, float]:
    """Return launch index -> GPU ms per call: its kernel's measured time shared among its launches."""
    if costs is None:
        return {}
    count = Counter(la.kernel for la in index.launches)
    out = {}
    for la in index.launches:
        row = costs.kernel(la.kernel)
        if row is not None and row.time_us is not None:
            out[la.index] = row.time_us / 1000.0 / (row.launches_in_code or count[la.kernel])
    return out


def match_graph(a: tuple[GraphParse, GraphIndex, GraphCosts | None] | None,
                b: tuple[GraphParse, GraphIndex, GraphCosts | None] | None) -> GraphMatch:
    """Return the groups of launches of two graphs (either may be None: all its counterpart's launches are alone)."""
    la = list(a[1].launches) if a else []
    lb = list(b[1].launches) if b else []
    # a JIT graph against an exported one (torch.export, then AOTInductor): their tracers name other
    # source lines for the same node, so nodes are known by op alone
    sources = not (a and b and (a[0].exported_program is None) != (b[0].exported_program is None))
    ka = launch_keys(a[0], a[1], sources=sources) if a else []
    kb = launch_keys(b[0], b[1], sources=sources) if b else []
    union = _Union(len(la) + len(lb))
    keys_a, keys_b, kinds_a, kinds_b = [k for k, _ in ka], [k for k, _ in kb], [x.kind for x in la], [x.kind for x in lb]
    for i, j in _links(_scores(keys_a, kinds_a, keys_b, kinds_b), _scores(keys_b, kinds_b, keys_a, kinds_a)):
        union.join(i, len(la) + j)
    a_free = [i for i, (k, _) in enumerate(ka) if not k]
    b_free = [j for j, (k, _) in enumerate(kb) if not k]
    for i, j in _by_name(la, lb, a_free, b_free):
        union.join(i, len(la) + j)
    members: dict[int, list[int]] = defaultdict(list)
    for x in range(len(la) + len(lb)):
        members[union.find(x)].append(x)
    times_a = launch_time_ms(a[1], a[2]) if a else {}
    times_b = launch_time_ms(b[1], b[2]) if b else {}
    groups = [_group(xs, la, lb, ka, kb, times_a, times_b, a is not None and a[2] is not None,
                     b is not None and b[2] is not None) for xs in members.values()]
    groups.sort(key=lambda g: (g.a[0].index if g.a else len(la), g.b[0].index if g.b else -1))
    graph = (a or b)[0]
    return GraphMatch(a[0].id if a else None, b[0].id if b else None, graph.kind, tuple(groups))


def _group(xs: list[int], la: list[LaunchLink], lb: list[LaunchLink], ka, kb, times_a: dict, times_b: dict,
           measured_a: bool, measured_b: bool) -> MatchGroup:
    """Return the MatchGroup of the launches numbered `xs` (A's first, then B's offset by len(la))."""
    ia = [x for x in xs if x < len(la)]
    ib = [x - len(la) for x in xs if x >= len(la)]
    refs_a = tuple(LaunchRef(la[i].index, la[i].kernel, la[i].kind) for i in ia)
    refs_b = tuple(LaunchRef(lb[j].index, lb[j].kernel, lb[j].kind) for j in ib)
    names = dict.fromkeys(n for i in ia for n in ka[i][0].values())
    keys_a = {k for i in ia for k in ka[i][0]}
    for j in ib:  # B's nodes that A's launches of this group do not cover, by B's names
        names.update(dict.fromkeys(n for k, n in kb[j][0].items() if k not in keys_a))
    bases = {ka[i][1] for i in ia} | {kb[j][1] for j in ib}
    basis = "nodes" if "nodes" in bases else ("lines" if "lines" in bases else "name")
    time_a = _sum(times_a, [la[i].index for i in ia]) if measured_a and ia else None
    time_b = _sum(times_b, [lb[j].index for j in ib]) if measured_b and ib else None
    return MatchGroup(classify(refs_a, refs_b), tuple(names), refs_a, refs_b, time_a, time_b, basis)


def _sum(times: dict[int, float], launches: list[int]) -> float | None:
    found = [times[i] for i in launches if i in times]
    return round(sum(found), 6) if found else None
