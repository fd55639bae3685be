"""One graph of a run as plain data for the shared page: its launches with their kernel, FX nodes,
source lines and links' basis, the kernels' source, its fusion groups and Inductor's refused pairs.

Only JSON values (lists, dicts, strings, numbers): the page reads them with JSON.parse and puts
every string in with textContent, so no artifact text is ever read as HTML. Lists are positional to
keep the file small (the keys are documented where each is made).
"""

from __future__ import annotations

from compile_viz.artifacts.model import FusionDecisions, GraphParse
from compile_viz.linking.fusion import members
from compile_viz.linking.model import AOT, POST_GRAD, GraphIndex, LaunchLink
from compile_viz.render.code_html import kernel_language
from compile_viz.render.fusion import _short
from compile_viz.render.fx_dot import shape_text, short_target
from compile_viz.render.panels import basis_text, kernel_meta_rows

MAX_PAIRS = 20000  # refused pairs kept per graph (a 48-layer backward weighs ~10^4)


class Files:
    """The source files a run's launches name, each once: file -> its number in the page's list."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._ids: dict[str, int] = {}

    def id(self, name: str) -> int:
        if name not in self._ids:
            self._ids[name] = len(self.names)
            self.names.append(name)
        return self._ids[name]


def fx_name(graph: GraphParse) -> str:
    """The FX graph drawn and listed: post-grad when the graph has one, else the AOT graph."""
    return POST_GRAD if graph.post_grad_graph is not None else AOT


def graph_data(graph: GraphParse, index: GraphIndex, files: Files) -> dict:
    """The page's data of one graph (drawings and labels are added by the caller)."""
    name = fx_name(graph)
    fx = graph.artifact(name)
    nodes = fx.nodes if fx is not None else ()
    position = {n.name: k for k, n in enumerate(nodes)}
    kernels, kernel_ids = _kernels(graph, index)
    bases: dict[str, int] = {}  # a handful of sentences, said once each
    return {
        # nodes: [name, "target f32[8, 64]"], in the graph's order (a drawing's cvn{k} is nodes[k])
        "nodes": [[n.name, f"{short_target(n.target) or n.op} {shape_text(n)}".strip()] for n in nodes],
        "launches": [_launch(la, name, position, kernel_ids, files, bases) for la in index.launches],
        "bases": list(bases),
        "kernels": kernels,
        "snippets": _snippets(graph, index, files),
        "groups": [[g.name, g.kind, len(g.members), list(g.buffers[:12]), len(g.buffers), list(g.fused_away[:12]),
                    len(g.fused_away), list(g.launches)] for g in index.groups],
        "fusion": _fusion(graph.fusion_decisions, index),
    }


def _launch(la: LaunchLink, graph: str, position: dict[str, int], kernel_ids: dict[str, int], files: Files,
            bases: dict[str, int]) -> list:
    """[kernel name, kind, kernel number (-1: extern), node positions, [[file, line]], fusion group,
    what its links rest on (a sentence's number in `bases`), inferred (0/1), its line in output_code.py]."""
    names = la.post_grad_nodes if graph == POST_GRAD else la.fx_nodes
    basis = bases.setdefault(basis_text(la), len(bases))
    return [la.kernel, la.kind, kernel_ids.get(la.kernel, -1), [position[n] for n in names if n in position],
            [[files.id(f), line] for f, line in la.source_lines], la.fusion_group, basis, int(la.basis.inferred), la.line]


def _kernels(graph: GraphParse, index: GraphIndex) -> tuple[list, dict[str, int]]:
    """[name, language, first line in output_code.py, source, [[fact, value]]] of each kernel a
    launch runs, and name -> its number."""
    oc = graph.output_code
    out, ids = [], {}
    for la in index.launches:
        if la.kernel in ids or oc is None:
            continue
        k = oc.kernel(la.kernel)
        if k is None:
            continue
        # the facts its comments give; not the decorator's (size hints, signature...), which is in
        # the source shown right below and took a seventh of a 12-layer run's time to read (ast)
        rows = [[r.label, r.value] for r in kernel_meta_rows(k, None, la.kind)]
        ids[la.kernel] = len(out)
        out.append([k.name, kernel_language(k.backend), k.source_line, k.source, rows])
    return out, ids


def _snippets(graph: GraphParse, index: GraphIndex, files: Files) -> list:
    """[[file, line, code]] of each source line of a launch that the FX graphs quote (`# File: ...
    code: ...`), looked for until every one is found."""
    wanted = {fl for la in index.launches for fl in la.source_lines}
    found: dict[tuple[str, int], str] = {}
    for fx in (graph.aot_graph, graph.post_grad_graph):
        for n in fx.nodes if fx is not None else ():
            src = n.source
            if src and (src.file, src.line) in wanted:
                found.setdefault((src.file, src.line), src.code)
                if len(found) == len(wanted):
                    return [[files.id(f), line, code] for (f, line), code in found.items()]
    return [[files.id(f), line, code] for (f, line), code in found.items()]


def _fusion(decisions: FusionDecisions | None, index: GraphIndex) -> dict | None:
    """Inductor's fusion decisions: counts, and each distinct refused pair as [round, first,
    second, reason, kind, first's launch, second's launch] (-1: no launch runs it)."""
    if decisions is None:
        return None
    launch_of = {m: la.index for la in index.launches for m in (la.scheduler_nodes or (la.fusion_group,)) if m}
    named: dict[str, tuple[str, int]] = {}  # a node's name as shown, and its launch: the same names come back

    def node(name: str) -> tuple[str, int]:
        if name not in named:
            launch = next((launch_of[m] for m in members(name) if m in launch_of), -1)
            named[name] = (_short(name), launch)
        return named[name]

    seen, pairs = set(), []
    for p in decisions.refused:
        key = (p.round, p.first, p.second, p.reason)
        if key in seen:
            continue
        seen.add(key)
        if len(pairs) < MAX_PAIRS:
            (first, a), (second, b) = node(p.first), node(p.second)
            pairs.append([p.round, first, second, p.reason, p.kind, a, b])
    return {"rounds": len(decisions.rounds), "fused": len(decisions.fused), "refused": len(decisions.refused),
            "distinct": len(seen), "pairs": pairs}
