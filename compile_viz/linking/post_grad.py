"""Launch -> its post-grad FX nodes, and the evidence that placed them (listed, best first, in index.py)."""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from itertools import chain

from compile_viz.artifacts.model import FxGraph, FxNode, GraphParse
from compile_viz.linking.matcher import Matcher
from compile_viz.linking.origins import MATMULS, Origins, is_conv_with_bias, returns_own_tensor, viewed_inputs
from compile_viz.linking.reasons import VIEW_OPS, no_kernel_reason, op_matches, op_name

PROVENANCE, COMMENTS, STRUCTURE, ORDER = "provenance", "comments", "structure", "order"


# long: one pass over the launches, each branch a placement rule in the order they are tried
def post_grad_sets(graph: GraphParse, launches, placement, use_provenance: bool, users: dict[str, list[str]],
                   known: dict[str, FxNode], order: dict[str, int]
                   ) -> tuple[list[set[str]], list[str], dict[int, tuple[frozenset[str], ...]]]:
    """Launch index -> its post-grad nodes, how they were found, and (launch index -> the other
    placements as good) where the matcher broke a tie by graph order; `known` and `order`: the
    post-grad nodes by name and their positions."""
    post = graph.post_grad_graph
    sets, evidence = _from_provenance(graph, launches, use_provenance)
    if post is None:
        return sets, [e or ORDER for e in evidence], {}
    matcher = Matcher(post, users, known, order)
    ties = _Ties()
    oc = graph.output_code
    first_seen: set[str] = set()
    closure = _Closure(post, launches, placement, users, known, matcher)
    templates: dict[str, list[str]] = {}  # kernel -> _template, the same for all its launches
    # (kernel, its launch's comment in call()) -> the launch's nodes: launches of one kernel made
    # in one lowering (the query, key and value copies an attention call realizes) have the same
    # origins, so the same comment and the same nodes
    siblings: dict[tuple, set[str]] = {}
    views: set[str] | None = None  # _view_nodes, on first need
    written: dict[str, set[str]] = {}  # buffer -> the nodes of the launch that wrote it
    elements, reuses = _allocations(oc)
    kernels: dict[str, object] = {}  # kernel name -> its definition, the first of that name (as oc.kernel)
    for k in oc.kernels if oc is not None else ():
        kernels.setdefault(k.name, k)
    seen: set[str] = set()  # buffers passed so far
    first_aten: dict[str, tuple[str, ...]] = {}  # kernel -> its first launch's `Original ATen` in call()
    extern_ops = {la.kernel.split(".")[1] if la.kernel.startswith("extern_kernels.") else la.kernel
                  for la in launches if la.is_extern}
    made_for_call: dict[str, tuple[str, str]] = {}  # kernel -> (op, target) of the extern call it realizes the input of
    user_kernels = {k.name for k in oc.kernels if k.kind == "user"} if oc is not None else set()
    for i, la in enumerate(launches):
        said = (la.kernel, la.comments.source_nodes, la.comments.original_aten)
        if evidence[i]:
            first_seen.add(la.kernel)
        elif la.is_extern:
            sets[i], evidence[i] = matcher.extern(la, matcher.available(la, written, elements, reuses)), ORDER
            ties.note(i, sets[i], matcher.alternatives)
        elif la.kernel in user_kernels:  # the model's own @triton.jit kernel: its wrapper node, in graph order
            sets[i], evidence[i] = _user_kernel_node(matcher, la), ORDER
        else:
            template = templates.get(la.kernel)
            if template is None:
                template = templates[la.kernel] = _template(kernels.get(la.kernel), known)
            if la.kernel not in first_seen and template:
                sets[i], evidence[i] = set(template), COMMENTS
                matcher.claim(la.kernel, template, la.buffers)
                if made_for := _extern_node(template, known, extern_ops, matcher.extern_taken):
                    made_for_call[la.kernel] = made_for
                first_aten[la.kernel] = la.comments.original_aten
            elif la.comments.source_nodes and said in siblings:
                sets[i], evidence[i] = set(siblings[said]), COMMENTS
            elif template and (found := matcher.repeat(la.kernel, template, la.buffers,
                                                       matcher.available(la, written, elements, reuses))):
                sets[i], evidence[i] = found, STRUCTURE
                ties.note(i, found, matcher.alternatives)
                sets[i] = _without_ops_unsaid(found, first_aten.get(la.kernel, ()), la.comments.original_aten,
                                              known, users)
                if views is None:
                    views = _view_nodes(matcher, known)
                sets[i] |= _views_of_extern(found, known, matcher.extern_taken, views)
            elif op := _template_matmul(kernels.get(la.kernel), template, known):
                # a template's later launch its sub-graph was not found for (its first launch fused
                # another prologue: the embedding's layer norm): its matrix multiply, found as an
                # extern call's is, by what the launch is passed; the origins come below
                sets[i], evidence[i] = matcher.extern(la, matcher.available(la, written, elements, reuses), op), ORDER
                ties.note(i, sets[i], matcher.alternatives)
            elif (made_for := made_for_call.get(la.kernel)) and not any(
                    known[n].target == made_for[1] for n in la.comments.source_nodes if n in known):
                # a kernel made in an extern call's lowering (it realizes the call's input, and its
                # first launch lists the call's node): a later launch is made for the next call of
                # that op, and takes that call's origins below (Mixtral's expert inputs, gathered
                # and masked for each layer's grouped_mm_fallback). A comment that names the call's
                # node (a backward's names are the graph's own) places it below, as before.
                sets[i], evidence[i] = matcher.next_of(*made_for), ORDER
            elif hinted := {n for n in la.comments.source_nodes if n in known}:
                passed = {b for b in la.buffers if b in matcher.inputs}
                sets[i], evidence[i] = hinted | _recomputed(hinted, passed, known, matcher.extern_taken), COMMENTS
            else:  # no comments at all (C++ kernels): what this launch can compute from what is done
                sets[i], evidence[i] = closure.next_kernel(i), ORDER
                sets[i] |= _adds_bias(la, written, reuses, known, seen)
                if not sets[i]:  # a copy of a graph input (a cast, a layout) with no node of its own
                    sets[i] = {b for b in la.buffers if b in closure.inputs}
            first_seen.add(la.kernel)
            siblings.setdefault(said, sets[i])
        if evidence[i] == ORDER and la.is_extern and not la.kernel.startswith("extern_kernels."):
            sets[i] |= closure.view_inputs(sets[i])  # fallback kernels take their views' origins too
        closure.mark_done(i, sets[i])
        # what it writes: its outputs, its fusion group's buffers, and the buffers it is the first
        # to be passed (a buffer is allocated just before the launch that writes it)
        mine = sets[i]
        for b in la.outputs:
            written[b] = mine
        for node in placement.get(i, ()):
            for b in node.buffer_names:
                written[b] = mine
        for b in la.buffers:
            if b not in seen and b not in known:
                written[b] = mine
        seen.update(la.buffers)
    _with_origins(post, launches, sets, evidence, users, known, order,
                  {k.name for k in oc.kernels if k.kind == "template"} if oc is not None else set(), matcher)
    _with_constants(launches, sets, evidence, known, users, matcher)
    return sets, evidence, ties.of


def _user_kernel_node(matcher: Matcher, la) -> set[str]:
    """The higher-order node a user-defined Triton kernel's launch runs (one launch a node: Inductor
    never fuses into it), the next in graph order; Inductor makes the functional wrapper a mutation
    when it can reinplace its outputs."""
    for op in ("triton_kernel_wrapper_mutation", "triton_kernel_wrapper_functional"):
        if found := matcher.extern(la, None, op):
            return found
    return set()


class _Ties:
    """Launch index -> the other placements as good as the one taken (a tie the matcher broke by
    graph order). A later launch placed on one of them was in the same tie: it takes the earlier
    one's placement as its alternative (the key and the value copy of one attention, each either)."""

    def __init__(self) -> None:
        self.of: dict[int, tuple[frozenset[str], ...]] = {}
        self.offered: dict[frozenset[str], list[tuple[int, frozenset[str]]]] = {}  # alternative -> (launch, its set)

    def note(self, i: int, found: set[str], alternatives: list[frozenset[str]]) -> None:
        if not found or not (alternatives or self.offered):  # no tie yet, none now: nothing to note
            return
        mine = frozenset(found)
        alts = list(dict.fromkeys(a for a in alternatives if a != mine))
        alts += [s for _, s in self.offered.get(mine, ()) if s != mine and s not in alts]
        if alts:
            self.of[i] = tuple(alts)
        for a in alternatives:
            self.offered.setdefault(a, []).append((i, mine))


def _from_provenance(graph: GraphParse, launches, use_provenance: bool) -> tuple[list[set[str]], list[str]]:
    """The nodes PyTorch's provenance JSON gives each launch (empty, and no evidence, where none)."""
    sets: list[set[str]] = [set() for _ in launches]
    evidence = [""] * len(launches)
    prov = graph.provenance if use_provenance else None
    if prov is not None and prov.code_to_post:
        once = _launched_once(launches)
        for i, la in enumerate(launches):
            handle = la.comments.provenance_handle or f"{la.kernel}:{i + 1}"
            nodes = prov.code_to_post.get(handle)
            if nodes is None and la.kernel in once:  # torch 2.7: keyed by the kernel's name alone
                nodes = prov.code_to_post.get(la.kernel)
            if nodes is not None:
                sets[i] = set(nodes)
                evidence[i] = PROVENANCE
    return sets, evidence


def _with_origins(post: FxGraph, launches, sets: list[set[str]], evidence: list[str], users: dict[str, list[str]],
                  known: dict[str, FxNode], order: dict[str, int],
                  templates: set[str] | frozenset[str] = frozenset(), matcher: Matcher | None = None) -> None:
    """Extern calls, kernels placed by what they can compute (no comments) or by the call they are
    made for, and a template's later launches: their sets as Inductor's origins have them, with
    what was inlined into them (in place)."""
    guessed = [i for i, la in enumerate(launches) if sets[i] and (
        (la.is_extern and evidence[i] != PROVENANCE) or (not la.is_extern and evidence[i] == ORDER))]
    # a template's later launch (found by structure, or by what its first launch wrote): what its
    # matrix multiply gathered, as an extern call's origins; the first launch's comments list its own
    # (a prologue inlined into the input it realizes: the layer norm before a projection, in the
    # first projection that reads it only)
    templated = [i for i, la in enumerate(launches) if sets[i] and evidence[i] == STRUCTURE and la.kernel in templates]
    # a kernel that adds a convolution's bias: the pointwise made in the convolution's lowering
    # takes what the convolution gathered, which the first instance's template cannot show for a
    # later one (its convolution read a graph input, this one a block's output)
    # the graph's biased convolutions, found once: not tested again for every node of every launch
    targets = matcher.by_target if matcher is not None else {n.target for n in known.values()}
    convs = {name for name, n in known.items() if is_conv_with_bias(n)} if any(
        t.startswith("aten.convolution") for t in targets) else set()
    biased = [i for i in range(len(launches)) if evidence[i] in (STRUCTURE, COMMENTS)
              and not convs.isdisjoint(sets[i])] if convs else []
    if guessed or biased or templated:  # what Inductor inlined into the inputs it realized for the call (origins.py)
        alone = set()  # extern calls whose buffer is their node's result: the node alone, not the views it reads
        for i in guessed:
            if launches[i].is_extern and (own := {n for n in sets[i] if n in known
                                                  and returns_own_tensor(known[n], known, users)}):
                sets[i] = own
                alone.add(i)
        extern = {n for i, la in enumerate(launches) if la.is_extern for n in sets[i]}
        viewed = viewed_inputs(launches, known)
        origins = Origins(post.nodes, users, extern, viewed, known, order)
        for i in guessed:
            if i in alone:
                continue
            of = origins.of_extern if launches[i].is_extern else origins.of_call
            sets[i] = set().union(*(of(n) for n in sets[i]))
        for i in templated:
            sets[i] |= set().union(*(origins.of_call(n) for n in sets[i] if n in known
                                     and op_name(known[n].target) in MATMULS))
        for i in biased:
            gathered = set().union(*(origins.of_call(n) for n in sets[i] if n in convs))
            # a kernel's own comments list what its convolution gathered but the graph inputs it
            # saw through a view (the kernel does not read them); a later instance takes it all
            sets[i] |= gathered & viewed if evidence[i] == COMMENTS else gathered


def _with_constants(launches, sets: list[set[str]], evidence: list[str], known: dict[str, FxNode],
                    users: dict[str, list[str]], matcher: Matcher | None = None) -> None:
    """Constants (a `full` with no inputs) are never realized: Inductor inlines them into every
    kernel that reads them, which lists them among its origins (one zero shared by a backward's
    seventeen threshold_backward kernels); a template lists them, the other ways do not (in place)."""
    # through the graph's targets where the matcher has them, not a test of every node
    constants = {name for c in matcher.nodes_of(CONSTANT_OPS) if c.op == "call_function" and not c.args
                 and known.get(name := c.name) is c} if matcher is not None else {
        name for name, c in known.items() if c.op == "call_function" and not c.args and op_name(c.target) in CONSTANT_OPS}
    if not constants:
        return
    # node -> the constants it reads, from the constants' users: a launch looks up its nodes,
    # not every argument of every node of every launch
    reads: dict[str, list[str]] = {}
    for c in constants:
        for u in users.get(c, ()):
            if u not in reads and (node := known.get(u)) is not None:
                if read := [a for a in node.args if a in constants]:
                    reads[u] = read
    for i, la in enumerate(launches):
        if not la.is_extern and evidence[i] in (STRUCTURE, ORDER, COMMENTS) and sets[i]:
            sets[i] |= {a for n in sets[i] if (read := reads.get(n)) is not None for a in read}


# ops that make a constant from nothing, inlined wherever they are read
CONSTANT_OPS = {"full", "scalar_tensor"}


class _Closure:
    """For kernels with no comments: the post-grad nodes this launch can compute from the
    buffers its fusion group reads (graph inputs, or what earlier launches wrote), in graph
    order. Extern ops (mm, addmm, fallbacks) are left to the extern calls."""

    def __init__(self, post: FxGraph, launches, placement, users: dict[str, list[str]],
                 by_name: dict[str, FxNode], matcher: Matcher | None = None) -> None:
        self.matcher = matcher  # its index of the nodes by target, where the caller has one
        self.nodes = post.nodes
        self.by_name = by_name  # the nodes by name (the caller's `known`)
        self.launches = launches
        self.inputs = {n.name for n in post.nodes if n.op in ("placeholder", "get_attr")}
        self.done = set(self.inputs)
        self.placement = placement
        self.users = users
        self.sets: dict[int, set[str]] = {}

    # What only next_kernel and view_inputs need: not built when the provenance JSON or the
    # comments place every launch.
    @cached_property
    def transparent(self) -> set[str]:
        return {n.name for n in self.nodes if n.op == "call_function" and _transparent(n)}

    @cached_property
    def views(self) -> set[str]:
        # but an expanded view the graph returns: copied into a buffer of its own (origins.py)
        users = self.users
        nodes = self.matcher.nodes_of(VIEW_OPS) if self.matcher is not None else [
            n for n in self.nodes if op_name(n.target) in VIEW_OPS]
        return {n.name for n in nodes if n.op == "call_function"
                and not (op_name(n.target) == "expand" and "output" in users.get(n.name, ()))}

    @cached_property
    def remaining(self) -> list[tuple[str, frozenset[str]]]:
        """(name, its arguments) of the call nodes not yet computed, in graph order."""
        extern_ops = {la.kernel.split(".")[-1] if la.kernel.startswith("extern_kernels.") else la.kernel
                      for la in self.launches if la.is_extern}
        is_extern = {t: any(op_matches(t, op) for op in extern_ops) for t in {n.target for n in self.nodes}}
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


def _without_ops_unsaid(names: set[str], first: tuple[str, ...], said: tuple[str, ...], known: dict[str, FxNode],
                        users: dict[str, list[str]]) -> set[str]:
    """A later instance without the nodes of an op its launch's call() comment leaves out of its
    `Original ATen` where the kernel's first launch listed it, and the views that fed only them:
    the first instance recomputed them, this one reads their result from an earlier launch's buffer
    (Mixtral's second router kernel reads the residual add, add_13, that launch 38 made; the
    first listed aten.add, this one does not). Ops that a decomposition renamed (a layer norm's
    add) are in neither list and stay."""
    if not first or not said:
        return names
    unsaid = set(first).difference(said)
    if not unsaid:  # the usual case: the launch's comment lists the first launch's ops
        return names
    drop = {n for n in names if (node := known.get(n)) is not None and node.op == "call_function"
            and ".".join(node.target.split(".")[:2]) in unsaid}
    if not drop:
        return names
    changed = True
    while changed:  # the views of the instance that only fed what it dropped
        changed = False
        for n in names - drop:
            node = known[n]
            inside = [u for u in users.get(n, ()) if u in names]
            if op_name(node.target) in VIEW_OPS and inside and all(u in drop for u in inside):
                drop.add(n)
                changed = True
    kept = names - drop
    return kept or names


def _view_nodes(matcher: Matcher, known: dict[str, FxNode]) -> set[str]:
    """The views (and other ops that never copy) with an argument, by name (as `known` has them)."""
    return {n.name for n in matcher.nodes_of(VIEW_OPS) if n.op == "call_function" and n.args and known.get(n.name) is n}


def _views_of_extern(names: set[str], known: dict[str, FxNode], extern: set[str], views: set[str] | None = None
                     ) -> set[str]:
    """The views between an extern call's result and the nodes `names` that read it: never
    realized, Inductor inlines them into the kernel's indexing and gathers them among its origins
    (the value's copy of a grouped-query attention reads its projection's matrix multiply through
    a view, a view and a permute). A template from another instance (the key's copy, reading a
    kernel's result directly) cannot show them."""
    out: set[str] = set()
    if views is None:  # the views with an argument (Matcher.view_nodes), where the caller has none
        views = {name for name, node in known.items() if node.op == "call_function"
                 and op_name(node.target) in VIEW_OPS and node.args}
    # the views the nodes read (a chain from one is the same whichever node reads it): one set
    # operation over their arguments, then a walk per view, not a test per argument
    starts = views.intersection(chain.from_iterable([known[n].args for n in names]))
    for a in starts.difference(names):
        walked: list[str] = []
        while a not in names and a in views:
            walked.append(a)
            a = known[a].args[0]
        if a in extern:
            out.update(walked)
    return out


def _recomputed(names: set[str], passed: set[str], known: dict[str, FxNode], extern: set[str]) -> set[str]:
    """What the nodes `names` read that the launch can compute from the graph inputs it is passed
    (`passed`): Inductor recomputes it inside, and it is among the kernel's origins (a layer norm's
    backward recomputes the normalized input from the convolution's output, through its permute,
    where the launch's comment names them only as source nodes the graph lacks: `x_123`). Those
    inputs are why the launch is passed them; a buffer it is passed holds one of the nodes of the
    launch that wrote it, not all, and is not taken as computing one."""
    memo: dict[str, bool] = {}

    def computable(a: str) -> bool:
        if a in passed or a in names:
            return True
        hit = memo.get(a)
        if hit is None:
            node = known.get(a)
            memo[a] = False  # a cycle is not computable
            hit = memo[a] = (node is not None and node.op == "call_function" and a not in extern
                             and op_name(node.target) not in MATMULS and node.target != "operator.getitem"
                             and all(computable(x) for x in node.args
                                     if (k := known.get(x)) is not None and k.dtype != "Sym"))
        return hit

    out: set[str] = set()
    stack = [a for n in names for a in known[n].args]
    while stack:
        a = stack.pop()
        if a in out or a in names or a in passed or a not in known or not computable(a):
            continue
        out.add(a)
        stack.extend(known[a].args)
    return out


def _adds_bias(la, written: dict[str, set[str]], reuses: dict[str, str], known: dict[str, FxNode],
               seen: set[str]) -> set[str]:
    """The convolutions whose bias launch `la` adds: it is the first passed a buffer that reuses
    their extern call's (`buf13 = buf12; del buf12  # reuse`), which it updates in place. The
    pointwise adding it was made in the convolution's lowering and may be realized apart (a
    result the backward saves), then fused with what reads it; the closure sees only the nodes
    after it."""
    return {n for b in la.buffers if b not in seen and (r := reuses.get(b)) is not None for n in written.get(r, ())
            if n in known and is_conv_with_bias(known[n])}


def _allocations(oc) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """Buffer -> (the call's buffer, its index) of `buf16 = buf15[0]` in call(), and buffer -> the
    buffer it reuses (`buf88 = buf87; del buf87  # reuse`): one pass over the allocations."""
    elements, reuses = {}, {}
    for a in oc.allocations if oc is not None else ():
        if a.kind == "element":
            parent, _, k = a.reused_from.partition("[")
            elements[a.name] = parent, k.rstrip("]")
        elif a.kind == "reuse":
            reuses[a.name] = a.reused_from
    return elements, reuses


def _launched_once(launches) -> set[str]:
    return {k for k, n in Counter(la.kernel for la in launches).items() if n == 1}


def _transparent(n: FxNode) -> bool:
    """Nodes that never need a kernel of their own (views, tuple elements, symbolic sizes)."""
    return bool(no_kernel_reason(n, (1,)))


def _template_matmul(kernel, template: list[str], known: dict[str, FxNode]) -> str | None:
    """The op of a template kernel's matrix multiply (`addmm`), from its first launch's nodes; None
    for another kernel."""
    if kernel is None or kernel.kind != "template":
        return None
    return next((op for n in template if (op := op_name(known[n].target)) in MATMULS), None)


def _extern_node(template: list[str], known: dict[str, FxNode], extern_ops: set[str], taken: set[str]
                 ) -> tuple[str, str] | None:
    """(op, target) of a node of a kernel's first launch that an extern call of the graph computes
    later (none has taken it yet: the kernel realizes the call's input, where a kernel that adds a
    convolution's bias comes after it); None when there is none."""
    for n in template:
        target = known[n].target
        for op in extern_ops:
            if n not in taken and op_matches(target, op):
                return op, target
    return None


def _template(kernel, known: set[str]) -> list[str]:
    if kernel is None:
        return []
    names = [n for _, nodes in kernel.comments.source_to_aten for n in nodes if n in known]
    if not names:  # older comments: the source node names are the post-grad names
        names = [n for n in kernel.comments.source_nodes if n in known]
    # the graph fragment lists the kernel's nodes too, those with no source node among them
    # (the `le` mask a relu saves for its backward, a clone of a parameter)
    seen = set(names)
    for line in kernel.comments.graph_fragment:  # `%relu_2 : [num_users=2] = call_function[...](...)`
        if line.startswith("%") and "= call_function[" in line:
            name = line[1:line.find(" ")]
            if name in known and name not in seen:
                names.append(name)
                seen.add(name)
    return names

def inherit_tuple_elements(post: FxGraph | None, found: dict[str, tuple[int, ...]]) -> None:
    """`getitem` of a multi-output node runs in the kernels of its parent (or of its users)."""
    if post is None:
        return
    for n in post.nodes:
        if n.target == "operator.getitem" and n.name not in found and n.args:
            parent = found.get(n.args[0])
            if parent:
                found[n.name] = parent  # read only from here on
