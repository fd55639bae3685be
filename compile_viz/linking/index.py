"""Join the parses of one compiled graph into a GraphIndex: source line <-> AOT FX node <->
post-grad FX node <-> scheduler node <-> fusion group <-> kernel <-> launch, per launch.

Evidence, best first:
1. the provenance JSON (`cppCodeToPost`, keyed `kernel:handle` per launch) when present;
2. the kernel definition's "Source node to ATen node mapping" comment: exact for the kernel's
   first launch (a kernel is generated once, at its first use, then reused);
3. for later launches of the same kernel: the same sub-graph found again in the post-grad
   graph (same targets, constants and internal edges), in graph order;
4. for extern calls: the post-grad node with the matching ATen op, in graph order.
Fusion groups come from aligning post-fusion scheduler nodes with launches by the buffers
they write (the post-fusion IR is printed in codegen order).
"""

from __future__ import annotations

from compile_viz.artifacts.gc_pause import without_gc
from compile_viz.artifacts.model import FxGraph, FxNode, GraphParse, KernelLaunch, blank, slot_setters
from compile_viz.linking.aot import aot_node_launches
from compile_viz.linking.groups import align_groups, group_links
from compile_viz.linking.helpers import invert, lines_of_nodes, node_order, node_users
from compile_viz.linking.model import (
    AOT,
    BASES,
    INFERRED,
    POST_GRAD,
    PROVENANCE,
    STACK_TRACES,
    GraphIndex,
    GraphSummary,
    LaunchLink,
    NodeLinks,
)
from compile_viz.linking.post_grad import inherit_tuple_elements, post_grad_sets
from compile_viz.linking.reasons import reason_of


@without_gc
def build_index(graph: GraphParse, *, use_provenance: bool = True, use_stacks: bool = True) -> GraphIndex:
    """Return the links of one compiled graph. `use_provenance=False` ignores the JSON and
    `use_stacks=False` the trace's per-launch stacks (for testing)."""
    oc = graph.output_code
    launches: tuple[KernelLaunch, ...] = oc.launches if oc else ()
    post = graph.post_grad_graph
    aot = graph.aot_graph
    warnings: list[str] = []

    users_post = node_users(post) if post else {}
    users_aot = node_users(aot) if aot else {}

    post_by_name = {n.name: n for n in post.nodes} if post else {}
    order_post = node_order(post)
    placement = align_groups(graph, launches, warnings)
    post_sets, evidence, ties = post_grad_sets(graph, launches, placement, use_provenance, users_post,
                                         post_by_name, order_post)
    post_launches = invert(post_sets)
    inherit_tuple_elements(post, post_launches)

    aot_by_name = {n.name: n for n in aot.nodes} if aot else {}
    aot_launches = aot_node_launches(aot, post_by_name, post_launches, launches, post_sets, users_aot, aot_by_name)

    nodes: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {}  # graph -> name -> (launches, reason)
    if post is not None:
        _node_links(post, post_launches, users_post, nodes.setdefault(POST_GRAD, {}))
    aot_nodes: list[list[str]] = [[] for _ in launches]  # launch -> its AOT nodes, in graph order
    if aot is not None and not _node_links(aot, aot_launches, users_aot, nodes.setdefault(AOT, {}), aot_nodes):
        aot_nodes = _launch_nodes(aot_launches, len(launches), node_order(aot))  # names repeat

    kinds = {k.name: k.kind for k in oc.kernels} if oc else {}
    stacks = graph.kernel_stacks if use_stacks else None
    # without stacks every launch asks for its nodes' lines: worked out for all nodes at once
    post_lines = lines_of_nodes(post, post_by_name, every=stacks is None)
    aot_lines = lines_of_nodes(aot, aot_by_name, every=stacks is None)
    links = []
    at = order_post.__getitem__
    # the basis of a launch without stacks of its own, by its nodes' evidence: looked up once, not per launch
    own_basis = {PROVENANCE: BASES[(PROVENANCE, PROVENANCE)], INFERRED: BASES[(INFERRED, INFERRED)]}
    for i, la in enumerate(launches):
        group = placement.get(i)
        pg = tuple(sorted(post_sets[i], key=at))
        if len(pg) > 1 and pg[-1] not in order_post:  # names the graph lacks (a trace without it): by name
            pg = tuple(sorted(pg, key=lambda n: (order_post[n], n)))
        fx_nodes = tuple(aot_nodes[i])
        scheduler_nodes, fusion_group, buffers = _group_fields(group)
        link = blank(LaunchLink)
        s_index(link, i)
        s_kernel(link, la.kernel)
        s_is_extern(link, la.is_extern)
        s_kind(link, "extern" if la.is_extern else kinds.get(la.kernel, "other"))
        s_post_grad_nodes(link, pg)
        s_fx_nodes(link, fx_nodes)
        s_scheduler_nodes(link, scheduler_nodes)
        s_fusion_group(link, fusion_group)
        s_buffers(link, buffers)
        traced = stacks.of_launch(i, la.kernel, la.comments.provenance_handle) if stacks is not None else None
        nodes_basis = PROVENANCE if evidence[i] == PROVENANCE else INFERRED
        # the trace's own stacks, when it has them for this launch: exact, backward included
        if traced is not None and (lines := traced.source_lines):
            s_source_lines(link, lines)
            s_basis(link, BASES[(nodes_basis, STACK_TRACES)])
        else:
            s_source_lines(link, _source_lines(pg, post_lines, fx_nodes, aot_lines))
            s_basis(link, own_basis[nodes_basis])
        s_evidence(link, evidence[i])
        alts = ties.get(i)  # most launches have none
        s_alternatives(link, tuple(tuple(sorted(a, key=lambda n: (order_post.get(n, -1), n))) for a in alts) if alts else ())
        s_line(link, la.line)
        links.append(link)
    groups = group_links(graph, placement, launches)
    return GraphIndex(
        graph_id=graph.id,
        launches=tuple(links),
        nodes=NodeLinks(nodes),
        groups=groups,
        summary=_summary(graph, links, groups, post_by_name),
        warnings=tuple(warnings),
    )


def _group_fields(group) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    """A launch's scheduler nodes, fusion group and buffers, from the groups placed on it (none, one,
    or several: a kernel Inductor made of more than one group)."""
    if not group:
        return (), "", ()
    if len(group) == 1:
        g = group[0]
        return tuple(g.members or (g.name,)), g.name, tuple(g.buffer_names)
    return (tuple(m for g in group for m in (g.members or (g.name,))), group[0].name,
            tuple(b for g in group for b in g.buffer_names))


# filled through their slots, not the frozen __init__: see slot_setters
(s_index, s_kernel, s_is_extern, s_kind, s_post_grad_nodes, s_fx_nodes, s_scheduler_nodes, s_fusion_group, s_buffers,
 s_source_lines, s_evidence, s_line, s_basis, s_alternatives) = slot_setters(LaunchLink, (
    "index", "kernel", "is_extern", "kind", "post_grad_nodes", "fx_nodes", "scheduler_nodes", "fusion_group",
    "buffers", "source_lines", "evidence", "line", "basis", "alternatives"))


def _node_links(fx: FxGraph, found: dict, users, out: dict, per_launch=None) -> bool:
    """Add (launches, no-kernel reason) per node of `fx` to `out`, by name (the graph's dict of a NodeLinks);
    `found` holds sorted lists or tuples of launch indices. With `per_launch`, append each node's name to
    its launches' lists too, in graph order; return whether the node names were all distinct
    (else those lists hold repeats)."""
    get = found.get
    # (op, target, dtype, has users) -> the value of a node with no launches: one per kind of node,
    # shared by all such nodes (a graph's placeholders, views, ...), not a call to reason_of each
    unlaunched: dict[tuple, tuple[tuple[()], str]] = {}
    before = len(out)
    for n in fx.nodes:
        name = n.name
        hits = get(name)
        if hits:
            out[name] = (hits if type(hits) is tuple else tuple(hits), "")
            if per_launch is not None:
                for i in hits:
                    per_launch[i].append(name)
        else:
            key = (n.op, n.target, n.dtype, name in users)  # users lists a node only when some node uses it
            value = unlaunched.get(key)
            if value is None:
                value = unlaunched[key] = ((), reason_of(*key))
            out[name] = value
    return len(out) - before == len(fx.nodes)


def _launch_nodes(found: dict[str, tuple[int, ...]], n: int, order: dict[str, int]) -> list[list[str]]:
    """Launch index -> the nodes that `found` maps to it, in `order` (one sort, not one a launch)."""
    out: list[list[str]] = [[] for _ in range(n)]
    for name in sorted(found, key=order.__getitem__):
        for i in found[name]:
            out[i].append(name)
    return out


def _source_lines(pg, post_lines, fx_nodes, aot_lines) -> tuple[tuple[str, int], ...]:
    lines = set(map(post_lines.__getitem__, pg))
    lines.update(map(aot_lines.__getitem__, fx_nodes))
    lines.discard(None)
    return tuple(sorted(lines))


def _summary(graph: GraphParse, links: list[LaunchLink], groups, post_by_name: dict[str, FxNode]) -> GraphSummary:
    def ops(fx):
        return len([1 for n in fx.nodes if n.op == "call_function" and n.target != "operator.getitem"]) if fx else 0

    kernel_launches = [la for la in links if not la.is_extern]
    post = graph.post_grad_graph
    get = post_by_name.get
    fused_ops = {n for la in kernel_launches for n in la.post_grad_nodes
                 if (p := get(n)) is None or p.target != "operator.getitem"}
    oc = graph.output_code
    return GraphSummary(
        fx_ops=ops(graph.aot_graph),
        post_grad_ops=ops(post),
        kernels=len(oc.kernels) if oc else 0,
        launches=len(kernel_launches),
        extern_calls=len(links) - len(kernel_launches),
        fusion_groups=len([1 for g in groups if len(g.members) > 1]),
        ops_per_kernel=round(len(fused_ops) / len(kernel_launches), 2) if kernel_launches else 0.0,
    )
