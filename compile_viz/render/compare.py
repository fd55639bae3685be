"""Two runs compared, as HTML: numbers side by side with deltas, launch groups coloured by class,
and a text diff of two kernels. Pure functions; every artifact string is escaped."""

from __future__ import annotations

import difflib
import re
from html import escape

from compile_viz.compare.model import CLASS_NOTES, CLASSES, MatchGroup
from compile_viz.compare.summary import Row
from compile_viz.render.palette import SELECTED, kind_color, kind_label

# class -> (fill colour, label); "same" is quiet, changes stand out
CLASS_STYLE: dict[str, tuple[str, str]] = {
    "same": ("#e9ecef", "same"),
    "merged": ("#b7e4c7", "merged"),
    "split": ("#ffd6a5", "split"),
    "regrouped": ("#ffc8dd", "regrouped"),
    "moved": ("#cdb4db", "moved"),
    "only_in_a": ("#ffadad", "only in A"),
    "only_in_b": ("#a0c4ff", "only in B"),
}
_VERDICT = {"better": "#2b8a3e", "worse": "#c92a2a"}
_TABLE = ('<div style="overflow:auto;max-height:{h}px;border:1px solid #ddd;border-radius:4px">'
          '<table class="{cls}" style="border-collapse:collapse;font-size:12px;width:100%">{rows}</table></div>')
_TD = 'style="border-bottom:1px solid #eee;padding:3px 6px;vertical-align:top"'


def class_color(cls: str) -> str:
    return CLASS_STYLE.get(cls, CLASS_STYLE["same"])[0]


def class_chip(cls: str, count: int | None = None) -> str:
    """Return a coloured chip naming a class (with a count), its meaning as tooltip."""
    color, label = CLASS_STYLE.get(cls, (class_color(cls), cls))
    text = f"{count} {label}" if count is not None else label
    return (f'<span class="cv-class" data-class="{escape(cls)}" title="{escape(CLASS_NOTES.get(cls, ""))}" '
            f'style="background:{color};border:1px solid #999;border-radius:3px;padding:0 5px;'
            f'white-space:nowrap;margin-right:6px">{escape(text)}</span>')


def counts_html(counts: dict[str, int]) -> str:
    """Return one line of chips: how many groups of each class, changes first."""
    chips = [class_chip(c, counts[c]) for c in CLASSES if counts.get(c)]
    return '<div style="font-size:13px;line-height:1.8">' + ("".join(chips) or "no launches") + "</div>"


def rows_html(rows: list[Row], a_title: str = "A", b_title: str = "B") -> str:
    """Return the numbers of both runs as a table: label, A, B, B - A (green better, red worse)."""
    head = (f"<tr><th {_TD} align=left></th><th {_TD} align=right>{escape(a_title)}</th>"
            f"<th {_TD} align=right>{escape(b_title)}</th><th {_TD} align=left>B - A</th></tr>")
    out = [head]
    for r in rows:
        if r.a is None and r.b is None:
            continue
        color = _VERDICT.get(r.verdict, "#555")
        out.append(f'<tr class="cv-row" data-label="{escape(r.label)}" title="{escape(r.help)}">'
                   f"<td {_TD}>{escape(r.label)}</td><td {_TD} align=right>{escape(r.text(r.a))}</td>"
                   f"<td {_TD} align=right>{escape(r.text(r.b))}</td>"
                   f'<td {_TD}><span class="cv-delta" style="color:{color}">{escape(r.delta_text())}</span></td></tr>')
    return _TABLE.format(h=420, cls="cv-compare-rows", rows="".join(out))


def _refs(refs) -> str:
    return "<br>".join(
        f'#{r.index} <code>{escape(r.kernel)}</code> <span style="background:{kind_color(r.kind)};'
        f'border:1px solid #999;border-radius:3px;padding:0 3px">{escape(kind_label(r.kind))}</span>'
        for r in refs) or "—"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def group_label(n: int, g: MatchGroup) -> str:
    """Return a short text naming group n: its class and kernels (for a picker)."""
    a = " + ".join(r.kernel for r in g.a) or "—"
    b = " + ".join(r.kernel for r in g.b) or "—"
    return f"{n}: {CLASS_STYLE.get(g.cls, ('', g.cls))[1]} · {a} → {b}"


def groups_html(groups: tuple[MatchGroup, ...] | list[MatchGroup], selected: int | None = None, *,
                height_px: int = 420, limit: int = 600) -> str:
    """Return the matched groups as a table coloured by class; the selected row outlined."""
    timed = any(g.a_time_ms is not None or g.b_time_ms is not None for g in groups)
    heads = ["#", "class", "launches in A", "launches in B", "FX nodes"] + (["A ms", "B ms"] if timed else [])
    out = ["<tr>" + "".join(f"<th {_TD} align=left>{h}</th>" for h in heads) + "</tr>"]
    for n, g in enumerate(groups[:limit]):
        style = f"background:{class_color(g.cls)}33"
        if n == selected:
            style += f";outline:2px solid {SELECTED}"
        nodes = ", ".join(escape(x) for x in g.fx_nodes[:8]) + (f" … (+{len(g.fx_nodes) - 8})" if len(g.fx_nodes) > 8 else "")
        times = f"<td {_TD} align=right>{_ms(g.a_time_ms)}</td><td {_TD} align=right>{_ms(g.b_time_ms)}</td>" if timed else ""
        out.append(f'<tr class="cv-match{" cv-selected" if n == selected else ""}" data-class="{escape(g.cls)}" '
                   f'style="{style}"><td {_TD}>{n}</td><td {_TD}>{class_chip(g.cls)}</td>'
                   f"<td {_TD}>{_refs(g.a)}</td><td {_TD}>{_refs(g.b)}</td><td {_TD}>{nodes or '—'}</td>{times}</tr>")
    if len(groups) > limit:
        out.append(f"<tr><td {_TD} colspan={len(heads)}>… {len(groups) - limit} more groups (pick one by number)</td></tr>")
    if len(out) == 1:
        out.append(f"<tr><td {_TD} colspan={len(heads)}>No launches in either graph.</td></tr>")
    return _TABLE.format(h=height_px, cls="cv-compare-groups", rows="".join(out))


def code_diff_html(a_source: str, b_source: str, a_name: str = "A", b_name: str = "B", *,
                   height_px: int = 420, context: int = 3) -> str:
    """Return a unified text diff of two kernels' sources, escaped, removed lines red, added green."""
    lines = list(difflib.unified_diff(a_source.splitlines(), b_source.splitlines(), a_name, b_name,
                                      n=context, lineterm=""))
    if not lines:
        lines = ["(the two kernels' sources are identical)"]
    out = []
    for line in lines:
        bg = ""
        if line.startswith("+") and not line.startswith("+++"):
            bg = "background:#d3f9d8;"
        elif line.startswith("-") and not line.startswith("---"):
            bg = "background:#ffe3e3;"
        elif line.startswith("@@"):
            bg = "color:#1864ab;"
        out.append(f'<div style="{bg}white-space:pre">{escape(line)}</div>')
    body = '<div class="cv-diff" style="font-family:monospace;font-size:12px;padding:4px">' + "".join(out) + "</div>"
    return (f'<div style="overflow:auto;max-height:{height_px}px;border:1px solid #ddd;border-radius:4px">'
            f"{body}</div>")


_BOX = re.compile(r'^\s*"L(\d+)" \[.*\bid="cvL\d+"')
_CLUSTER = re.compile(r'^\s*subgraph "cluster_L(\d+)" \{')
_FILL = re.compile(r'fillcolor="[^"]*"')


def recolour_dot(dot: str, classes: dict[int, str]) -> str:
    """Return fx_dot's DOT with each launch (box or cluster) filled by its group's class, not its kind;
    launches with no class keep their colour. Labels say the kind, the fill says what changed."""
    out, cluster = [], None
    for line in dot.split("\n"):
        box, head = _BOX.match(line), _CLUSTER.match(line)
        if head:
            cluster = int(head.group(1))
        elif line.strip() == "}":
            cluster = None
        launch = int(box.group(1)) if box else (cluster if line.strip().startswith("fillcolor=") else None)
        if launch is not None and launch in classes:
            line = _FILL.sub(f'fillcolor="{class_color(classes[launch])}"', line, count=1)
        out.append(line)
    return "\n".join(out)


def class_legend_html() -> str:
    """Return the class colours as one line (what the coloured graphs mean)."""
    return '<div style="font-size:12px;line-height:1.8">' + "".join(class_chip(c) for c in CLASSES) + "</div>"
