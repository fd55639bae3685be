"""The Compiles page: a run's TORCH_TRACE log, compile id by compile id (?run=…&rank=…&compile=…)."""

from __future__ import annotations

import streamlit as st

from compile_viz.artifacts import DiscoveryError
from compile_viz.artifacts.trace.model import CompileRecord, TraceLog, TraceParse
from compile_viz.compare.ranks import RankReport, rank_report
from compile_viz.linking.graph_labels import graph_labels
from compile_viz.render import compiles as render
from compile_viz.render import ranks as ranks_render
from compile_viz.store import StoreError
from compile_viz.ui import loaders, state
from compile_viz.ui.page_registry import page_url
from compile_viz.ui.rank_picker import pick_rank
from compile_viz.ui.runs import default_run_key, path_stamp
from compile_viz.ui.tables import table
from compile_viz.ui.unknown import say_unknown


def page() -> None:
    key = state.get("run") or default_run_key(loaders.get_store())
    if not key:
        st.info("No runs yet: compile a model on the Compile page, or open a trace on the Runs page.")
        return
    try:
        info = loaders.run_info(key)
        parsed = loaders.load_trace(key)
    except (StoreError, DiscoveryError) as e:
        st.info(f"{e}. Runs captured by compile-viz keep their trace in trace/; "
                "other traces open from the Runs page or with ?run=path:/your/trace/dir.")
        return
    st.subheader(f"Compiles · {info.title}")
    log = _rank(key, parsed.logs)
    rows = render.compile_rows(log)
    table(rows)
    if not log.compiles:
        st.info("This log holds no compile id.")
        return
    ids = [r["compile id"] for r in rows]
    wanted = state.get("compile")
    if wanted and wanted not in ids:
        where = f"rank {log.rank}'s log" if len(parsed.logs) > 1 and log.rank is not None else "this log"
        say_unknown("compiles", "compile", wanted, {i: f"[{i}]" for i in ids}, noun="compile id", where=where,
                    showing=f"[{ids[0]}]")
    cid = st.selectbox("Compile id", ids, index=ids.index(wanted) if wanted in ids else 0,
                       format_func=lambda i: f"[{i}] {next(r['status'] for r in rows if r['compile id'] == i)}")
    if cid != wanted:
        state.update(compile=cid)
    _details(key, parsed, log, log.compile(cid))
    if parsed.warnings:
        with st.expander(f"Log warnings ({len(parsed.warnings)})"):
            st.code("\n".join(str(w) for w in parsed.warnings), language=None)


def _rank(key: str, logs: tuple[TraceLog, ...]) -> TraceLog:
    """The log of the rank picked (the only one when there is one), below the job's ranks side by side."""
    if len(logs) == 1:
        return logs[0]
    ranks_section(key, logs)
    by_rank = {log.rank if log.rank is not None else i: log for i, log in enumerate(logs)}
    rank = pick_rank(list(by_rank), page="compiles",
                     counts={r: f"{len(log.compiles)} compile ids" for r, log in by_rank.items()})
    return by_rank[rank]


@st.cache_resource(max_entries=8, show_spinner="Comparing the ranks…")
def _report(key: str, stamp: float) -> RankReport:
    return rank_report(loaders.load_trace(key).logs)


def ranks_section(key: str, logs: tuple[TraceLog, ...]) -> None:
    """Where ranks differ, first; then ranks x compile ids coloured by status."""
    report = _report(key, path_stamp(key))
    n = len(report.divergences)
    with st.expander(f"Ranks: {len(report.ranks)} ranks, " + (f"⚠ {n} divergence{'s' if n != 1 else ''}" if n
                     else "no divergence"), expanded=bool(n)):
        st.html(ranks_render.divergences_html(key, report, page_url))
        st.html(ranks_render.grid_html(key, report, page_url))


def escape_md(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]").replace("*", "\\*").replace("_", "\\_")


def _details(key: str, parsed: TraceParse, log: TraceLog, c: CompileRecord) -> None:
    st.markdown(f"**{render.STATUS_ICONS.get(c.status, '')} [{c.id}] {c.status}** · {escape_md(render.frame_label(c))}")
    if c.fail_reason:
        st.warning(c.fail_reason)
    for reason in c.graph_break_reasons:
        with st.expander("Graph break", expanded=True):
            st.code(reason, language=None)
    for reason in c.restart_reasons if not c.graph_break_reasons else ():
        st.caption(f"Restarted: {reason.splitlines()[0]}")
    if c.recompile_reasons:
        st.markdown("**Why it recompiled**\n" + "\n".join(
            f"- {escape_md(render.plain_recompile_reason(r))}" for r in c.recompile_reasons))
    graphs = _viewer_graphs(key, parsed, log, c) if c.graphs else []
    if graphs:
        links = ", ".join(f"[{escape_md(label)}]({page_url('viewer', run=key, rank=rank, graph=gid)})"
                          for gid, label, rank in graphs)
        st.markdown(f"Graphs: {links}")
    left, right = st.columns(2, gap="small")
    with left:
        st.markdown("##### User stack")
        st.html(render.stack_html(c.stack))
    with right:
        guards(c, key=f"guards-{c.id}")
    st.markdown("##### Compile phases")
    every = st.checkbox("every phase (passes, autotuning, caches)", key=f"phases-{c.id}")
    st.plotly_chart(render.phase_figure(render.phases_of(log, c), all_phases=every), width="stretch", key=f"tl-{c.id}")


def _viewer_graphs(key: str, parsed: TraceParse, log: TraceLog, c: CompileRecord) -> list[tuple[str, str, int | None]]:
    """(graph id, label, rank) of each graph the Viewer shows for this run that compile `c` of `log`
    made: the Viewer's own ids (a run's debug folders, when it has them, not the trace's)."""
    try:
        graphs = loaders.load_parse(key).graphs
    except DiscoveryError:
        return []
    several = len(parsed.logs) > 1
    out = []
    for gid, label in graph_labels(graphs, parsed.logs).items():
        if label.compile_id == c.id and (not several or label.rank == log.rank):
            out.append((gid, label.text, label.rank if several else None))
    return out


def guards(c, *, key: str, height: int | str = "content") -> None:
    """A compile's guards: the count, a search box and the lines it keeps (here and in the Viewer)."""
    count = c.guard_count if c.guard_count is not None else len(c.guards)
    st.markdown(f"##### Guards ({count})")
    query = st.text_input("Search guards", key=key, placeholder="e.g. L['x'] or TENSOR_MATCH")
    shown = render.filter_guards(c.guards, query)
    st.caption(f"{len(shown)} of {len(c.guards)} lines")
    st.code("\n".join(shown) or "none", language=None, height=height)
