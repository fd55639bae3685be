"""The viewer page: a run, a graph, and its FX graph, code, fusion groups and source, linked."""

from __future__ import annotations

from collections import Counter

import streamlit as st

from compile_viz.artifacts import DiscoveryError
from compile_viz.artifacts.trace.model import TraceParse
from compile_viz.linking.graph_labels import graph_labels, graph_rank
from compile_viz.linking.hierarchy import HIERARCHY_ABOVE, first_open
from compile_viz.linking.model import AOT, POST_GRAD
from compile_viz.render.cudagraphs import skip_markdown
from compile_viz.render.fx_dot import GraphView
from compile_viz.render.kernel_names import short_kernel_name
from compile_viz.render.notes import ARTIFACT_NOTES
from compile_viz.render.selection import select
from compile_viz.render.summary import (
    Card,
    cards_html,
    graph_break_rows,
    graph_cards,
    launch_counts,
    run_cards,
)
from compile_viz.store import StoreError
from compile_viz.ui import hierarchy_ui, loaders, panes, state
from compile_viz.ui.compile_section import compile_section
from compile_viz.ui.export_section import export_section
from compile_viz.ui.fusion_panel import fusion_panel
from compile_viz.ui.ladder_row import ladder_row
from compile_viz.ui.lessons_page import lesson_bar
from compile_viz.ui.perf_panel import kernel_cost_caption, perf_panel, wrong_banner
from compile_viz.ui.present import GRAPH_HEIGHT_PX, on
from compile_viz.ui.rank_picker import pick_rank
from compile_viz.ui.runs import default_run_key, teaching_note
from compile_viz.ui.share_button import share_button
from compile_viz.ui.time_section import time_section
from compile_viz.ui.unknown import nearest, nearest_number, say_unknown

# Above this many entries a picker (kernel launch, FX node) is a search box: on the 48-layer backward,
# selectboxes of 1,499 launches and 5,884 nodes cost ~0.2 s of every page load in the browser.
LIST_MAX = 1000
COLLAPSE_ABOVE = 300  # nodes: above this a graph opens collapsed, one box per launch
VIEWS = {POST_GRAD: "post-grad graph", AOT: "AOT graph"}
LAYOUTS = ("auto", "modules", "collapsed", "full")


def page() -> None:
    key = state.get("run") or default_run_key(loaders.get_store())
    if not key:
        st.info("No runs yet: compile a model on the Compile page, or load a run on the Runs page.")
        return
    try:
        info = loaders.run_info(key)
    except StoreError as e:
        st.error(str(e))
        return
    st.subheader(info.title)
    lesson_bar()  # opened from a lesson: the step's title and text, back and next
    if not info.ok:
        _failure(info)
    wrong_banner(info)  # wrong results first: the ladder and the check are at the bottom
    for skip in loaders.cudagraph_skips(key):  # reduce-overhead without its CUDA graphs: why, and what to do
        if on():  # projector mode: one short line, so the code and its source stay in a 720-pixel view
            st.markdown(f":orange-background[{skip_markdown(skip, compact=True)}]")
        else:
            st.warning(skip_markdown(skip))
    package_run = info.meta.get("package_run") or {}
    if package_run.get("status") == "failed":  # capture --aoti: compiled, but the package would not run
        st.warning(f"Compiled ahead of time; {package_run.get('reason') or 'the package did not run'}.")
    try:
        parse = loaders.load_parse(key)
    except DiscoveryError as e:
        if info.ok:  # a failed run that wrote no graph has said all there is to say
            st.error(str(e))
        return
    if not info.ok:
        n = len(parse.graphs)
        st.caption(f"Compiled before the failure: {n} graph{'s' if n != 1 else ''}. What Inductor would have "
                   "compiled after the failure (a backward, say) is not here.")
    if not parse.graphs:  # a trace of a compile that failed before Inductor, say
        st.info("This run holds no compiled graph: its compiles are on the Compiles page.")
        return
    present = on()  # projector mode: code and source first, in large type; the pickers in the sidebar
    if not present:
        share_button(info)  # the run as one HTML file, made on a click
        note = teaching_note(info.meta)
        if note:
            with st.expander("About this model"):
                st.markdown(note)
    controls = st.sidebar if present else st.container()
    with controls:
        graph = _graph_selector(key, parse)
    index = loaders.load_index(key, graph.id)
    if not present:
        _cards(info.meta, parse, graph, index)
    with controls:
        fx_name, view, sel = _controls(info.key, graph, index, present=present)
    on_select = lambda click: _clicked(info.key, graph.id, index, fx_name, view, click)  # noqa: E731
    if present:
        _projected(info, parse, graph, index, fx_name, view, sel, on_select)
    else:
        _panes(info, graph, index, fx_name, view, sel, on_select)
    # Lazy sections: drawn only while open (a 48-layer backward refuses thousands of pairs).
    why_box = st.expander("Why not fused? Inductor's fusion decisions", expanded=bool(state.get("why")),
                          key="why_section", on_change="rerun")
    if why_box.open:
        with why_box:
            fusion_panel(graph, index, sel)
    compile_section(key, parse, graph)  # guards and phase timings of this graph's compile
    export_section(graph)  # ahead of time: the exported program's signature
    time_section(key, graph.id)  # the job's own profile, when it has one
    if info.meta.get("measure"):
        with st.expander("Eager vs compiled: did compiling pay off?", expanded=True):
            picked = perf_panel(info, graph.id, sel.kernel, launches=len(index.launches))
            ladder_row(info)  # where a wrong result starts: the backend ladder
        if picked and picked != sel.kernel:
            state.update(kernel=picked, launch=None, node=None)
            st.rerun()
    warnings = [str(w) for w in (*parse.warnings, *graph.warnings)] + list(index.warnings)
    warn_box = st.expander(f"Parse warnings ({len(warnings)})", key="warnings_section", on_change="rerun")
    if warn_box.open:
        with warn_box:
            st.text("\n".join(warnings) or "none")


def _panes(info, graph, index, fx_name, view, sel, on_select) -> None:
    """The four linked panes: graph and code, then fusion groups and source."""
    left, right = st.columns([3, 2], gap="small")
    with left:
        if view.modules and not view.hops:
            hierarchy_ui.caption(loaders.load_hierarchy(info.key, graph.id, fx_name), view.opened)
        panes.graph_pane(info, graph, index, fx_name, view, on_select)
    with right:
        panes.code_pane(graph, index, sel)
        cost = kernel_cost_caption(info, graph.id, sel.kernel) if sel.kernel else ""
        if cost:
            st.caption(f"Measured: {cost}")
    left, right = st.columns(2, gap="small")
    with left:
        st.markdown("##### Fusion groups")
        panes.groups_pane(graph, index, sel)
    with right:
        st.markdown("##### Your source")
        panes.source_pane(info, graph, sel)


def _projected(info, parse, graph, index, fx_name, view, sel, on_select) -> None:
    """Projector mode: the selected launch's code beside the source lines it came from, in view at
    1280 x 720; below them the graph fitted to the screen, the cards and the fusion groups."""
    left, right = st.columns([3, 2], gap="small")
    with left:
        panes.code_pane(graph, index, sel, present=True)
    with right:
        panes.source_pane(info, graph, sel, present=True)
    if view.modules and not view.hops:
        hierarchy_ui.caption(loaders.load_hierarchy(info.key, graph.id, fx_name), view.opened)
    panes.graph_pane(info, graph, index, fx_name, view, on_select, height_px=GRAPH_HEIGHT_PX)
    _cards(info.meta, parse, graph, index)
    st.markdown("##### Fusion groups")
    panes.groups_pane(graph, index, sel)


def _failure(info) -> None:
    """Show why a run failed: one line, the rest (more of the reason, the stderr tail) in an expander."""
    first, _, rest = info.reason.strip().partition("\n")
    st.error(f"This run failed: {first}")
    if rest.strip() or info.stderr_tail:
        with st.expander("stderr (last lines)"):
            st.code("\n".join(t for t in (rest.strip(), info.stderr_tail) if t), language=None)


def _graph_selector(key: str, parse):
    """The graph picker (?graph=); for a run of several ranks, a rank picker (?rank=) first, and the
    graphs named by rank, compile id, frame and piece. A graph the run does not have is said."""
    graphs = list(parse.graphs)
    ranks = {g.id: graph_rank(g) for g in graphs}
    labels = {g.id: f"{g.kind} · {g.folder.name}" for g in graphs}
    asked = state.get("graph")
    if len({r for r in ranks.values() if r is not None}) > 1:
        named = graph_labels(graphs, _trace_logs(key, parse))
        labels = {gid: label.text for gid, label in named.items()}
        per_rank = Counter(r for r in ranks.values() if r is not None)
        rank = pick_rank(list(per_rank), page="viewer", counts={r: f"{n} graphs" for r, n in per_rank.items()},
                         implied=ranks.get(asked), reset=("graph", "open", *state.SELECTION_KEYS))
        graphs = [g for g in graphs if ranks[g.id] == rank]
    elif len(set(labels.values())) < len(labels):  # the same folder name twice: the id tells them apart
        labels = {g.id: f"{g.kind} · {g.id}" for g in graphs}
    ids = [g.id for g in graphs]
    current = asked if asked in ids else ids[0]
    if asked and asked != current:  # labels hold every rank's graphs: the nearest may be another rank's
        near = nearest(asked, labels)
        say_unknown("viewer", "graph", asked, labels, noun="graph", where="this run", showing=labels[current],
                    near=near, also={"rank": ranks.get(near), "open": None, **dict.fromkeys(state.SELECTION_KEYS)})
    choice = st.selectbox("Graph", ids, index=ids.index(current), format_func=labels.get, key=f"graph_sel:{current}")
    if choice != asked:
        state.update(graph=choice)
        if current != choice:
            state.clear_selection()
            state.update(open=None)  # group ids are per graph
            st.rerun()
    return parse.graph(choice)


def _trace_logs(key: str, parse) -> tuple:
    """The run's TORCH_TRACE logs, for naming its graphs (none when it has no trace)."""
    if isinstance(parse, TraceParse):
        return parse.logs
    return loaders.trace_logs(key)


def _cards(meta, parse, graph, index) -> None:
    breaks = graph_break_rows(meta, parse.graph_breaks)
    facts = run_cards(meta)  # compile time, versions, device: in one wrapping row, never cut short
    timing = [c for c in facts if c.label == "compile time"]
    cards = [*graph_cards(index), *timing, Card("graph breaks", str(len(breaks)), ARTIFACT_NOTES["graph_break"]),
             *(c for c in facts if c not in timing)]
    st.html(cards_html(cards))
    if breaks:
        with st.expander(f"Graph breaks ({len(breaks)})"):
            for b in breaks:
                st.markdown(f"- {b.reason}" + (f" · `{b.where}`" if b.where else "") + (f" · `{b.code}`" if b.code else ""))
            st.caption(ARTIFACT_NOTES["graph_break"])


def _controls(key: str, graph, index, *, present: bool = False):
    """Return (fx graph name, GraphView, Selection) from the URL and the widgets (zoom and pan: in the graph's pane)."""
    c1, c2, c3 = [st.container()] * 3 if present else st.columns([2, 3, 1])  # the sidebar: one under another
    fx_name = state.get("view", POST_GRAD)
    if fx_name not in VIEWS or (fx_name == POST_GRAD and graph.post_grad_graph is None):
        fx_name = AOT if graph.post_grad_graph is None else POST_GRAD
    picked = c1.radio("FX graph", list(VIEWS), index=list(VIEWS).index(fx_name), format_func=VIEWS.get,
                      horizontal=True, key=f"view_sel:{fx_name}")
    if picked != fx_name:
        state.update(view=picked, node=None)  # node names are the graph's own; the kernel is kept
        st.rerun()
    fx = graph.artifact(fx_name)
    n_nodes = len(fx.nodes) if fx else 0
    layout = state.get("layout", "auto")
    layout = layout if layout in LAYOUTS else "auto"
    lay = c2.radio(f"Layout ({n_nodes} nodes, {launch_counts(index.summary)})", LAYOUTS,
                   index=LAYOUTS.index(layout), horizontal=True, key=f"layout_sel:{layout}",
                   help=f"modules: launches grouped by module, opened one level at a time; collapsed: one box "
                        f"per launch; full: every node. auto: modules above {HIERARCHY_ABOVE} launches, "
                        f"collapsed above {COLLAPSE_ABOVE} nodes")
    if lay != layout:
        state.update(layout=lay)
        st.rerun()
    hops = state.get_int("hops") or 0
    new_hops = c3.number_input("k-hop", 0, 10, hops, key=f"hops_sel:{hops}",
                               help="0: the whole graph. k > 0: only nodes within k edges of the selection")
    if new_hops != hops:
        state.update(hops=new_hops or None)
        st.rerun()
    sel = _selection(index, fx_name, fx, present=present)
    modules = fx is not None and (layout == "modules" or (layout == "auto" and len(index.launches) > HIERARCHY_ABOVE))
    collapsed = modules or layout == "collapsed" or (layout == "auto" and n_nodes > COLLAPSE_ABOVE)
    hops = hops if not sel.empty else 0
    opened: frozenset[str] = frozenset()
    if modules and not hops:  # only the open groups are laid out; the selection's path is kept open
        h = loaders.load_hierarchy(key, graph.id, fx_name)
        opened = hierarchy_ui.opened_groups(h, first_open(h), sel.launches)
    # Collapsed stays collapsed on a selection: its launch is marked in place, drawn apart (panes).
    view = GraphView(graph=fx_name, collapsed=collapsed, selected_launches=sel.launches, selected_nodes=sel.nodes,
                     hops=hops, modules=modules, opened=opened, link=state.link_prefix(), short_names=present)
    return fx_name, view, sel


def _picker(col, label: str, labels: dict, now, *, noun: str):
    """A selectbox of `labels` ({value: text}) with `now` picked; above LIST_MAX entries, a search
    box instead: the text of one entry (or its start, up to a space: "#12"), or part of several,
    which are then listed. Return the value picked (None: none; `now` while nothing new is)."""
    if len(labels) <= LIST_MAX:
        options = [None, *labels]
        return col.selectbox(label, options, index=options.index(now), key=f"{noun}_sel:{now}",
                             format_func=lambda v: "(none)" if v is None else labels[v], help=f"Type to search {noun}s")
    shown_now = labels[now] if now is not None else ""
    query = col.text_input(label, value=shown_now, key=f"{noun}_find:{now}", placeholder=f"search {len(labels)} {noun}s",
                           help=f"A {noun}'s name, or part of it; Enter. Empty: none selected").strip()
    if query == shown_now:
        return now
    if not query:
        return None
    matches = [v for v, text in labels.items() if text == query or text.startswith(query + " ")] or \
              [v for v, text in labels.items() if query in text]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        col.caption(f"No {noun} contains that text.")
        return now
    listed = matches[:LIST_MAX]
    more = f" (the first {len(listed)})" if len(matches) > len(listed) else ""
    pick = col.selectbox(f"{len(matches)} {noun}s match{more}", [None, *listed], key=f"{noun}_match:{query}",
                         format_func=lambda v: "(pick one)" if v is None else labels[v])
    return now if pick is None else pick


def _clicked(key: str, graph_id: str, index, fx_name, view: GraphView, click: dict) -> None:
    """A click in the graph: a node selects itself and its kernel, a kernel box its launch, a
    group box opens, an open group's title closes."""
    node = click.get("node") or ""
    if not node and not click.get("kernel") and (click.get("open") or click.get("close")):
        hierarchy_ui.toggle(loaders.load_hierarchy(key, graph_id, fx_name), click)
    elif node:
        s = select(index, fx_name, node=node)
        first = min(s.launches) if s.launches else None
        state.update(node=node, kernel=index.launches[first].kernel if first is not None else None, launch=first)
    else:
        state.update(kernel=click.get("kernel") or None, launch=click.get("launch") or None, node=None)
    st.rerun()


def _known_selection(index, fx_name, fx) -> tuple[str, int | None, str]:
    """The URL's kernel, launch and node, each where this graph has it; one it has not is said (with
    the nearest it has, linked) and left out: a stale link never selects something else unsaid."""
    kernel, launch, node = state.get("kernel"), state.get_int("launch"), state.get("node")
    first = {}
    for la in index.launches:
        first.setdefault(la.kernel, la.index)
    if kernel and kernel not in first:
        near = nearest(kernel, {k: k for k in first})
        say_unknown("viewer", "kernel", kernel, {k: k for k in first}, noun="kernel", where="this graph",
                    showing="no selection", near=near, also={"launch": first.get(near), "node": None})
        kernel, launch = "", None
    raw = state.get("launch")
    if raw and (launch is None or not 0 <= launch < len(index.launches)
                or (kernel and index.launches[launch].kernel != kernel)):
        known = {str(la.index): f"#{la.index} {la.kernel}" for la in index.launches if la.kernel == kernel or not kernel}
        near = nearest_number(raw, known)
        say_unknown("viewer", "launch", raw, known, noun=f"launch of {kernel}" if kernel else "launch",
                    where="this graph", showing=f"every launch of {kernel}" if kernel else "no selection", near=near,
                    also={"kernel": index.launches[int(near)].kernel if near else None, "node": None})
        launch = None
    if node and (fx is None or fx.node(node) is None):
        known = {n.name: n.name for n in fx.nodes} if fx else {}
        say_unknown("viewer", "node", node, known, noun="node", where=f"this {VIEWS.get(fx_name, 'graph')}",
                    showing="no node selected", also={"kernel": None, "launch": None})
        node = ""
    return kernel, launch, node


def _selection(index, fx_name, fx, *, present: bool = False):
    """Kernel and node pickers, kept in the URL; return the Selection."""
    kernel, launch, node = _known_selection(index, fx_name, fx)
    sel = select(index, fx_name, kernel=kernel, launch=launch, node=node)
    c1, c2, c3 = [st.container()] * 3 if present else st.columns([3, 3, 1])
    current = min(sel.launches) if sel.launches else None
    if present:  # short names a room can read; the generated one is over the code
        labels = {la.index: f"#{la.index} {short_kernel_name(la.kernel)}" for la in index.launches}
    else:
        labels = {la.index: f"#{la.index} {la.kernel} ({la.kind.replace('_', ' ')})" for la in index.launches}
    picked = _picker(c1, "Kernel launch", labels, current, noun="kernel")
    if picked != current:
        la = index.launches[picked] if picked is not None else None
        state.update(kernel=la.kernel if la else None, launch=picked, node=None)
        st.rerun()
    node_now = node or None
    picked_node = _picker(c2, "FX node", {n.name: n.name for n in fx.nodes} if fx else {}, node_now, noun="node")
    if picked_node != node_now:
        s = select(index, fx_name, node=picked_node or "")
        first = min(s.launches) if s.launches else None
        state.update(node=picked_node, kernel=index.launches[first].kernel if first is not None else None,
                     launch=first)
        st.rerun()
    if c3.button("Clear", disabled=sel.empty):
        state.clear_selection()
        st.rerun()
    return sel
