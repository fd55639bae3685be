"""The Compiles page: a run's TORCH_TRACE log, compile id by compile id (?run=…&rank=…&compile=…)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import streamlit as st

from compile_viz.artifacts import DiscoveryError
from compile_viz.artifacts.trace.discover import parse_trace_path
from compile_viz.artifacts.trace.model import CompileRecord, TraceLog, TraceParse
from compile_viz.render import compiles as render
from compile_viz.store import StoreError
from compile_viz.ui import loaders, state
from compile_viz.ui.runs import RunInfo, default_run_key, path_stamp


def trace_path(info: RunInfo) -> str:
    """Where a run's trace is: `trace/` beside a captured run's `debug/`, else the path opened."""
    debug = Path(info.debug_path or "")
    if debug.name == "debug" and (debug.parent / "trace").is_dir():
        return str(debug.parent / "trace")
    return info.debug_path


@st.cache_resource(max_entries=8, show_spinner="Reading the TORCH_TRACE log…")
def _trace(key: str, stamp: float) -> TraceParse:
    return parse_trace_path(trace_path(loaders.run_info(key)))


def load_trace(key: str) -> TraceParse:
    """Return the TORCH_TRACE parse of a run (DiscoveryError when it has no log), cached."""
    return _trace(key, path_stamp(key))


def page() -> None:
    key = state.get("run") or default_run_key(loaders.get_store())
    if not key:
        st.info("No runs yet: compile a model on the Compile page, or open a trace on the Runs page.")
        return
    try:
        info = loaders.run_info(key)
        parsed = load_trace(key)
    except (StoreError, DiscoveryError) as e:
        st.info(f"{e}. Runs captured by compile-viz keep their trace in trace/; "
                "other traces open from the Runs page or with ?run=path:/your/trace/dir.")
        return
    st.subheader(f"Compiles · {info.title}")
    log = _rank(parsed.logs)
    rows = render.compile_rows(log)
    st.dataframe(rows, hide_index=True, width="stretch")
    if not log.compiles:
        st.info("This log holds no compile id.")
        return
    ids = [r["compile id"] for r in rows]
    wanted = state.get("compile")
    cid = st.selectbox("Compile id", ids, index=ids.index(wanted) if wanted in ids else 0,
                       format_func=lambda i: f"[{i}] {next(r['status'] for r in rows if r['compile id'] == i)}")
    if cid != wanted:
        state.update(compile=cid)
    _details(key, parsed, log, log.compile(cid))
    if parsed.warnings:
        with st.expander(f"Log warnings ({len(parsed.warnings)})"):
            st.code("\n".join(str(w) for w in parsed.warnings), language=None)


def _rank(logs: tuple[TraceLog, ...]) -> TraceLog:
    """The log of the rank picked (the only one when there is one); differences between ranks flagged."""
    if len(logs) == 1:
        return logs[0]
    labels = [f"rank {log.rank}" if log.rank is not None else log.path for log in logs]
    wanted = state.get("rank")
    i = st.selectbox("Rank", range(len(logs)), format_func=lambda k: f"{labels[k]} ({len(logs[k].compiles)} compile ids)",
                     index=labels.index(wanted) if wanted in labels else 0)
    state.update(rank=labels[i])
    diffs = render.rank_differences(logs)
    if diffs:
        with st.expander(f"⚠ {len(diffs)} difference(s) between ranks"):
            st.markdown("\n".join(f"- {escape_md(d)}" for d in diffs))
    return logs[i]


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
    graphs = [g.id for g in parsed.graphs if g.id.endswith(f"[{c.id}] {g.kind}") or f"[{c.id}] " in g.id]
    if graphs:
        links = ", ".join(f"[{g}](/viewer?run={quote(key, safe='')}&graph={quote(g, safe='')})" for g in graphs)
        st.markdown(f"Graphs: {links} (scheduler IR and fusion groups: not in a trace)")
    left, right = st.columns(2, gap="small")
    with left:
        st.markdown("##### User stack")
        st.html(render.stack_html(c.stack))
    with right:
        guards(c, key=f"guards-{c.id}")
    st.markdown("##### Compile phases")
    every = st.checkbox("every phase (passes, autotuning, caches)", key=f"phases-{c.id}")
    st.plotly_chart(render.phase_figure(render.phases_of(log, c), all_phases=every), width="stretch", key=f"tl-{c.id}")


def guards(c, *, key: str, height: int | str = "content") -> None:
    """A compile's guards: the count, a search box and the lines it keeps (here and in the Viewer)."""
    count = c.guard_count if c.guard_count is not None else len(c.guards)
    st.markdown(f"##### Guards ({count})")
    query = st.text_input("Search guards", key=key, placeholder="e.g. L['x'] or TENSOR_MATCH")
    shown = render.filter_guards(c.guards, query)
    st.caption(f"{len(shown)} of {len(c.guards)} lines")
    st.code("\n".join(shown) or "none", language=None, height=height)
