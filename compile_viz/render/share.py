"""A run as one self-contained HTML file: summary, every graph drawn, launches linked to their
kernel's code, FX nodes and source lines, fusion groups and refused pairs, the profile's longest
launches. Nothing in it fetches anything (a Content-Security-Policy forbids it), so it opens from
file:// or any static host, and a link to one launch is its fragment (`#graph=…&launch=…`).

`collect_run` reads what a run holds (the library's readers: parse, links, module groups, TORCH_TRACE
logs, ranks, profile); `share_html` turns it into the page; `compile-viz share` and the Viewer's
Share button call both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.model import DebugParse
from compile_viz.artifacts.trace.module_paths import dynamo_inputs_by_rank
from compile_viz.linking import build_index
from compile_viz.linking.graph_labels import graph_labels, graph_rank
from compile_viz.linking.hierarchy import HIERARCHY_ABOVE, Hierarchy, graph_hierarchy
from compile_viz.linking.model import GraphIndex
from compile_viz.measurements import MeasureSummary
from compile_viz.render.profile import summary_line
from compile_viz.render.share_data import Files, fx_name, graph_data
from compile_viz.render.share_drawings import Layout, View, graph_views, kind_legend
from compile_viz.render.share_page import page_html
from compile_viz.render.summary import graph_cards, launch_counts
from compile_viz.render.svg import LayoutError

PROFILE_ROWS = 40  # the profile's longest launches listed


class ShareError(Exception):
    """The file cannot be made (no graph to share, an unknown rank or graph); str() is one line."""


@dataclass
class SharedRun:
    """Everything the page shows of a run, read."""

    title: str
    meta: dict
    parse: DebugParse
    graph_ids: list[str]  # the graphs shared, in the order listed
    labels: dict[str, str]  # graph id -> its name for a person (rank, compile id, kind)
    ranks: dict[str, int | None]
    indexes: dict[str, GraphIndex]
    hierarchies: dict[str, Hierarchy | None]
    logs: Sequence = ()  # the run's TORCH_TRACE logs (compile ids, recompiles, ranks)
    rank_report: object | None = None  # compare.ranks.RankReport of a job of several ranks
    profile: list = field(default_factory=list)  # linking.time_report.TimeRow, longest first
    profile_summary: dict = field(default_factory=dict)
    measure: MeasureSummary | None = None


def collect_run(path: str, meta: dict | None = None, *, graphs: Sequence[str] = (), rank: int | None = None,
                parse: DebugParse | None = None, indexes: dict[str, GraphIndex] | None = None) -> SharedRun:
    """Read what the page shows of the run at `path` (a run folder or zip, a debug folder or zip, a
    TORCH_TRACE log). `graphs`: only these graph ids; `rank`: only that rank's graphs. `parse` and
    `indexes` may be given when already read (the Viewer's caches). ShareError (one line) when
    nothing is left to share."""
    from compile_viz.artifacts.trace.discover import parse_logs, trace_logs

    meta = dict(meta or {})
    parse = parse or parse_path(path)
    ranks = {g.id: graph_rank(g) for g in parse.graphs}
    chosen = _chosen(parse, ranks, graphs, rank)
    several = len({r for r in ranks.values() if r is not None}) > 1
    indexes = dict(indexes or {})
    for gid in chosen:
        if gid not in indexes:
            indexes[gid] = build_index(parse.graph(gid))
    raw = trace_logs(path, skip_dirs=("debug",))  # read once: module names, then (when needed) compile ids
    big = [gid for gid in chosen if len(indexes[gid].launches) > HIERARCHY_ABOVE]
    inputs = dynamo_inputs_by_rank(raw) if big else {}
    hierarchies = dict.fromkeys(chosen)
    for gid in big:
        g = parse.graph(gid)
        if g.artifact(fx_name(g)) is not None:
            hierarchies[gid] = graph_hierarchy(parse.graphs, g, indexes[gid], inputs.get(ranks[gid], inputs.get(None, [])),
                                               fx_name(g), open_graph=parse.graph)
    # compile ids name a job's graphs and find its recompiles; a capture's meta.json lists its own
    logs = parse_logs(raw) if raw and (several or "recompiles" not in meta or parse.profiles) else []
    labels = {gid: label.text for gid, label in graph_labels(parse.graphs, logs).items()} if several else \
        {g.id: f"{g.kind} · {g.folder.name}" for g in parse.graphs}
    run = SharedRun(str(meta.get("title") or meta.get("model") or _name(path)), meta, parse, chosen, labels, ranks,
                    indexes, hierarchies, logs, measure=MeasureSummary.from_json(meta.get("measure")))
    if several and logs:
        from compile_viz.compare.ranks import rank_report

        run.rank_report = rank_report(logs)
    if parse.profiles:
        from compile_viz.linking.time_report import time_report

        report = time_report(path, parse=parse, logs=logs)
        if report is not None:
            run.profile = [r for r in report.rows if r.graph in indexes][:PROFILE_ROWS]
            run.profile_summary = report.summary
    return run


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".zip")


def _chosen(parse: DebugParse, ranks: dict[str, int | None], graphs: Sequence[str], rank: int | None) -> list[str]:
    ids = [g.id for g in parse.graphs]
    if not ids:
        raise ShareError("the run holds no compiled graph: nothing to draw (its compiles are on the Compiles page)")
    if rank is not None:
        have = sorted({r for r in ranks.values() if r is not None})
        if rank not in have:
            raise ShareError(f"no rank {rank} in this run (ranks: {', '.join(map(str, have)) or 'none'})")
        ids = [gid for gid in ids if ranks[gid] == rank]
    if graphs:
        unknown = [g for g in graphs if g not in ids]
        if unknown:
            raise ShareError(f"no graph {unknown[0]} in this run{' on that rank' if rank is not None else ''} "
                             f"(graphs: {', '.join(ids)})")
        ids = [gid for gid in ids if gid in graphs]
    return ids


def share_html(run: SharedRun) -> str:
    """The page: the run's summary, its graphs (drawn by Graphviz now: one process for every view
    of every graph, alike views laid out once), the data its script shows on a click."""
    files = Files()
    graphs, views_of = [], {}
    for gid in run.graph_ids:
        g = run.parse.graph(gid)
        name = fx_name(g)
        fx = g.artifact(name)
        views_of[gid] = graph_views(fx, run.indexes[gid], run.hierarchies[gid], name) if fx is not None else []
    dots = list(dict.fromkeys(v.dot for vs in views_of.values() for v in vs))
    drawing_of = {d: k for k, d in enumerate(dots)}
    layout = Layout(dots)  # Graphviz works while the data is made
    for gid in run.graph_ids:
        g, index = run.parse.graph(gid), run.indexes[gid]
        data = graph_data(g, index, files)
        data.update(id=gid, label=run.labels.get(gid, gid), kind=g.kind, rank=run.ranks.get(gid),
                    counts=launch_counts(index.summary), cards=[[c.label, c.value, c.help] for c in graph_cards(index)],
                    fx=fx_name(g), legend=kind_legend(index), views=_views(views_of[gid], drawing_of, run.hierarchies[gid]),
                    groupOf=list(run.hierarchies[gid].launch_group) if run.hierarchies[gid] is not None else None)
        graphs.append(data)
    try:
        svgs, no_drawing = layout.svgs(), ""
    except LayoutError as e:
        svgs, no_drawing = [], str(e)
    data = {"graphs": graphs, "files": files.names, "profile": _profile(run), "noDrawing": no_drawing}
    return page_html(run, data, svgs)


def _views(views: list[View], drawing_of: dict[str, int], h: Hierarchy | None) -> dict:
    """Group id -> [drawing, items, parent group, label, launches] ("" is the root, or the whole graph)."""
    out = {}
    for v in views:
        g = h.groups.get(v.group) if h is not None and v.group else (h.root if h is not None else None)
        parent = h.parents.get(v.group, "") if h is not None and v.group else None
        out[v.group] = [drawing_of[v.dot], list(v.items), parent, g.label if g is not None else "",
                        len(g.launches) if g is not None else 0]
    return out


def _profile(run: SharedRun) -> dict | None:
    """The profile's longest launches: [graph, launch, kernel, kind, total µs, calls, share, module]."""
    if not run.profile:
        return None
    rows = [[r.graph, r.launch, r.kernel, r.kind, round(r.total_us, 1), r.calls, round(r.share, 4), r.module]
            for r in run.profile]
    return {"rows": rows, "line": summary_line(run.profile_summary) if run.profile_summary else ""}
