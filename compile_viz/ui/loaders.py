"""Cached loaders: parse and index once per run and graph, lay out once per view.

Parses and indexes are frozen objects, shared across sessions (cache_resource, no copy);
the SVG of a view is a string (cache_data), keyed by run, graph and the repr of the view without
its selection: a new selection restyles the cached SVG instead of laying the graph out again.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from compile_viz.artifacts import DebugParse, DiscoveryError, parse_path
from compile_viz.artifacts.cudagraphs import CudagraphSkip, run_cudagraph_skips
from compile_viz.artifacts.trace.discover import parse_trace_path
from compile_viz.artifacts.trace.index import LAZY_FILE_BYTES
from compile_viz.artifacts.trace.model import TraceParse
from compile_viz.artifacts.trace.module_paths import read_dynamo_inputs
from compile_viz.linking import build_index
from compile_viz.linking.hierarchy import Hierarchy, graph_hierarchy
from compile_viz.linking.model import GraphIndex
from compile_viz.render.fx_dot import GraphView, fx_dot, layout_view, selection_ids
from compile_viz.render.hierarchy_dot import hierarchy_dot
from compile_viz.render.svg import dot_to_svg, mark_svg
from compile_viz.store import RunStore
from compile_viz.ui.runs import RunInfo, find_source, path_stamp, resolve
from compile_viz.ui.team import make_store


@st.cache_resource(show_spinner=False)
def get_store() -> RunStore:
    return make_store()  # local: RunStore(); on a team server (ui/team.py) its database, scoped to the person


@st.cache_resource(max_entries=32, show_spinner=False)
def _run_info(key: str, stamp: float) -> RunInfo:
    return resolve(key, get_store())


def run_info(key: str) -> RunInfo:
    """Return the RunInfo of `key` (StoreError when there is none)."""
    return _run_info(key, path_stamp(key))


@st.cache_resource(max_entries=8, show_spinner="Parsing the debug artifacts…")
def _parse(key: str, stamp: float) -> DebugParse:
    info = run_info(key)
    # a stored run's whole folder: its debug/ tree and the run-wide logs (logs/fusion.log)
    return parse_path(str(info.run_dir or info.debug_path), lazy_above=LAZY_FILE_BYTES)


def load_parse(key: str) -> DebugParse:
    """Return the parse of a run (DiscoveryError when it holds no debug artifacts)."""
    return _parse(key, path_stamp(key))


@st.cache_resource(max_entries=32, show_spinner="Linking kernels to nodes…")
def _index(key: str, stamp: float, graph_id: str) -> GraphIndex:
    return build_index(load_parse(key).graph(graph_id))


def load_index(key: str, graph_id: str) -> GraphIndex:
    return _index(key, path_stamp(key), graph_id)


@st.cache_data(max_entries=32, show_spinner=False)
def _cudagraph_skips(key: str, stamp: float) -> tuple[CudagraphSkip, ...]:
    info = run_info(key)
    return run_cudagraph_skips(info.run_dir) if info.run_dir else ()


def cudagraph_skips(key: str) -> tuple[CudagraphSkip, ...]:
    """Return why Inductor skipped CUDA graphs in a stored run (its stderr's warnings), else ()."""
    return _cudagraph_skips(key, path_stamp(key))


@st.cache_resource(max_entries=8, show_spinner=False)
def _dynamo_inputs(key: str, stamp: float) -> list:
    info = run_info(key)
    return read_dynamo_inputs(str(info.run_dir or info.debug_path))


@st.cache_resource(max_entries=32, show_spinner="Grouping launches by module…")
def _hierarchy(key: str, stamp: float, graph_id: str, fx_name: str) -> Hierarchy:
    parse = load_parse(key)
    return graph_hierarchy(parse.graphs, parse.graph(graph_id), load_index(key, graph_id),
                           _dynamo_inputs(key, stamp), fx_name, open_graph=parse.graph)


def load_hierarchy(key: str, graph_id: str, fx_name: str) -> Hierarchy:
    """The graph's launches grouped by module (repeated structure, source line): cached per run and graph."""
    return _hierarchy(key, path_stamp(key), graph_id, fx_name)


@st.cache_data(max_entries=256, show_spinner="Laying out the graph…")
def _svg(key: str, stamp: float, graph_id: str, fx_name: str, view_key: str, _view: GraphView) -> str:
    graph = load_parse(key).graph(graph_id)
    fx = graph.artifact(fx_name)
    index = load_index(key, graph_id)
    if _view.modules and not _view.hops:
        return dot_to_svg(hierarchy_dot(fx, index, load_hierarchy(key, graph_id, fx_name), _view))
    return dot_to_svg(fx_dot(fx, index, _view))


def load_svg(key: str, graph_id: str, fx_name: str, view: GraphView) -> str:
    """Return the SVG of one view of a graph with its selection marked (LayoutError when Graphviz fails)."""
    drawn = layout_view(view)
    svg = _svg(key, path_stamp(key), graph_id, fx_name, repr(drawn), drawn)
    graph = load_parse(key).graph(graph_id)
    fx = graph.artifact(fx_name)
    return mark_svg(svg, selection_ids(fx, view.selected_launches, view.selected_nodes))


@st.cache_data(max_entries=64, show_spinner=False)
def load_source(file: str, roots: tuple[str, ...]) -> tuple[str, str] | None:
    return find_source(file, roots)


def trace_path(info: RunInfo) -> str:
    """Where a run's trace is: `trace/` beside a captured run's `debug/`, else the path opened."""
    debug = Path(info.debug_path or "")
    if debug.name == "debug" and (debug.parent / "trace").is_dir():
        return str(debug.parent / "trace")
    return info.debug_path


@st.cache_resource(max_entries=8, show_spinner="Reading the TORCH_TRACE log…")
def _trace(key: str, stamp: float) -> TraceParse:
    return parse_trace_path(trace_path(run_info(key)), lazy_above=LAZY_FILE_BYTES)  # its logs, not every graph


def load_trace(key: str) -> TraceParse:
    """Return the TORCH_TRACE parse of a run (DiscoveryError when it has no log), cached."""
    return _trace(key, path_stamp(key))


def trace_logs(key: str) -> tuple:
    """The run's TORCH_TRACE logs (one per rank), or () when it has none."""
    try:
        return load_trace(key).logs
    except DiscoveryError:
        return ()


@st.cache_resource(max_entries=8, show_spinner="Joining the profile to the kernels…")
def _time_report(key: str, stamp: float):
    from compile_viz.linking.time_report import time_report  # a run with a profile only

    info = run_info(key)
    return time_report(str(info.run_dir or info.debug_path), parse=load_parse(key), logs=trace_logs(key))


def load_time_report(key: str):
    """The run's profile joined to its launches (linking.time_report.TimeReport), None without one."""
    if not load_parse(key).profiles:
        return None
    return _time_report(key, path_stamp(key))
