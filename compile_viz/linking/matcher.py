"""Finding a kernel's sub-graph again in the post-grad graph (later launches of the same kernel),
and the post-grad node behind an extern call, in graph order."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict

from compile_viz.artifacts.model import FxGraph, FxNode, KernelLaunch


class Matcher:
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
            targets = self.targets[op] = [t for t in self.by_target if op_matches(t, op)]
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


def op_matches(target: str, op: str) -> bool:
    """`aten.mm.default` matches extern op `mm`; a fallback `aten.foo.default` matches itself."""
    if target == op:
        return True
    parts = target.split(".")
    return len(parts) >= 2 and parts[1] == op
