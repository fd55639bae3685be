"""Fusion groups: post-fusion scheduler nodes aligned with the launches that run them."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict

from compile_viz.artifacts.model import GraphParse, SchedulerNode, blank, slot_setters
from compile_viz.linking.model import GroupLink


def align_groups(graph: GraphParse, launches, warnings: list[str]) -> dict[int, list[SchedulerNode]]:
    """Launch index -> the post-fusion nodes it runs (one on GPU; the C++ backend may put several
    consecutive nodes in one kernel). Both lists are in codegen order; a node belongs to the first
    launch from the current one on that passes one of its buffers."""
    ir = graph.post_fusion or graph.pre_fusion
    if ir is None:
        return {}
    nodes = [n for n in ir.nodes if n.kind != "nop"]
    passing: dict[str, list[int]] = defaultdict(list)  # buffer -> launches that pass it, in order
    for q, la in enumerate(launches):
        for b in (*la.buffers, *la.outputs):  # each launch once per buffer: q only grows, test the last
            qs = passing[b]
            if not qs or qs[-1] != q:
                qs.append(q)
    owner: list[int | None] = [None] * len(nodes)
    p = 0
    for k, node in enumerate(nodes):
        q = None
        for b in node.buffer_names:  # the first launch from p on that passes one of them
            qs = passing.get(b)
            if qs and (j := bisect_left(qs, p)) < len(qs) and (q is None or qs[j] < q):
                q = qs[j]
        if q is not None:
            owner[k] = p = q
    # nodes whose buffers never reach memory run in the kernel of the next placed node
    # (placed by the loop above), else of the previous one (placed by now)
    next_owner: list[int | None] = [None] * len(nodes)
    nxt = None
    for m in range(len(nodes) - 1, -1, -1):
        next_owner[m] = nxt
        if owner[m] is not None:
            nxt = owner[m]
    prev = None
    for k, node in enumerate(nodes):
        if owner[k] is None and node.kind != "extern":
            for cand in (next_owner[k], prev):
                if cand is not None and not launches[cand].is_extern:
                    owner[k] = cand
                    break
        if owner[k] is not None:
            prev = owner[k]
    placement: dict[int, list[SchedulerNode]] = defaultdict(list)
    for k, q in enumerate(owner):
        if q is not None:
            placement[q].append(nodes[k])
    for i, la in enumerate(launches):
        if i not in placement:
            warnings.append(f"launch {i} ({la.kernel}): no scheduler node found")
    return dict(placement)


def group_links(graph: GraphParse, placement: dict[int, SchedulerNode], launches) -> tuple[GroupLink, ...]:
    ir = graph.post_fusion or graph.pre_fusion
    if ir is None:
        return ()
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, nodes in placement.items():
        for node in nodes:
            by_group[node.name].append(i)
    out = []
    for node in ir.nodes:
        members = node.members or (node.name,)
        fused_away = _fused_away(node, members, by_group.get(node.name, ()), launches) if len(members) > 1 else ()
        link = blank(GroupLink)
        g_name(link, node.name)
        g_kind(link, node.kind)
        g_members(link, tuple(members))
        g_buffers(link, node.buffer_names)
        g_fused_away(link, fused_away)
        placed = by_group.get(node.name)
        g_launches(link, () if placed is None else tuple(placed) if len(placed) < 2 else tuple(sorted(placed)))
        out.append(link)
    return tuple(out)


# filled through their slots, not the frozen __init__: see slot_setters
g_name, g_kind, g_members, g_buffers, g_fused_away, g_launches = slot_setters(
    GroupLink, ("name", "kind", "members", "buffers", "fused_away", "launches"))


def _fused_away(node: SchedulerNode, members, placed: list[int], launches) -> tuple[str, ...]:
    """The buffers of a group of several members that only its members read and no launch passes."""
    inside = set(members)
    passed = set()
    for i in placed:
        passed |= set(launches[i].buffers) | set(launches[i].outputs)
    return tuple(name for name, users in node.buffer_users if users and set(users) <= inside and name not in passed)
