"""What a selection (?kernel=, ?launch=, ?node=) lights up, from the index alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from compile_viz.linking.model import AOT, GraphIndex


@dataclass(frozen=True)
class Selection:
    kernel: str = ""  # kernel (or extern call) name; "" = nothing selected
    launches: frozenset[int] = field(default_factory=frozenset)
    nodes: frozenset[str] = field(default_factory=frozenset)  # in the graph being shown
    node: str = ""  # the node picked, if one was
    source_lines: tuple[tuple[str, int], ...] = ()
    groups: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.kernel or self.node)


def select(index: GraphIndex, graph: str, *, kernel: str = "", launch: int | None = None,
           node: str = "") -> Selection:
    """Return the selection: a launch, or every launch of `kernel`, or the launches of `node`.

    An FX node selects its kernel (its first launch's) when no kernel is given.
    """
    launches: tuple[int, ...] = ()
    if launch is not None and 0 <= launch < len(index.launches) and (not kernel or index.launches[launch].kernel == kernel):
        launches = (launch,)
    elif kernel:
        launches = tuple(la.index for la in index.launches_of_kernel(kernel))
    elif node:
        link = index.node(node, graph)
        if link and link.launches:
            launches = (link.launches[0],)
    chosen = [index.launches[i] for i in launches if i < len(index.launches)]
    if chosen and not kernel:
        kernel = chosen[0].kernel
    nodes = {n for la in chosen for n in (la.fx_nodes if graph == AOT else la.post_grad_nodes)}
    if node:
        nodes.add(node)
    lines = sorted({ln for la in chosen for ln in la.source_lines})
    groups = tuple(dict.fromkeys(la.fusion_group for la in chosen if la.fusion_group))
    return Selection(kernel, frozenset(launches), frozenset(nodes), node, tuple(lines), groups)
