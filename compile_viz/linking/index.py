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

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import fields
from functools import cached_property

from compile_viz.artifacts.gc_pause import without_gc
from compile_viz.artifacts.model import FxGraph, FxNode, GraphParse, KernelLaunch, SchedulerNode
from compile_viz.link_model import AOT, POST_GRAD, GraphIndex, GraphSummary, GroupLink, LaunchLink, NodeLinks
from compile_viz.link_reasons import VIEW_OPS, no_kernel_reason, op_name, reason_of

PROVENANCE, COMMENTS, STRUCTURE, ORDER = "provenance", "comments", "structure", "order"


@without_gc
def build_index(graph: GraphParse, *, use_provenance: bool = True) -> GraphIndex:
    """Return the links of one compiled graph. `use_provenance=False` ignores the JSON (for testing)."""
    oc = graph.output_code
    launches: tuple[KernelLaunch, ...] = oc.launches if oc else ()
    post = graph.post_grad_graph
    aot = graph.fx_graph
    warnings: list[str] = []

    users_post = _users(post) if post else {}
    users_aot = _users(aot) if aot else {}

    post_by_name = {n.name: n for n in post.nodes} if post else {}
    order_post = _order(post)
    placement = _align_groups(graph, launches, warnings)
    post_sets, evidence = _post_grad_sets(graph, launches, placement, use_provenance, users_post,
                                          post_by_name, order_post)
    post_launches = _invert(post_sets)
    _inherit_tuple_elements(post, post_launches)

    aot_launches = _aot_launches(aot, post_by_name, post_launches, launches, post_sets, users_aot)

    nodes: dict[tuple[str, str], tuple[tuple[int, ...], str]] = {}
    if post is not None:
        _node_links(POST_GRAD, post, post_launches, users_post, nodes)
    aot_nodes: list[list[str]] = [[] for _ in launches]  # launch -> its AOT nodes, in graph order
    if aot is not None and not _node_links(AOT, aot, aot_launches, users_aot, nodes, aot_nodes):
        aot_nodes = _launch_nodes(aot_launches, len(launches), _order(aot))  # names repeat

    kinds = {k.name: k.kind for k in oc.kernels} if oc else {}
    post_lines = _lines_of_nodes(post)
    aot_lines = _lines_of_nodes(aot)
    links = []
    for i, la in enumerate(launches):
        group = placement.get(i)
        pg = tuple(sorted(post_sets[i], key=order_post.__getitem__))
        fx_nodes = tuple(aot_nodes[i])
        if not group:
            scheduler_nodes, fusion_group, buffers = (), "", ()
        elif len(group) == 1:
            g = group[0]
            scheduler_nodes, fusion_group, buffers = tuple(g.members or (g.name,)), g.name, tuple(g.buffer_names)
        else:
            scheduler_nodes = tuple(m for g in group for m in (g.members or (g.name,)))
            fusion_group = group[0].name
            buffers = tuple(b for g in group for b in g.buffer_names)
        link = _NEW(LaunchLink)
        s_index(link, i)
        s_kernel(link, la.kernel)
        s_is_extern(link, la.is_extern)
        s_kind(link, "extern" if la.is_extern else kinds.get(la.kernel, "other"))
        s_post_grad_nodes(link, pg)
        s_fx_nodes(link, fx_nodes)
        s_scheduler_nodes(link, scheduler_nodes)
        s_fusion_group(link, fusion_group)
        s_buffers(link, buffers)
        s_source_lines(link, _source_lines(pg, post_lines, fx_nodes, aot_lines))
        s_evidence(link, evidence[i])
        s_line(link, la.line)
        links.append(link)
    groups = _group_links(graph, placement, launches)
    return GraphIndex(
        graph_id=graph.id,
        launches=tuple(links),
        nodes=NodeLinks(nodes),
        groups=groups,
        summary=_summary(graph, links, groups, post_by_name),
        warnings=tuple(warnings),
    )


# LaunchLinks and GroupLinks are filled through their slots, not the frozen __init__ (one
# object.__setattr__ per field): hundreds a graph, at half the cost.
_NEW = object.__new__
_LAUNCH_FIELDS = ("index", "kernel", "is_extern", "kind", "post_grad_nodes", "fx_nodes", "scheduler_nodes", "fusion_group",
                  "buffers", "source_lines", "evidence", "line")
assert set(_LAUNCH_FIELDS) == {f.name for f in fields(LaunchLink)}  # each set below, by name
(s_index, s_kernel, s_is_extern, s_kind, s_post_grad_nodes, s_fx_nodes, s_scheduler_nodes, s_fusion_group, s_buffers,
 s_source_lines, s_evidence, s_line) = (LaunchLink.__dict__[name].__set__ for name in _LAUNCH_FIELDS)


def _node_links(graph_name: str, fx: FxGraph, found: dict, users, out: dict, per_launch=None) -> bool:
    """Add (launches, no-kernel reason) per node of `fx` to `out`, the raw dict of a NodeLinks;
    `found` holds sorted lists or tuples of launch indices. With `per_launch`, append each node's name to
    its launches' lists too, in graph order; return whether the node names were all distinct
    (else those lists hold repeats)."""
    get, get_users = found.get, users.get
    before = len(out)
    for n in fx.nodes:
        name = n.name
        hits = get(name)
        if hits:
            out[(graph_name, name)] = (hits if type(hits) is tuple else tuple(hits), "")
            if per_launch is not None:
                for i in hits:
                    per_launch[i].append(name)
        else:
            out[(graph_name, name)] = ((), reason_of(n.op, n.target, n.dtype, bool(get_users(name))))
    return len(out) - before == len(fx.nodes)


# ----------------------------------------------------------------------------- post-grad sets


def _post_grad_sets(graph: GraphParse, launches, placement, use_provenance: bool, users: dict[str, list[str]],
                    known: dict[str, FxNode], order: dict[str, int]) -> tuple[list[set[str]], list[str]]:
    """Launch index -> its post-grad nodes, and how they were found; `known` and `order`: the
    post-grad nodes by name and their positions."""
    post = graph.post_grad_graph
    sets: list[set[str]] = [set() for _ in launches]
    evidence = [""] * len(launches)
    prov = graph.provenance if use_provenance else None
    if prov is not None and prov.code_to_post:
        for i, la in enumerate(launches):
            handle = la.comments.provenance_handle or f"{la.kernel}:{i + 1}"
            nodes = prov.code_to_post.get(handle)
            if nodes is not None:
                sets[i] = set(nodes)
                evidence[i] = PROVENANCE
    if post is None:
        return sets, [e or ORDER for e in evidence]
    matcher = _Matcher(post, users, known, order)
    oc = graph.output_code
    first_seen: set[str] = set()
    closure = _Closure(post, launches, placement)
    templates: dict[str, list[str]] = {}  # kernel -> _template, the same for all its launches
    for i, la in enumerate(launches):
        if evidence[i]:
            first_seen.add(la.kernel)
        elif la.is_extern:
            sets[i], evidence[i] = matcher.extern(la), ORDER
        else:
            template = templates.get(la.kernel)
            if template is None:
                template = templates[la.kernel] = _template(oc.kernel(la.kernel) if oc else None, known)
            if la.kernel not in first_seen and template:
                sets[i], evidence[i] = set(template), COMMENTS
                matcher.claim(la.kernel, template)
            elif template and (found := matcher.repeat(la.kernel, template, la.buffers)):
                sets[i], evidence[i] = found, STRUCTURE
            elif hinted := {n for n in la.comments.source_nodes if n in known}:
                sets[i], evidence[i] = hinted, COMMENTS
            else:  # no comments at all (C++ kernels): what this launch can compute from what is done
                sets[i], evidence[i] = closure.next_kernel(i), ORDER
            first_seen.add(la.kernel)
        if evidence[i] == ORDER and la.is_extern and not la.kernel.startswith("extern_kernels."):
            sets[i] |= closure.view_inputs(sets[i])  # fallback kernels take their views' origins too
        closure.mark_done(i, sets[i])
    return sets, evidence


class _Closure:
    """For kernels with no comments: the post-grad nodes this launch can compute from the
    buffers its fusion group reads (graph inputs, or what earlier launches wrote), in graph
    order. Extern ops (mm, addmm, fallbacks) are left to the extern calls."""

    def __init__(self, post: FxGraph, launches, placement) -> None:
        self.nodes = post.nodes
        self.launches = launches
        self.inputs = {n.name for n in post.nodes if n.op in ("placeholder", "get_attr")}
        self.done = set(self.inputs)
        self.placement = placement
        self.sets: dict[int, set[str]] = {}

    # What only next_kernel and view_inputs need: not built when the provenance JSON or the
    # comments place every launch.
    @cached_property
    def by_name(self) -> dict[str, FxNode]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def transparent(self) -> set[str]:
        return {n.name for n in self.nodes if n.op == "call_function" and _transparent(n)}

    @cached_property
    def views(self) -> set[str]:
        return {n.name for n in self.nodes if n.op == "call_function" and _is_view(n)}

    @cached_property
    def remaining(self) -> list[tuple[str, frozenset[str]]]:
        """(name, its arguments) of the call nodes not yet computed, in graph order."""
        extern_ops = {la.kernel.split(".")[-1] if la.kernel.startswith("extern_kernels.") else la.kernel
                      for la in self.launches if la.is_extern}
        is_extern = {t: any(_op_matches(t, op) for op in extern_ops) for t in {n.target for n in self.nodes}}
        extern = {n.name for n in self.nodes if is_extern[n.target]}
        return [(n.name, frozenset(n.args)) for n in self.nodes if n.op == "call_function" and n.name not in extern]

    @cached_property
    def owner(self) -> dict[str, int]:
        """Buffer -> the launch that wrote it."""
        owner: dict[str, int] = {}
        for i, nodes in self.placement.items():
            for node in nodes:
                for b in node.buffer_names:
                    owner.setdefault(b, i)
        return owner

    def mark_done(self, i: int, names: set[str]) -> None:
        self.done |= names
        self.sets[i] = names

    def _available(self, i: int) -> set[str] | None:
        group = self.placement.get(i)
        if not group:
            return None
        avail: set[str] = set()
        for dep in (d for node in group for d in node.reads):
            if dep.buffer in self.inputs:
                avail.add(dep.buffer)
            elif dep.buffer in self.owner:
                avail |= self.sets.get(self.owner[dep.buffer], set())
        return avail

    def next_kernel(self, i: int) -> set[str]:
        avail = self._available(i)  # a set of its own, grown below by what is taken
        if avail is None:
            avail = set(self.done)
        taken: set[str] = set()
        done, transparent = self.done, self.transparent
        self.remaining = [r for r in self.remaining if r[0] not in done or r[0] in transparent]
        for name, args in self.remaining:
            if args <= avail:  # every argument available or taken; no args: a constant, made where used
                taken.add(name)
                avail.add(name)
        computed = taken - transparent
        return computed | self.view_inputs(computed, within=taken)

    def view_inputs(self, names: set[str], within: set[str] | None = None) -> set[str]:
        """Views (and other transparent nodes) that feed `names`: folded into their indexing."""
        out: set[str] = set()
        stack = [a for n in names for a in self.by_name[n].args if n in self.by_name]
        while stack:
            a = stack.pop()
            node = self.by_name.get(a)
            if node is not None and node.target == "operator.getitem":
                stack.extend(node.args)  # through tuple elements to the view that made them
                continue
            if node is None or a in out or a not in self.views:
                continue
            if within is not None and a not in within and a not in self.done:
                continue
            out.add(a)
            stack.extend(node.args)
        return out


def _is_view(n: FxNode) -> bool:
    return op_name(n.target) in VIEW_OPS


def _transparent(n: FxNode) -> bool:
    """Nodes that never need a kernel of their own (views, tuple elements, symbolic sizes)."""
    return bool(no_kernel_reason(n, (1,)))


def _template(kernel, known: set[str]) -> list[str]:
    if kernel is None:
        return []
    names = [n for _, nodes in kernel.comments.source_to_aten for n in nodes if n in known]
    if not names:  # older comments: the source node names are the post-grad names
        names = [n for n in kernel.comments.source_nodes if n in known]
    return names


class _Matcher:
    """Finds, in graph order, the post-grad nodes behind extern calls and repeated kernels."""

    def __init__(self, post: FxGraph, users: dict[str, list[str]], nodes: dict[str, FxNode],
                 pos: dict[str, int]) -> None:
        self.nodes = nodes
        self.pos = pos
        self.by_target: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(post.nodes):
            self.by_target[n.target].append(i)
        self.order = post.nodes
        self.users = users
        self.last_anchor: dict[str, int] = {}  # kernel or extern op -> position of its last match
        self.inputs = {n.name for n in post.nodes if n.op == "placeholder"}
        self.anchor_at: dict[str, list[int]] = {}  # template anchor -> positions of nodes like it
        self.templates: dict[str, tuple] = {}  # kernel -> (template, its nodes, *_state)
        self.extended: dict[tuple, tuple] = {}  # template nodes -> _state
        self.plans: dict[tuple, tuple] = {}  # template -> _plan
        self.targets: dict[str, list[str]] = {}  # extern op -> the graph's targets it matches

    def claim(self, key: str, names: list[str]) -> None:
        positions = [self.pos[n] for n in names if n in self.pos]
        if positions:
            self.last_anchor[key] = min(positions)

    # extern calls --------------------------------------------------------------------------
    def extern(self, la: KernelLaunch) -> set[str]:
        op = la.kernel.split(".")[1] if la.kernel.startswith("extern_kernels.") else la.kernel
        targets = self.targets.get(op)
        if targets is None:
            targets = self.targets[op] = [t for t in self.by_target if _op_matches(t, op)]
        hinted = [n for n in la.comments.source_nodes if n in self.nodes and self.nodes[n].target in targets]
        if hinted:
            self.last_anchor[op] = self.pos[hinted[0]]
            return {hinted[0]}
        after = self.last_anchor.get(op, -1)
        candidates = sorted(p for t in targets for p in self.by_target[t] if p > after)
        if not candidates:
            return set()
        self.last_anchor[op] = candidates[0]
        return {self.order[candidates[0]].name}

    # repeated kernels ----------------------------------------------------------------------
    def repeat(self, kernel: str, template: list[str], passed: tuple[str, ...] = ()) -> set[str]:
        """The next occurrence of the kernel's sub-graph; graph inputs it reads must be among
        the launch's arguments (`passed`)."""
        if not template:
            return set()
        memo = self.templates.get(kernel)
        if memo is None or memo[0] is not template:
            key = tuple(sorted(set(template), key=self.pos.__getitem__))
            tnodes = [self.nodes[n] for n in key]
            memo = self.templates[kernel] = (template, tnodes, self._plan(tnodes), *self._state(key))
        _, tnodes, plan, positions, extended, skip = memo
        after = self.last_anchor.get(kernel, -1)
        n = len(positions)
        i = _next_live(skip, bisect_right(positions, after))
        while i < n:
            p = positions[i]
            found = extended.get(p, self)
            if found is self:
                found = extended[p] = self._extended(tnodes, plan, p)
            if found is None:  # never fits this template: later scans step over it
                skip[i] = i + 1
            elif not passed or found[1].issubset(passed):
                self.last_anchor[kernel] = p
                return set(found[0])
            i = _next_live(skip, i + 1)
        return set()

    def _state(self, key: tuple[str, ...]) -> tuple:
        """For the template with nodes `key`: the positions where _extend gets past its first
        test, _extended by position, and the skip list over positions where it failed. A kernel
        launched many times scans the same stretch of graph again, and a launch the structure
        does not place scans to the end: both are shared by every kernel with this template."""
        state = self.extended.get(key)
        if state is None:
            anchor = self.nodes[key[0]]
            positions = self.anchor_at.get(anchor.name)
            if positions is None:
                positions = [p for p in self.by_target.get(anchor.target, []) if _same_op(anchor, self.order[p])]
                self.anchor_at[anchor.name] = positions
            state = self.extended[key] = (positions, {}, list(range(len(positions) + 1)))
        return state

    def _extended(self, tnodes: list[FxNode], plan, p: int) -> tuple[tuple[str, ...], frozenset[str]] | None:
        """_extend's nodes from position p, and the graph inputs they read; None when it fails."""
        found = self._extend(tnodes, plan, self.order[p])
        if found is None:
            return None
        names = tuple(found.values())
        nodes, inputs = self.nodes, self.inputs
        return names, frozenset(a for n in names for a in nodes[n].args if a in inputs)

    def _extend(self, tnodes: list[FxNode], plan, start: FxNode) -> dict[str, str] | None:
        """Map the template onto the graph starting from `start` in the order of its `_plan`;
        None when the shape differs."""
        mapping = {tnodes[0].name: start.name}
        if not _same_op(tnodes[0], start):
            return None
        used = {start.name}
        steps, pending = plan
        nodes, users = self.nodes, self.users
        # `_same_op(t, g)` written out, each test once per candidate
        for t, through_users, ref, k, target, nargs, dtype, shape, constants in steps:
            gref = mapping[ref]
            if through_users:  # t uses a mapped node: look among that node's users
                for u in users.get(gref, ()):
                    g = nodes[u]
                    args = g.args
                    if (g.target == target and len(args) == nargs and args[k] == gref and u not in used
                            and g.dtype == dtype and g.shape == shape and g.constants == constants):
                        cand = u
                        break
                else:
                    return None
            else:  # a mapped node uses t: look at that node's args
                args = nodes[gref].args
                if len(args) > k and (cand := args[k]) not in used:
                    c = nodes[cand]
                    if not (c.target == target and len(c.args) == nargs and c.dtype == dtype and c.shape == shape
                            and c.constants == constants):
                        return None
                else:
                    return None
            mapping[t.name] = cand
            used.add(cand)
        if pending:
            # template nodes connected only through outside nodes: match them by op, after start
            for t in pending:
                start_pos = self.pos[start.name]
                cands = self.by_target.get(t.target, [])
                hit = next(
                    (self.order[p].name for p in cands[bisect_right(cands, start_pos - 1) :]
                     if self.order[p].name not in used and _same_op(t, self.order[p])),
                    None,
                )
                if hit is None:
                    return None
                mapping[t.name] = hit
                used.add(hit)
        return mapping

    def _plan(self, tnodes: list[FxNode]) -> tuple[list[tuple], list[FxNode]]:
        """The order in which `_extend` maps a template's nodes, each through which mapped
        neighbour (its k-th argument's users, or the k-th argument of a node that uses it), and
        the nodes no neighbour reaches. Which neighbour is mapped depends on the template
        alone, so this is worked out once per template, not once per place it is tried."""
        key = tuple(t.name for t in tnodes)
        plan = self.plans.get(key)
        if plan is not None:
            return plan
        tset = set(key)
        mapped = {tnodes[0].name: None}  # in the order _extend maps them
        steps = []
        pending = tnodes[1:]
        progress = True
        while pending and progress:
            progress = False
            rest = []
            for t in pending:
                step = self._neighbour(t, mapped, tset)
                if step is None:
                    rest.append(t)
                    continue
                steps.append(step)
                mapped[t.name] = None
                progress = True
            pending = rest
        # each step with the template node's op, arity, dtype, shape and constants: what
        # `_same_op` compares, read once here rather than at every candidate
        steps = [(t, through_users, ref, k, t.target, len(t.args), t.dtype, t.shape, t.constants)
                 for t, through_users, ref, k in steps]
        plan = self.plans[key] = (steps, pending)
        return plan

    def _neighbour(self, t: FxNode, mapped: dict[str, None], tset: set[str]):
        """(t, True, arg, k) when t's k-th argument `arg` is mapped; else (t, False, user, k)
        for the first mapped node whose k-th argument is t; None when neither is mapped yet."""
        for k, arg in enumerate(t.args):
            if arg in tset and arg in mapped:
                return t, True, arg, k
        for tname in mapped:
            args = self.nodes[tname].args
            if t.name in args:
                return t, False, tname, args.index(t.name)
        return None


def _next_live(skip: list[int], i: int) -> int:
    """The first index from i on not skipped (skip[j] == j), compressing the path walked."""
    root = i
    while skip[root] != root:
        root = skip[root]
    while skip[i] != root:
        skip[i], i = root, skip[i]
    return root


def _same_op(a: FxNode, b: FxNode) -> bool:
    """Same op, constants, arity, and (a kernel is specialised to them) dtype and shape."""
    return (
        a.target == b.target
        and len(a.args) == len(b.args)
        and a.dtype == b.dtype
        and a.shape == b.shape
        and a.constants == b.constants
    )


def _op_matches(target: str, op: str) -> bool:
    """`aten.mm.default` matches extern op `mm`; a fallback `aten.foo.default` matches itself."""
    if target == op:
        return True
    parts = target.split(".")
    return len(parts) >= 2 and parts[1] == op


def _inherit_tuple_elements(post: FxGraph | None, found: dict[str, list[int]]) -> None:
    """`getitem` of a multi-output node runs in the kernels of its parent (or of its users)."""
    if post is None:
        return
    for n in post.nodes:
        if n.target == "operator.getitem" and n.name not in found and n.args:
            parent = found.get(n.args[0])
            if parent:
                found[n.name] = parent  # read only from here on


# ----------------------------------------------------------------------------- AOT graph


def _aot_launches(aot, post_by_name: dict[str, FxNode], post_found: dict[str, list[int]], launches, post_sets,
                  users) -> dict[str, tuple[int, ...]]:
    """AOT node -> launches, sorted: by name when the post-grad graph kept the node (the same op,
    or a view the post-grad passes made another view; a view it kept with no launches has none
    here either); else the launches of name-matched ops within three edges whose "Original ATen"
    comment names this node's op; else those of the nearest name-matched users (then arguments)
    from the same source line."""
    if aot is None or not post_by_name:
        return {}
    found: dict[str, list[int]] = {}
    views: set[str] = set()  # views the post-grad graph kept as views: they run where it says, or nowhere
    for n in aot.nodes:
        if n.op != "call_function" or (p := post_by_name.get(n.name)) is None:
            continue
        # the same node: same op, or a view the post-grad passes turned into another view
        # (`view` -> `reshape`, which keeps the node's name)
        if p.target == n.target or op_name(p.target) in VIEW_OPS and op_name(n.target) in VIEW_OPS:
            if n.name in post_found:
                found[n.name] = post_found[n.name]
            elif op_name(n.target) in VIEW_OPS:
                views.add(n.name)
    matched = found
    found = {name: tuple(s) for name, s in matched.items()}  # sorted lists, from _invert
    pending = [n for n in aot.nodes if n.op == "call_function" and n.name not in found and n.name not in views]
    if not pending:  # every op kept its name: the neighbourhoods below are not needed
        return found
    by_name = {n.name: n for n in aot.nodes}
    with_line: dict[int, int] = {}  # user source line -> launches that run it, as a bit mask
    for i, names in enumerate(post_sets):
        bit = 1 << i
        for x in names:
            p = post_by_name.get(x)
            if p is not None and p.source is not None:
                line = p.source.line
                with_line[line] = with_line.get(line, 0) | bit
    with_packet: dict[str, int] = {}  # ATen op -> launches whose comment names it, as a bit mask
    for i, la in enumerate(launches):
        bit = 1 << i
        for packet in la.comments.original_aten:
            with_packet[packet] = with_packet.get(packet, 0) | bit
    near_of = _Near(by_name, users, _Masks(matched))
    bits_of: dict[int, tuple[int, ...]] = {}  # nodes near the same launches share one tuple
    packets: dict[str, str] = {}  # target -> its "aten.op" packet
    for n in pending:
        if n.name in found:  # a name seen twice
            continue
        packet = packets.get(n.target)
        if packet is None:
            packet = packets[n.target] = ".".join(n.target.split(".")[:2])
        mask = with_packet.get(packet)
        by_aten = near_of(n.name) & mask if mask else 0
        if by_aten and n.source is not None:  # the same op's other launches next door (mm + bias kernel)
            next_door = by_aten << 2 | by_aten << 1 | by_aten >> 1 | by_aten >> 2
            by_aten |= next_door & mask & with_line.get(n.source.line, 0)
        if by_aten:
            hits = bits_of.get(by_aten)
            if hits is None:
                hits = bits_of[by_aten] = _bits(by_aten)
            found[n.name] = hits
            continue
        hits = _nearest(n, users, by_name, matched, forward=True) or _nearest(
            n, users, by_name, matched, forward=False)
        if hits:
            found[n.name] = tuple(sorted(hits))
    return found


class _Masks(dict):
    """Node name -> its launches as a bit mask (0 for none), made on first lookup from `lists`:
    only the nodes near the few ops that did not keep their names are asked for."""

    def __init__(self, lists: dict[str, list[int]]) -> None:
        super().__init__()
        self.lists = lists

    def __missing__(self, name: str) -> int:
        launches = self.lists.get(name)
        mask = self[name] = _mask(launches) if launches else 0
        return mask


def _mask(launches) -> int:
    """A set of launch indices as a bit mask: unions of a few hundred launches are one `|`."""
    m = 0
    for i in launches:
        m |= 1 << i
    return m


def _bits(m: int) -> tuple[int, ...]:
    """The launch indices in a bit mask, in order."""
    text = bin(m)  # "0b1...": bit k at position top - k
    top = len(text) - 1
    out = []
    at = text.rfind("1")
    while at >= 2:
        out.append(top - at)
        at = text.rfind("1", 2, at)
    return tuple(out)


class _Near:
    """Launches of the name-matched nodes within three edges of a node, either direction, over
    op nodes only, as a bit mask.

    A node's three-edge ball, less the node, is the union of the two-edge balls of its
    neighbours; it is asked only for nodes that are not name-matched, so the node itself adds
    nothing. Memoising the one- and two-edge unions per node visits a hub's many neighbours
    once, not once per node near it.
    """

    def __init__(self, by_name: dict[str, FxNode], users, found: _Masks) -> None:
        self.by_name = by_name
        self.users = users
        self.found = found
        # the walk goes through ops only: a graph input read in many places, or the output node
        # that returns some 250 saved tensors of a training step, would make every node near
        # every other
        self.calls = {name for name, n in by_name.items() if n.op == "call_function"}
        self.adjacent: dict[str, list[str]] = {}
        self.one: dict[str, int] = {}
        self.two: dict[str, int] = {}

    def _adjacent(self, name: str) -> list[str]:
        adj = self.adjacent.get(name)
        if adj is None:
            # a node that is not an op (a graph input, the output) has no launches and leads
            # nowhere: the walk stops there
            if name in self.calls:
                by_name = self.by_name
                adj = [*self.users.get(name, ()), *[x for x in by_name[name].args if x in by_name]]
            else:
                adj = []
            self.adjacent[name] = adj
        return adj

    def _one(self, name: str) -> int:
        found = self.found
        hits = found[name]
        for other in self._adjacent(name):
            hits |= found[other]
        self.one[name] = hits
        return hits

    def _two(self, name: str) -> int:
        one = self.one.get
        hits = self.found[name]
        for other in self._adjacent(name):
            h = one(other)
            hits |= self._one(other) if h is None else h
        self.two[name] = hits
        return hits

    def __call__(self, name: str) -> int:
        two = self.two.get
        hits = 0
        for other in self._adjacent(name):
            h = two(other)
            hits |= self._two(other) if h is None else h
        return hits


def _nearest(start: FxNode, users, by_name, found, *, forward: bool) -> set[int]:
    line = start.source.line if start.source else None
    frontier = [start.name]
    seen = {start.name}
    for _ in range(6):
        nxt = []
        hits: set[int] = set()
        for name in frontier:
            for other in users.get(name, ()) if forward else by_name[name].args:
                if other in seen or other not in by_name:
                    continue
                seen.add(other)
                o = by_name[other]
                same_line = line is None or (o.source is not None and o.source.line == line)
                if other in found and same_line:
                    hits.update(found[other])
                elif o.op == "call_function":
                    nxt.append(other)
        if hits:
            return hits
        frontier = nxt
        if not frontier:
            break
    return set()


# ----------------------------------------------------------------------------- fusion groups


def _align_groups(graph: GraphParse, launches, warnings: list[str]) -> dict[int, list[SchedulerNode]]:
    """Launch index -> the post-fusion nodes it runs (one on GPU; the C++ backend may put several
    consecutive nodes in one kernel). Both lists are in codegen order; a node belongs to the first
    launch from the current one on that passes one of its buffers."""
    ir = graph.post_fusion or graph.pre_fusion
    if ir is None:
        return {}
    nodes = [n for n in ir.nodes if n.kind != "nop"]
    passing: dict[str, list[int]] = defaultdict(list)  # buffer -> launches that pass it, in order
    for q, la in enumerate(launches):
        for b in set(la.buffers) | set(la.outputs):
            passing[b].append(q)
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


def _group_links(graph: GraphParse, placement: dict[int, SchedulerNode], launches) -> tuple[GroupLink, ...]:
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
        link = _NEW(GroupLink)
        g_name(link, node.name)
        g_kind(link, node.kind)
        g_members(link, tuple(members))
        g_buffers(link, node.buffer_names)
        g_fused_away(link, fused_away)
        placed = by_group.get(node.name)
        g_launches(link, () if placed is None else tuple(placed) if len(placed) < 2 else tuple(sorted(placed)))
        out.append(link)
    return tuple(out)


_GROUP_FIELDS = ("name", "kind", "members", "buffers", "fused_away", "launches")
assert set(_GROUP_FIELDS) == {f.name for f in fields(GroupLink)}  # each set below, by name
g_name, g_kind, g_members, g_buffers, g_fused_away, g_launches = (GroupLink.__dict__[f].__set__ for f in _GROUP_FIELDS)


def _fused_away(node: SchedulerNode, members, placed: list[int], launches) -> tuple[str, ...]:
    """The buffers of a group of several members that only its members read and no launch passes."""
    inside = set(members)
    passed = set()
    for i in placed:
        passed |= set(launches[i].buffers) | set(launches[i].outputs)
    return tuple(name for name, users in node.buffer_users if users and set(users) <= inside and name not in passed)


# ----------------------------------------------------------------------------- helpers


def _users(fx: FxGraph) -> dict[str, list[str]]:
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


def _order(fx: FxGraph | None) -> dict[str, int]:
    return _Order(zip([n.name for n in fx.nodes], range(len(fx.nodes)), strict=True)) if fx else _Order()


def _lines_of_nodes(fx: FxGraph | None) -> dict[str, tuple[str, int] | None]:
    """Node name -> its user source (file, line), None where it has none."""
    return {n.name: (n.source.file, n.source.line) if n.source is not None else None for n in fx.nodes} if fx else {}


def _invert(sets: list[set[str]]) -> dict[str, list[int]]:
    """Node -> the launches whose set holds it, in order (appended in order: no sort needed)."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, names in enumerate(sets):
        for n in names:
            out[n].append(i)
    return out


def _launch_nodes(found: dict[str, tuple[int, ...]], n: int, order: dict[str, int]) -> list[list[str]]:
    """Launch index -> the nodes that `found` maps to it, in `order` (one sort, not one a launch)."""
    out: list[list[str]] = [[] for _ in range(n)]
    for name in sorted(found, key=order.__getitem__):
        for i in found[name]:
            out[i].append(name)
    return out


def _source_lines(pg, post_lines, fx_nodes, aot_lines) -> tuple[tuple[str, int], ...]:
    lines = set(map(post_lines.get, pg))
    lines.update(map(aot_lines.get, fx_nodes))
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
        fx_ops=ops(graph.fx_graph),
        post_grad_ops=ops(post),
        kernels=len(oc.kernels) if oc else 0,
        launches=len(kernel_launches),
        extern_calls=len(links) - len(kernel_launches),
        fusion_groups=len([1 for g in groups if len(g.members) > 1]),
        ops_per_kernel=round(len(fused_ops) / len(kernel_launches), 2) if kernel_launches else 0.0,
    )
