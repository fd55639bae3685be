"""The four linked panes of the viewer: graph, code, fusion groups, source. Arrangement only."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import streamlit as st

from compile_viz.artifacts.kernel_meta import kernel_meta
from compile_viz.artifacts.kinds import BY_NAME
from compile_viz.artifacts.model import GraphParse
from compile_viz.linking.model import AOT, POST_GRAD, GraphIndex
from compile_viz.render import panels
from compile_viz.render.code_html import highlight_code, kernel_body, kernel_language
from compile_viz.render.compiles import stack_html
from compile_viz.render.fx_dot import GraphView, fx_dot, kinds_present
from compile_viz.render.kernel_names import short_kernel_name
from compile_viz.render.notes import ARTIFACT_NOTES, KIND_NOTES
from compile_viz.render.palette import legend_html
from compile_viz.render.profile import line_times_text
from compile_viz.render.selection import Selection
from compile_viz.render.svg import LayoutError, have_dot, svg_panel
from compile_viz.ui import loaders
from compile_viz.ui.code_view import code_view
from compile_viz.ui.graph_widget import graph_widget
from compile_viz.ui.present import CODE_HEIGHT_PX, CODE_PX
from compile_viz.ui.runs import RunInfo

MAX_GRAPHVIZ_CHART_NODES = 400  # st.graphviz_chart lays out in the browser: keep it small
DETAIL_HOPS = 1  # a collapsed graph's selection is drawn apart with the nodes this many edges away


def graph_pane(info: RunInfo, graph: GraphParse, index: GraphIndex, fx_name: str, view: GraphView,
               on_select: Callable[[dict], None], *, height_px: int = 720) -> None:
    fx = graph.artifact(fx_name)
    file = BY_NAME[fx_name].file
    note = ARTIFACT_NOTES[file]
    if fx is None:
        st.warning(f"This graph has no {file}; try the other FX graph.")
        return
    st.html(legend_html(kinds_present(index)))
    if have_dot():
        try:
            svg = loaders.load_svg(info.key, graph.id, fx_name, view)
        except LayoutError as e:
            st.error(str(e))
            return
        apart = view.collapsed and not view.hops and bool(view.selected_launches or view.selected_nodes)
        graph_widget(svg_panel(svg, height_px=min(400, height_px) if apart else height_px),
                     key=f"graph:{graph.id}:{fx_name}".replace("_", "-"), on_select=on_select)
        st.caption("Click a node or a kernel box to select it. " + ("Collapsed: one box per launch; "
                   "the selection is drawn below." if view.collapsed and not view.hops else ""))
        if apart:
            _selection_graph(info, graph, fx_name, view, on_select)
    else:
        dot = fx_dot(fx, index, view)
        if dot.count("->") > MAX_GRAPHVIZ_CHART_NODES and not view.collapsed:
            st.info("Graphviz's `dot` is not installed here; showing the collapsed view. "
                    "Install the `graphviz` package for the full, clickable graph.")
        st.graphviz_chart(dot, width="stretch")
    with st.popover("About this graph"):
        st.markdown(note)


def _selection_graph(info: RunInfo, graph: GraphParse, fx_name: str, view: GraphView,
                     on_select: Callable[[dict], None]) -> None:
    """The selected launch(es) of a collapsed graph, opened up with their 1-hop neighbours: a small
    drawing of its own (cached per selection), so the big one is never laid out again."""
    detail = GraphView(graph=fx_name, selected_launches=view.selected_launches, selected_nodes=view.selected_nodes,
                       hops=DETAIL_HOPS, link=view.link, short_names=view.short_names)
    try:
        svg = loaders.load_svg(info.key, graph.id, fx_name, detail)
    except LayoutError as e:
        st.error(str(e))
        return
    n = len(view.selected_launches)
    st.markdown(f"###### The selection opened up: {n} launch{'es' if n != 1 else ''}, "
                f"its nodes and their neighbours ({DETAIL_HOPS} hop)")
    graph_widget(svg_panel(svg, height_px=400), key=f"detail:{graph.id}:{fx_name}".replace("_", "-"),
                 on_select=on_select)


def code_pane(graph: GraphParse, index: GraphIndex, sel: Selection, *, present: bool = False) -> None:
    """The selected launch's kernel: its name, what its links rest on, its metadata and code. In
    projector mode: its short name (the generated one on hover) and its code in large type first."""
    oc = graph.output_code
    if sel.empty or not sel.launches:
        if sel.empty:
            st.info("Select a kernel (or a node) to see its code.")
        elif sel.node:
            st.info(f"Node `{sel.node}` runs in no kernel: {_no_kernel_reason(index, sel.node)}")
        else:
            st.warning(f"No launch of `{sel.kernel}` in this graph.")
        if oc is not None:
            with st.popover("About output_code.py"):
                st.markdown(ARTIFACT_NOTES["output_code.py"])
        return
    launch = index.launches[min(sel.launches)]
    kernel = oc.kernel(launch.kernel) if oc else None
    of = f" of {len(sel.launches)}" if len(sel.launches) > 1 else ""
    if present:
        st.html(f'<div class="cv-kname" title="{escape(launch.kernel)}">{escape(short_kernel_name(launch.kernel))} '
                f"<small>launch #{launch.index}{of}</small></div>")
        if kernel is not None:
            body, first = kernel_body(kernel.source, kernel.source_line)
            st.html(highlight_code(body, language=kernel_language(kernel.backend), first_line=first,
                                   height_px=CODE_HEIGHT_PX, font_px=CODE_PX))
        _kernel_details(graph, index, sel, launch, kernel, code=False)  # below the code, out of the room's sight
        return
    st.markdown(f"**`{launch.kernel}`** · launch #{launch.index}" + of)
    _kernel_details(graph, index, sel, launch, kernel, code=True)


def _kernel_details(graph: GraphParse, index: GraphIndex, sel: Selection, launch, kernel, *, code: bool) -> None:
    oc = graph.output_code
    meta = None
    if kernel is not None:
        try:
            meta = kernel_meta(kernel)
        except Exception:  # metadata is a nicety; a kernel we cannot read still shows its code
            meta = None
    st.html(panels.basis_html(launch))
    st.html(panels.meta_table_html(panels.kernel_meta_rows(kernel, meta, launch.kind)))
    with st.popover(f"About {launch.kind.replace('_', ' ')} kernels"):
        st.markdown(KIND_NOTES.get(launch.kind, KIND_NOTES["none"]))
    if kernel is not None:
        if code:
            st.html(highlight_code(kernel.source, language=kernel_language(kernel.backend),
                                   first_line=kernel.source_line, height_px=520))
    else:
        st.caption("An extern call: Inductor generated no code for it, it calls a library.")
    launches = [la for la in (oc.launches if oc else ()) if la.kernel == launch.kernel]
    with st.expander(f"Launches in call() ({len(launches)})", expanded=kernel is None):
        st.html(panels.launches_html(launches, sel.launches))
    _user_stacks(graph, launch.index, launch.kernel)


def _user_stacks(graph: GraphParse, index: int, kernel: str) -> None:
    """The launch's whole user stacks, as the TORCH_TRACE log gives them (runs with a trace/)."""
    launches = graph.output_code.launches if graph.output_code is not None else ()
    handle = launches[index].comments.provenance_handle if index < len(launches) else ""
    traced = graph.kernel_stacks.of_launch(index, kernel, handle) if graph.kernel_stacks is not None else None
    if traced is None or not traced.stacks:
        return
    with st.expander(f"User stack{'s' if len(traced.stacks) > 1 else ''} of launch #{index} (from the trace)"):
        st.html("".join(stack_html(frames) for frames in traced.stacks))


def _no_kernel_reason(index: GraphIndex, node: str) -> str:
    for graph in (POST_GRAD, AOT):
        link = index.node(node, graph)
        if link and link.no_kernel_reason:
            return link.no_kernel_reason
    return "not linked to a launch (a view, an input, or folded into its users' indexing)."


def groups_pane(graph: GraphParse, index: GraphIndex, sel: Selection) -> None:
    if sel.groups:
        g = index.group(sel.groups[0])
        if g is not None:
            st.markdown(f"**Group `{g.name}`**: {len(g.members)} scheduler node(s), "
                        f"writes {len(g.buffers)} buffer(s), {len(g.fused_away)} fused away")
    st.html(panels.groups_html(index, sel.launches, height_px=320))
    with st.popover("About fusion"):
        st.markdown(ARTIFACT_NOTES["ir_pre_fusion.txt"] + "\n\n" + ARTIFACT_NOTES["ir_post_fusion.txt"])


def source_pane(info: RunInfo, graph: GraphParse, sel: Selection, *, present: bool = False) -> None:
    snippets = panels.source_snippets([g for g in (graph.aot_graph, graph.post_grad_graph) if g])
    files = list(dict.fromkeys([f for f, _ in sel.source_lines] + list(snippets)))
    if not files:
        st.info("The FX graphs name no source lines (no `# File:` comments).")
        return
    # open on the selection's first file that can be read (on this machine or in the run), not on one
    # (torch's, a library's) that can only show the lines the FX comments quote
    readable = (f for f in dict.fromkeys(f for f, _ in sel.source_lines) if loaders.load_source(f, info.source_roots))
    first = next(readable, files[0])
    file = files[0] if len(files) == 1 else st.selectbox("Source file", files, index=files.index(first),
                                                         key=f"source_file:{first}")
    marked = {ln for f, ln in sel.source_lines if f == file}
    found = loaders.load_source(file, info.source_roots)
    if found:
        st.caption(f"`{found[0]}`" + (f" · {len(marked)} line(s) feed the selection" if marked else ""))
    else:
        st.caption(f"`{file}` is not on this machine: showing the lines the FX comments quote.")
    size = dict(height_px=CODE_HEIGHT_PX, font_px=CODE_PX) if present else dict(height_px=320)
    code_view(panels.source_html(found[1] if found else None, snippets.get(file, {}), marked, **size),
              key="source_code")
    report = loaders.load_time_report(info.key)  # the job's own profile, when it has one
    if report is not None and (times := line_times_text(report.by_line(), file)):
        st.caption(f"Measured in the profile, this file's lines: {times}")
