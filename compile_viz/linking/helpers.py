"""Small views of an FX graph shared by the linking steps: users, order, source lines."""

from __future__ import annotations

from compile_viz.artifacts.model import FxGraph, FxNode
from compile_viz.linking.reasons import OP_NAMES, VIEW_OPS


def node_users(fx: FxGraph) -> dict[str, list[str]]:
    """Node name -> the nodes that use it, once per argument; a plain dict (read with `get`): a
    test and a lookup per edge cost less than a defaultdict's."""
    users: dict[str, list[str]] = {}
    for n in fx.nodes:
        if args := n.args:  # not the graph inputs (a fifth of a backward's nodes)
            name = n.name
            for a in args:
                if a in users:
                    users[a].append(name)
                else:
                    users[a] = [name]
    return users


class _Order(dict):
    """Node name -> position in the graph; names not in it sort last."""

    def __missing__(self, name: str) -> int:
        return 1 << 30


def node_order(fx: FxGraph | None) -> dict[str, int]:
    return _Order(zip([n.name for n in fx.nodes], range(len(fx.nodes)), strict=True)) if fx else _Order()


class _Lines(dict):
    """Node name -> its user source (file, line), None where it has none or the graph lacks the
    name; read with `[]`. Worked out on first lookup: only the nodes of launches without stacks
    of their own are asked for, not every node of the graph."""

    def __init__(self, by_name: dict[str, FxNode]) -> None:
        super().__init__()
        self.by_name = by_name

    def __missing__(self, name: str) -> tuple[str, int] | None:
        n = self.by_name.get(name)
        line = self[name] = (n.source.file, n.source.line) if n is not None and n.source is not None else None
        return line


class _AllLines(dict):
    """_Lines worked out for every node at once: None for a name the graph lacks."""

    def __missing__(self, name: str) -> None:
        return None


def lines_of_nodes(fx: FxGraph | None, by_name: dict[str, FxNode] | None = None, *, every: bool = False
                   ) -> dict[str, tuple[str, int] | None]:
    """Node name -> its user source (file, line), None where it has none (`by_name`: the graph's
    nodes by name, where the caller has them); read it with `[]`, not `get`. With `every`, made
    for all nodes in one pass, for a caller that asks for most of them (every launch's nodes, where
    the trace has no stacks): one comprehension, not a call to __missing__ per node."""
    if not fx:
        return _Lines({})
    if every:
        return _AllLines({n.name: (s.file, s.line) if (s := n.source) is not None else None for n in fx.nodes})
    return _Lines(by_name if by_name is not None else {n.name: n for n in fx.nodes})


def invert(sets: list[set[str]]) -> dict[str, tuple[int, ...]]:
    """Node -> the launches whose set holds it, in order (appended in order: no sort needed), as
    tuples: the form every reader keeps, made once here rather than by each."""
    out: dict[str, list[int]] = {}
    for i, names in enumerate(sets):
        for n in names:
            if n in out:
                out[n].append(i)
            else:
                out[n] = [i]
    return {n: tuple(launches) for n, launches in out.items()}


def next_live(skip: list[int], i: int) -> int:
    """The first index from i on not skipped (skip[j] == j), compressing the path walked."""
    root = i
    while skip[root] != root:
        root = skip[root]
    while skip[i] != root:
        skip[i], i = root, skip[i]
    return root


# walks back through views and tuple elements, for the matcher's template nodes that no neighbour reaches
def reached_through_views(nodes: dict[str, FxNode], name: str, within) -> set[str]:
    """The nodes of `within` node `name` reads, each the first on its path through views and
    tuple elements: the query's copy reads its scaled query (`mul`), the value's the
    `unbind` itself."""
    return set(_through_views(nodes, name, within))


def joined_through_views(nodes: dict[str, FxNode], name: str, used: set[str]) -> bool:
    """Whether node `name` reads a node of `used` through views and tuple elements the
    template leaves out: the value's copy of an attention reads its own layer's `unbind`, or
    its own projection's views, not another's that comes first in the graph."""
    return next(_through_views(nodes, name, used), None) is not None


def _through_views(nodes: dict[str, FxNode], name: str, stops):
    """Yield each node of `stops` that node `name` reads, walking back through views and
    `getitem`s (not past a node of `stops`); lazily, so a caller may stop at the first."""
    stack, seen = list(nodes[name].args), set()
    while stack:
        a = stack.pop()
        if a in stops:
            yield a
            continue
        if a in seen or (node := nodes.get(a)) is None:
            continue
        seen.add(a)
        if node.op == "call_function" and (OP_NAMES[node.target] in VIEW_OPS or node.target == "operator.getitem"):
            stack.extend(node.args)
