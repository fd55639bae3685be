"""The ranks of a job as HTML: ranks x compile ids coloured by status, and the divergences first,
each with links to the compile and to the two ranks side by side on the Compare page."""

from __future__ import annotations

from html import escape

from compile_viz.compare.ranks import Divergence, RankReport
from compile_viz.render.links import PageLink

STATUS_COLOURS = {
    "ok": "#2e7d32", "ok after restart": "#66bb6a", "graph break": "#f9a825", "restarted": "#fbc02d",
    "failed": "#c62828", "empty": "#9e9e9e", "unknown": "#bdbdbd", "": "#ffffff",
}
KIND_TITLES = {
    "compile_id": "recompile on some ranks", "status": "another outcome", "graphs": "other graphs",
    "guards": "other guards", "collectives": "another collective order", "cache": "another cache outcome",
}


def compare_link(run: str, d: Divergence, report: RankReport, link: PageLink) -> str:
    """The Compare page on this compile id: a rank of the majority as A, the first odd rank as B."""
    others = [r for r in report.ranks if r not in d.ranks]
    a = others[0] if others else report.ranks[0]
    return link("compare", run=run, compare=run, rank=a, compare_rank=d.ranks[0], cid=d.compile_id)


def divergences_html(run: str, report: RankReport, link: PageLink) -> str:
    """The divergences as a list: what, on which ranks, what it means, and where to look."""
    if len(report.ranks) < 2:
        return ""
    if not report.divergences:
        return (f'<div class="cv-ranks-ok">The {len(report.ranks)} ranks compiled the same: same compile ids, '
                "graphs, guards, collectives and cache outcomes.</div>")
    items = []
    for d in report.divergences:
        ranks = ", ".join(map(str, d.ranks))
        compile_link = link("compiles", run=run, rank=d.ranks[0], compile=d.compile_id)
        items.append(
            f'<li class="cv-div" data-kind="{escape(d.kind)}"><b>{escape(KIND_TITLES.get(d.kind, d.kind))}</b> · '
            f"rank{'s' if len(d.ranks) > 1 else ''} {escape(ranks)}: {escape(d.detail)}"
            f'<br><span class="cv-div-meaning">{escape(d.meaning)}</span><br>'
            f'<a href="{escape(compile_link)}" target="_self">this compile</a> · '
            f'<a class="cv-div-compare" href="{escape(compare_link(run, d, report, link))}" target="_self">'
            f"rank {d.ranks[0]} beside the others on the Compare page</a></li>")
    style = ("<style>.cv-div{margin:0 0 .6em 0}.cv-div-meaning{color:#666;font-size:.9em}"
             ".cv-divs{max-height:320px;overflow:auto;padding-left:1.2em}</style>")
    return f'{style}<ol class="cv-divs">{"".join(items)}</ol>'


def grid_html(run: str, report: RankReport, link: PageLink, *, max_ids: int = 400) -> str:
    """Ranks (rows) x compile ids (columns), each cell coloured by its status and linked to that
    compile; a cell where its rank differs from the majority is outlined."""
    odd = {(r, d.compile_id) for d in report.divergences for r in d.ranks}
    ids = report.compile_ids[:max_ids]
    head = "".join(f'<th title="{escape(cid)}">{escape(cid)}</th>' for cid in ids)
    rows = []
    for rank in report.ranks:
        cells = []
        for cid in ids:
            status = report.grid[cid].get(rank, "")
            colour = STATUS_COLOURS.get(status, "#bdbdbd")
            mark = " cv-odd" if (rank, cid) in odd else ""
            href = link("compiles", run=run, rank=rank, compile=cid)
            inner = f'<a href="{escape(href)}" target="_self">&nbsp;</a>' if status else ""
            cells.append(f'<td class="cv-cell{mark}" style="background:{colour}" '
                         f'title="rank {rank} [{escape(cid)}] {escape(status or "not compiled")}">{inner}</td>')
        rows.append(f"<tr><th>rank {rank}</th>{''.join(cells)}</tr>")
    more = f"<div>{len(report.compile_ids) - max_ids} more compile ids not drawn</div>" if len(report.compile_ids) > max_ids else ""
    legend = " ".join(f'<span style="background:{c};padding:0 .6em;margin-right:.2em"></span>{escape(s)}'
                      for s, c in STATUS_COLOURS.items() if s)
    style = ("<style>.cv-grid{border-collapse:collapse;font-size:11px}.cv-grid th{font-weight:normal;padding:0 4px;"
             "white-space:nowrap}.cv-cell{width:18px;height:18px;border:1px solid #fff}.cv-cell a{display:block}"
             ".cv-odd{outline:2px solid #d500f9;outline-offset:-2px}.cv-gridbox{overflow-x:auto}</style>")
    return (f'{style}<div class="cv-gridbox"><table class="cv-grid"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
            f'</div>{more}<div style="font-size:11px;margin-top:4px">{legend} · outlined: differs from the other ranks</div>')
