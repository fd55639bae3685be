"""HTML panels beside the graph: fusion groups, a kernel's metadata and launches, the user's source.

Pure functions of the parse and the index; every artifact string is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from compile_viz.artifacts.model import FxGraph, Kernel, KernelLaunch
from compile_viz.linking.model import EXACT_HINT, INFERRED, PROVENANCE, STACK_TRACES, GraphIndex, LaunchLink
from compile_viz.render.code_html import CODE_PX, highlight_code, plain_lines_html
from compile_viz.render.palette import SELECTED, kind_color, kind_label

_TABLE = ('<div style="overflow:auto;max-height:{h}px;border:1px solid #ddd;border-radius:4px">'
          '<table class="cv-table" style="border-collapse:collapse;font-size:12px;width:100%">{rows}</table></div>')
_TD = 'style="border-bottom:1px solid #eee;padding:3px 6px;vertical-align:top"'


def _names(items: tuple[str, ...] | list[str], limit: int = 12) -> str:
    shown = ", ".join(escape(i) for i in items[:limit])
    return shown + (f" … (+{len(items) - limit})" if len(items) > limit else "")


def _chip(kind: str) -> str:
    return (f'<span style="background:{kind_color(kind)};border:1px solid #999;border-radius:3px;'
            f'padding:0 4px;white-space:nowrap">{escape(kind_label(kind))}</span>')


# A 48-layer backward has 600 groups: the first ones, and the selection's always (the box shows ~12;
# 150 rows cost ~0.05 s more of every page load in the browser).
MAX_GROUP_ROWS = 50


def groups_html(index: GraphIndex, selected_launches: frozenset[int], *, height_px: int = 360,
                limit: int = MAX_GROUP_ROWS) -> str:
    """Return the fusion-group table: members, buffers written, fused away, kernels; selected rows
    marked. At most `limit` rows besides the selected ones, then a row saying how many are left."""
    head = ("<tr>" + "".join(f"<th {_TD} align=left>{h}</th>" for h in
                             ("group", "kind", "members", "writes", "fused away", "kernel")) + "</tr>")
    rows = [head]
    left_out = 0
    for g in index.groups:
        selected = bool(set(g.launches) & selected_launches)
        if not selected and len(rows) > limit:
            left_out += 1
            continue
        kernels = [index.launches[i] for i in g.launches if i < len(index.launches)]
        kinds = {la.kind for la in kernels}
        style = f' style="outline:2px solid {SELECTED};background:#fff5f5"' if selected else ""
        kernel_cells = "<br>".join(f"#{la.index} {escape(la.kernel)}" for la in kernels) or "—"
        rows.append(
            f'<tr class="cv-group{" cv-selected" if selected else ""}"{style}>'
            f"<td {_TD}><code>{escape(g.name)}</code></td>"
            f"<td {_TD}>{' '.join(_chip(k) for k in sorted(kinds)) or escape(g.kind)}</td>"
            f"<td {_TD}>{_names(g.members)}</td><td {_TD}>{_names(g.buffers)}</td>"
            f"<td {_TD}>{_names(g.fused_away) or '—'}</td><td {_TD}>{kernel_cells}</td></tr>")
    if len(rows) == 1:
        rows.append(f"<tr><td {_TD} colspan=6>No fusion groups linked for this graph.</td></tr>")
    if left_out:
        rows.append(f"<tr><td {_TD} colspan=6>… and {left_out} more groups: select a kernel to see its own.</td></tr>")
    return _TABLE.format(h=height_px, rows="".join(rows))


@dataclass(frozen=True)
class MetaRow:
    label: str
    value: str


def kernel_meta_rows(kernel: Kernel | None, meta: object | None, kind: str) -> list[MetaRow]:
    """Return the facts shown above a kernel's code (kind, size hints, loads/stores, mutated args)."""
    rows = [MetaRow("kind", kind_label(kind))]
    if kernel is None:
        return rows
    rows.append(MetaRow("backend", kernel.backend))
    if meta is not None:
        if meta.size_hints:
            rows.append(MetaRow("size hints", ", ".join(f"{k}={v}" for k, v in meta.size_hints.items())
                                if isinstance(meta.size_hints, dict) else str(meta.size_hints)))
        counts = [(k, meta.count(k)) for k in ("num_load", "num_store", "num_reduction")]
        if any(v is not None for _, v in counts):
            rows.append(MetaRow("loads / stores / reductions", " / ".join("?" if v is None else str(v) for _, v in counts)))
        if meta.mutated_args:
            rows.append(MetaRow("mutated args", ", ".join(map(str, meta.mutated_args))))
        if meta.signature:
            rows.append(MetaRow("signature", ", ".join(f"{k}: {v}" for k, v in meta.signature.items())))
    if kernel.comments.source_nodes:
        rows.append(MetaRow("source nodes", ", ".join(kernel.comments.source_nodes)))
    if kernel.comments.original_aten:
        rows.append(MetaRow("original ATen", ", ".join(kernel.comments.original_aten)))
    return rows


def meta_table_html(rows: list[MetaRow]) -> str:
    """Return the rows as a small two-column table, escaped."""
    body = "".join(f"<tr><th {_TD} align=left>{escape(r.label)}</th><td {_TD}><code>{escape(r.value)}</code></td></tr>"
                   for r in rows)
    return f'<table class="cv-meta" style="border-collapse:collapse;font-size:12px">{body}</table>'


# how an inferred launch's nodes were found (LaunchLink.evidence), for a person
_EVIDENCE_WORDS = {"comments": "the kernel's own comments", "structure": "its sub-graph found again in the graph",
                   "order": "what it can compute, in graph order"}
_BASIS_WORDS = {PROVENANCE: "PyTorch's provenance", STACK_TRACES: "the trace's user stacks", INFERRED: "inferred"}


def alternatives_text(launch: LaunchLink, most: int = 8) -> str:
    """Return the placements as good as the one taken, when the inference was uncertain (a tie
    graph order broke); '' when it was not."""
    if not launch.alternatives:
        return ""
    each = ["[" + ", ".join(a[:most]) + (f", … +{len(a) - most}" if len(a) > most else "") + "]"
            for a in launch.alternatives]
    return (f"uncertain: {'another placement fits' if len(each) == 1 else f'{len(each)} other placements fit'}"
            f" as well, graph order chose this one; the other{'' if len(each) == 1 else 's'}: {'; '.join(each)}")


def _basis_words(launch: LaunchLink) -> tuple[str, str, str | None]:
    """(nodes, source lines, hint) in words, unescaped; hint None when PyTorch recorded them all."""
    b = launch.basis
    nodes = _BASIS_WORDS.get(b.nodes, b.nodes)
    if b.nodes == INFERRED:
        nodes += f" from {_EVIDENCE_WORDS.get(launch.evidence, launch.evidence)}"
        if launch.alternatives:
            nodes += f" ({alternatives_text(launch)})"
    lines = _BASIS_WORDS.get(b.source_lines, b.source_lines)
    if not b.inferred:
        return nodes, lines, None
    # with the trace's stacks but no node mapping for the launch, the capture was as good as it gets:
    # PyTorch's provenance JSON does not cover it (a backward graph, in the versions seen so far)
    hint = (EXACT_HINT if b.source_lines != STACK_TRACES else
            "PyTorch's provenance lists no nodes for this launch (none for a backward graph, so far)")
    return nodes, lines, hint


def basis_html(launch: LaunchLink) -> str:
    """Return one line on what the launch's links rest on: a visible mark when any is inferred, with
    what would make it exact, and the placements as good when the inference was uncertain; a quiet
    line when PyTorch recorded them."""
    nodes, lines, hint = _basis_words(launch)
    if hint is None:
        return (f'<div class="cv-basis cv-basis-exact" style="font-size:12px;color:#555">Links recorded by PyTorch: '
                f'nodes from {escape(nodes)}, source lines from {escape(lines)}.</div>')
    return ('<div class="cv-basis cv-basis-inferred" style="font-size:12px;background:#fff4ce;border:1px solid #e0b400;'
            f'border-radius:4px;padding:2px 6px">&#9888; <b>Inferred links</b>: nodes {escape(nodes)}, source lines '
            f'{escape(lines)}; {escape(hint)}.</div>')


def basis_text(launch: LaunchLink) -> str:
    """basis_html's words as plain text, for a page that puts them in itself (render/share)."""
    nodes, lines, hint = _basis_words(launch)
    if hint is None:
        return f"Links recorded by PyTorch: nodes from {nodes}, source lines from {lines}."
    return f"Inferred links: nodes {nodes}, source lines {lines}; {hint}."


def launches_html(launches: list[KernelLaunch], selected: frozenset[int]) -> str:
    """Return the launches of a kernel in call(): index, line, arguments."""
    items = []
    for la in launches:
        mark = f" style=\"color:{SELECTED};font-weight:bold\"" if la.index in selected else ""
        args = escape(", ".join(la.args))
        items.append(f"<li{mark}>#{la.index} <code>{escape(la.kernel)}({args[:300]}{'…' if len(args) > 300 else ''})</code>"
                     f" <span style='color:#888'>output_code.py:{la.line}</span></li>")
    return '<ul style="font-size:12px;margin:0">' + "".join(items) + "</ul>" if items else ""


def source_snippets(fx_graphs: list[FxGraph]) -> dict[str, dict[int, str]]:
    """Return file -> line -> code, from the `# File:` comments of the FX graphs."""
    out: dict[str, dict[int, str]] = {}
    for fx in fx_graphs:
        for n in fx.nodes:
            if n.source:
                out.setdefault(n.source.file, {}).setdefault(n.source.line, n.source.code)
    return out


def source_html(file_text: str | None, snippets: dict[int, str], marked: set[int], *,
                context: int = 4, height_px: int = 360, font_px: int = CODE_PX) -> str:
    """Return the user's source with `marked` lines highlighted: the whole file when we have it
    (windows around the marks when it is long), else the `code:` snippets of the FX comments."""
    if file_text is not None:
        lines = file_text.splitlines()
        if len(lines) <= 300 or not marked:
            return highlight_code("\n".join(lines[:2000]), first_line=1, marked=tuple(sorted(marked)), height_px=height_px,
                                  font_px=font_px)
        keep = sorted({i for m in marked for i in range(max(1, m - context), min(len(lines), m + context) + 1)})
        return plain_lines_html([(i, lines[i - 1], i in marked) for i in keep], height_px=height_px, font_px=font_px)
    return plain_lines_html([(ln, code, ln in marked) for ln, code in sorted(snippets.items())], height_px=height_px,
                            font_px=font_px)
