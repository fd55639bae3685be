"""What the linking layer returns: one index per compiled graph, answering both ways
user source line <-> AOT FX node <-> post-grad FX node <-> scheduler node <-> fusion group
<-> kernel <-> launch."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field

from compile_viz.artifacts.frozen import frozen

AOT = "aot_graph"  # fx_graph_readable.py: the artifact's name in artifacts/kinds.py
POST_GRAD = "post_grad_graph"  # fx_graph_transformed.py, likewise

# What a link rests on (LaunchLink.basis): PyTorch's own record, or our inference without it.
PROVENANCE = "provenance"  # the provenance JSON (torch >= 2.8 with the trace, or INDUCTOR_PROVENANCE=1)
STACK_TRACES = "stack_traces"  # the trace's per-launch user stacks (inductor_provenance_tracking_kernel_stack_traces)
INFERRED = "inferred"  # Inductor's comments, the graph's structure and the buffers a launch passes
EXACT_HINT = "capture with torch ≥ 2.8 and the trace (TORCH_TRACE) to make them exact"


@frozen(slots=True)
class Basis:
    """What one launch's links rest on, per field: its nodes (post-grad, and the AOT nodes read from
    them) and its source lines."""

    nodes: str  # PROVENANCE | INFERRED
    source_lines: str  # STACK_TRACES | PROVENANCE (the lines of the JSON's nodes) | INFERRED

    @property
    def inferred(self) -> bool:
        """Whether any of its links is inferred."""
        return INFERRED in (self.nodes, self.source_lines)


# the few there are, made once and shared by every launch
BASES = {(n, s): Basis(n, s) for n in (PROVENANCE, INFERRED) for s in (STACK_TRACES, PROVENANCE, INFERRED)}


@frozen(slots=True)
class LaunchLink:
    """One launch in call() with everything it was made from."""

    index: int  # position in call()
    kernel: str  # kernel definition name, or e.g. "extern_kernels.mm"
    is_extern: bool
    kind: str  # pointwise | reduction | persistent_reduction | template | foreach | cpp | extern | ...
    post_grad_nodes: tuple[str, ...]  # in graph order
    fx_nodes: tuple[str, ...]  # AOT graph nodes, in graph order
    scheduler_nodes: tuple[str, ...]  # pre-fusion scheduler nodes it runs
    fusion_group: str  # post-fusion node it runs ("op1_op2_op3", or "op0" when not fused)
    buffers: tuple[str, ...]  # buffers it writes (of its fusion group)
    source_lines: tuple[tuple[str, int], ...]  # user (file, line) pairs, sorted
    evidence: str  # provenance | comments | structure | order : how the post-grad nodes were found
    line: int  # line of the launch in output_code.py
    basis: Basis = BASES[(INFERRED, INFERRED)]  # what its nodes and source lines rest on
    # with `evidence`, where the inference was uncertain: the other placements of its nodes as good
    # as the one taken (fed what the launch is passed, as it is), which graph order decided
    # between; an extern call's as its op's node alone. Empty when nothing else fitted as well
    alternatives: tuple[tuple[str, ...], ...] = ()


@frozen(slots=True)
class NodeLink:
    """Where one FX node went."""

    name: str
    graph: str  # AOT | POST_GRAD
    launches: tuple[int, ...]  # launch indices
    no_kernel_reason: str  # "" when it has launches


class NodeLinks(Mapping):
    """(graph, name) -> NodeLink for every node of both FX graphs.

    The linker stores each node's launches and no-kernel reason, per graph by name (no (graph,
    name) key made for each of the thousands of nodes); the NodeLink is made on first lookup and
    kept (a view asks for a few hundred of the 5,000 nodes of a training step).
    """

    __slots__ = ("_raw", "_made")

    def __init__(self, raw: dict[str, dict[str, tuple[tuple[int, ...], str]]]) -> None:
        self._raw = raw  # graph -> node name -> (launches, no-kernel reason), graphs in the order iterated
        self._made: dict[tuple[str, str], NodeLink] = {}

    def __getitem__(self, key: tuple[str, str]) -> NodeLink:
        link = self._made.get(key)
        if link is None:
            graph, name = key
            launches, reason = self._raw[graph][name]
            link = self._made[key] = NodeLink(name, graph, launches, reason)
        return link

    def get(self, key: tuple[str, str], default: NodeLink | None = None) -> NodeLink | None:
        return self[key] if key in self else default

    def __contains__(self, key: object) -> bool:
        if type(key) is not tuple or len(key) != 2:
            return False
        by_name = self._raw.get(key[0])
        return by_name is not None and key[1] in by_name

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return ((graph, name) for graph, by_name in self._raw.items() for name in by_name)

    def raw_items(self) -> Iterator[tuple[tuple[str, str], tuple[tuple[int, ...], str]]]:
        """((graph, name), (launches, no-kernel reason)) of every node, without making NodeLinks."""
        return (((graph, name), value) for graph, by_name in self._raw.items() for name, value in by_name.items())

    def by_graph(self) -> Iterator[tuple[str, dict[str, tuple[tuple[int, ...], str]]]]:
        """(graph, its nodes' (launches, no-kernel reason) by name), without making NodeLinks
        (`parse --json` writes all of them: 20,000 on a 48-layer training step)."""
        return iter(self._raw.items())

    def __len__(self) -> int:
        return sum(map(len, self._raw.values()))

    def __repr__(self) -> str:
        return f"NodeLinks({dict(self.items())!r})"


@frozen(slots=True)
class GroupLink:
    """A post-fusion scheduler node (a fusion group, or a single node) and what became of it."""

    name: str
    kind: str  # fused | scheduler | extern | foreach | template | nop | ...
    members: tuple[str, ...]  # pre-fusion scheduler nodes, in order
    buffers: tuple[str, ...]  # buffers its members write
    fused_away: tuple[str, ...]  # of those, the ones only read inside the group: never reach memory
    launches: tuple[int, ...]


@frozen(slots=True)
class GraphSummary:
    """What one graph holds and how much fused: its ops, kernels, launches and groups, counted."""

    fx_ops: int  # call_function nodes of the AOT graph
    post_grad_ops: int
    kernels: int  # kernel definitions
    launches: int  # launches of defined kernels
    extern_calls: int
    fusion_groups: int  # groups with more than one member
    ops_per_kernel: float  # post-grad ops mapped to kernel launches / kernel launches


@frozen
class GraphIndex:
    """The links of one compiled graph; lookups go both ways."""

    graph_id: str
    launches: tuple[LaunchLink, ...]
    nodes: Mapping[tuple[str, str], NodeLink]  # (graph, name) -> link; a NodeLinks from the linker
    groups: tuple[GroupLink, ...]
    summary: GraphSummary
    warnings: tuple[str, ...] = field(default=())

    def node(self, name: str, graph: str = POST_GRAD) -> NodeLink | None:
        return self.nodes.get((graph, name))

    def launches_of_kernel(self, kernel: str) -> tuple[LaunchLink, ...]:
        return tuple(la for la in self.launches if la.kernel == kernel)

    def launches_of_node(self, name: str, graph: str = POST_GRAD) -> tuple[LaunchLink, ...]:
        link = self.nodes.get((graph, name))
        return tuple(self.launches[i] for i in link.launches) if link else ()

    def launches_of_line(self, file: str, line: int) -> tuple[LaunchLink, ...]:
        return tuple(la for la in self.launches if (file, line) in la.source_lines)

    def group(self, name: str) -> GroupLink | None:
        for g in self.groups:
            if g.name == name:
                return g
        return None
