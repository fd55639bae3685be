"""Inductor's fusion decisions joined to launches: why two kernels stayed apart, how one was built.

The fusion log names scheduler nodes as Inductor did at that moment: `op2`, a fused `op2_op3`,
or (torch 2.0 to 2.4) `buf2_buf3`. A name's members are the scheduler nodes it is made of; a
launch's members are the scheduler nodes of its fusion group (`LaunchLink.scheduler_nodes`).
"""

from __future__ import annotations

from collections import Counter

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.model import Dependency, FusionDecisions, FusionPair, GraphParse, SchedulerNode
from compile_viz.artifacts.versions import members_from_name
from compile_viz.linking.model import GraphIndex


def members(name: str) -> tuple[str, ...]:
    """`op1_op2_op3` -> (op1, op2, op3); a name of another shape is its own only member."""
    return members_from_name(name) or (name,)


# refusals that mean "scored 0 in score_fusion_memory": no read or write the two make alike
NO_SHARED_KINDS = ("no_shared_data", "indexing_mismatch")


@frozen(slots=True)
class Access:
    """How one scheduler node touches a buffer: one read or write dependency of ir_pre_fusion.txt."""

    node: str
    write: bool
    dep: Dependency  # MemoryDep('buf2', c0 + 64*c1, {c0: 8, c1: 64}): buffer, index and ranges


@frozen(slots=True)
class SharedBuffer:
    """A buffer both sides of a pair read or write, and every access each side makes to it."""

    buffer: str
    first: tuple[Access, ...]
    second: tuple[Access, ...]

    @property
    def same_access(self) -> bool:
        """Whether one access is made alike by both (the same kind, index and ranges): Inductor would score it."""
        return bool({_key(x) for x in self.first} & {_key(x) for x in self.second})


def _key(x: Access) -> tuple[str, str, str]:
    return x.dep.kind, x.dep.index, x.dep.ranges


@frozen(slots=True)
class WhySeparate:
    """The answer to "why are launches a and b separate kernels?"."""

    a: int
    b: int
    pairs: tuple[FusionPair, ...]  # every pair Inductor considered between their members, in log order
    never: str  # when no pair was considered: why that happens here, in plain words; else ""
    same_kernel: bool  # a and b launch one fused node (the same group): nothing was refused
    between: tuple[int, ...] = ()  # launches that run between them on a path from one to the other
    # per refused pair that scored no shared data, (first, second, the buffers both touch), in log order
    shared: tuple[tuple[str, str, tuple[SharedBuffer, ...]], ...] = ()


def launch_members(index: GraphIndex, launch: int) -> set[str]:
    la = index.launches[launch]
    return set(la.scheduler_nodes) or ({la.fusion_group} if la.fusion_group else set())


def pairs_between(decisions: FusionDecisions, left: set[str], right: set[str]) -> tuple[FusionPair, ...]:
    """The fused and refused pairs with one side in `left` and the other in `right`."""
    out = []
    for p in sorted(decisions.fused + decisions.refused, key=lambda p: p.line):
        one, two = set(members(p.first)), set(members(p.second))
        if (one & left and two & right) or (one & right and two & left):
            out.append(p)
    return tuple(out)


def why_separate(graph: GraphParse, index: GraphIndex, decisions: FusionDecisions, a: int, b: int) -> WhySeparate:
    left, right = launch_members(index, a), launch_members(index, b)
    if left and left == right:
        return WhySeparate(a, b, (), "", True)
    pairs = pairs_between(decisions, left, right)
    between = _between(graph, min(a, b), max(a, b)) if any(p.kind == "intermediate_nodes" for p in pairs) else ()
    return WhySeparate(a, b, pairs, "" if pairs else _never(graph, index, a, b), False, between,
                       _shared_of_refusals(graph, pairs))


def _shared_of_refusals(graph: GraphParse, pairs: tuple[FusionPair, ...]):
    """(first, second, shared buffers) of each distinct pair refused for no shared data."""
    if graph.pre_fusion is None:
        return ()
    nodes = {n.name: n for n in graph.pre_fusion.nodes}
    seen = {}
    for p in pairs:
        if not p.result and p.kind in NO_SHARED_KINDS and (p.first, p.second) not in seen:
            seen[p.first, p.second] = shared_buffers(nodes, p.first, p.second)
    return tuple((first, second, found) for (first, second), found in seen.items())


def shared_buffers(nodes: dict[str, SchedulerNode], first: str, second: str) -> tuple[SharedBuffer, ...]:
    """The buffers both named nodes (fused names included: `op2_op3`) read or write, with each side's
    accesses, from the pre-fusion read/write dependencies. A read of a buffer its own side writes is
    inside a fused node, and left out, as Inductor's fused node leaves it out of its reads."""
    one, two = _accesses(nodes, first), _accesses(nodes, second)
    return tuple(SharedBuffer(buf, tuple(one[buf]), tuple(two[buf])) for buf in one if buf in two)


def _accesses(nodes: dict[str, SchedulerNode], name: str) -> dict[str, list[Access]]:
    parts = [nodes[m] for m in members(name) if m in nodes]
    written = {d.buffer for n in parts for d in n.writes}
    out: dict[str, list[Access]] = {}
    for n in parts:
        for d in n.writes:
            out.setdefault(d.buffer, []).append(Access(n.name, True, d))
        for d in n.reads:
            if d.buffer not in written:
                out.setdefault(d.buffer, []).append(Access(n.name, False, d))
    return out


def _between(graph: GraphParse, a: int, b: int) -> tuple[int, ...]:
    """Launches after a and before b that touch a buffer of a's and a buffer of b's: the
    intermediate nodes that kept a and b apart (one step of the path; enough to name them)."""
    oc = graph.output_code
    if oc is None or b >= len(oc.launches):
        return ()
    buffers = _call_buffers(graph)
    first, last = buffers(a), buffers(b)
    return tuple(c for c in range(a + 1, b) if (mid := buffers(c)) & first and mid & last)


def _call_buffers(graph: GraphParse):
    """Return launch index -> the buffers it passes in call(), a reused one by its first name
    (`buf5 = buf4; del buf4  # reuse`); none for a launch call() does not have."""
    oc = graph.output_code
    launches = oc.launches if oc else ()
    same = {x.name: x.reused_from for x in oc.allocations if x.kind == "reuse" and x.reused_from} if oc else {}

    def roots(i: int) -> set[str]:
        out = set()
        for name in launches[i].buffers if i < len(launches) else ():
            while name in same:
                name = same[name]
            out.add(name)
        return out
    return roots


def _never(graph: GraphParse, index: GraphIndex, a: int, b: int) -> str:
    """Why Inductor never weighed these two as a pair, from what the graph says of them."""
    la, lb = index.launches[a], index.launches[b]
    if la.is_extern or lb.is_extern:
        which = la if la.is_extern else lb
        return (f"{which.kernel} is an extern call (a library kernel): Inductor fuses only the kernels it "
                "generates, so it never pairs an extern call with anything. With max_autotune on, a matrix "
                "multiply can become a Triton template, which can take a pointwise epilogue.")
    # what the IR says they read and write, and what call() passes both: either one is shared data
    shared = (set(la.buffers) & _reads(graph, lb)) | (set(lb.buffers) & _reads(graph, la))
    buffers = _call_buffers(graph)
    shared |= (_reads(graph, la) & _reads(graph, lb)) | (buffers(a) & buffers(b))
    if not shared:
        return ("They share no data: neither reads what the other writes, they read no buffer in common, and "
                "call() passes them no buffer in common. Inductor only weighs pairs that share data (fusing "
                "them would save no memory traffic).")
    names = ", ".join(sorted(shared)[:4]) + (" …" if len(shared) > 4 else "")
    return (f"They share data ({names}), but were never candidates in the same round: by the time one of them "
            "existed the other had already been fused into a node that could not take it, or the candidate order "
            "(nodes are weighed against their neighbours by shared buffers, best score first) never got to them.")


def _reads(graph: GraphParse, launch) -> set[str]:
    """The buffers the scheduler nodes of a launch read (from the pre-fusion IR)."""
    pre = graph.pre_fusion
    if pre is None:
        return set()
    names = set(launch.scheduler_nodes)
    return {d.buffer for n in pre.nodes if n.name in names for d in n.reads}


def fusion_story(index: GraphIndex, decisions: FusionDecisions, launch: int) -> tuple[FusionPair, ...]:
    """The fusions that built the node launch `launch` runs, in the order Inductor made them."""
    mine = launch_members(index, launch)
    return tuple(p for p in decisions.fused if set(members(p.result)) <= mine)


def refusals_by_kind(decisions: FusionDecisions) -> list[tuple[str, int]]:
    """(reason kind, how many refused pairs) from most to least frequent."""
    return Counter(p.kind for p in decisions.refused).most_common()


def unknown_names(graph: GraphParse, decisions: FusionDecisions) -> list[str]:
    """Names in the decisions that are neither a pre-fusion scheduler node nor made by an earlier
    fusion: [] on a log that belongs to this graph."""
    known = {n.name for n in graph.pre_fusion.nodes} if graph.pre_fusion else set()
    made: set[str] = set()
    bad = []
    for p in sorted(decisions.fused + decisions.refused, key=lambda p: p.line):
        for name in (p.first, p.second):
            if name not in known and name not in made and not set(members(name)) <= known:
                bad.append(name)
        if p.result:
            made.add(p.result)
    return bad
