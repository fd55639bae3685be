"""Small views of an FX graph shared by the linking steps: users, order, source lines."""

from __future__ import annotations

from collections import defaultdict

from compile_viz.artifacts.model import FxGraph


def node_users(fx: FxGraph) -> dict[str, list[str]]:
    users: dict[str, list[str]] = defaultdict(list)
    for n in fx.nodes:
        name = n.name
        for a in n.args:
            users[a].append(name)
    return users


class _Order(dict):
    """Node name -> position in the graph; names not in it sort last."""

    def __missing__(self, name: str) -> int:
        return 1 << 30


def node_order(fx: FxGraph | None) -> dict[str, int]:
    return _Order(zip([n.name for n in fx.nodes], range(len(fx.nodes)), strict=True)) if fx else _Order()


def lines_of_nodes(fx: FxGraph | None) -> dict[str, tuple[str, int] | None]:
    """Node name -> its user source (file, line), None where it has none."""
    return {n.name: (n.source.file, n.source.line) if n.source is not None else None for n in fx.nodes} if fx else {}


def invert(sets: list[set[str]]) -> dict[str, list[int]]:
    """Node -> the launches whose set holds it, in order (appended in order: no sort needed)."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, names in enumerate(sets):
        for n in names:
            out[n].append(i)
    return out
