"""The Compare page: ?run=A&compare=B. Both runs' numbers with deltas, a pair of graphs, their launches
matched by the nodes they cover and coloured by class, and a group's kernels side by side."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from compile_viz.artifacts import DiscoveryError
from compile_viz.compare import (
    GraphMatch,
    MatchGroup,
    Side,
    failed_note,
    graph_costs,
    graph_rows,
    make_side,
    match_pair,
    pairs_of,
    timing_note,
)
from compile_viz.compare import run_rows as summary_rows
from compile_viz.compare.model import SAME
from compile_viz.compare.pairing import format_pairs, parse_pairs
from compile_viz.linking.graph_labels import graph_labels, graph_rank
from compile_viz.linking.model import AOT, POST_GRAD
from compile_viz.measurements import read_run
from compile_viz.render.code_html import highlight_code, kernel_language
from compile_viz.render.compare import (
    class_legend_html,
    code_diff_html,
    counts_html,
    group_label,
    groups_html,
    recolour_dot,
    rows_html,
)
from compile_viz.render.fx_dot import GraphView, fx_dot, selection_ids
from compile_viz.render.svg import LayoutError, dot_to_svg, mark_svg, svg_panel
from compile_viz.store import StoreError, bundled_runs
from compile_viz.ui import loaders, state
from compile_viz.ui.graph_widget import graph_widget
from compile_viz.ui.page_registry import page_url
from compile_viz.ui.rank_picker import pick_rank
from compile_viz.ui.runs import BUNDLED, default_run_key
from compile_viz.ui.unknown import say_unknown

GRAPHS_SHOWN_UP_TO = 300  # launches per graph: above, both graphs are drawn only on request


def side(key: str, rank: int | None = None) -> Side:
    """Return the Side of a run key, from the cached parse and indexes (StoreError, DiscoveryError);
    with `rank`, that rank's graphs only (the two sides of a comparison can be two ranks of one job)."""
    info = loaders.run_info(key)
    parse = loaders.load_parse(key)
    title = info.title
    if rank is not None:
        parse = replace(parse, graphs=tuple(g for g in parse.graphs if graph_rank(g) == rank))
        title = f"{title} · rank {rank}"
    summary, measurement = read_run(info.run_dir, info.meta) if info.run_dir else (None, None)
    indexes = {g.id: loaders.load_index(key, g.id) for g in parse.graphs}
    return make_side(key, title, parse, info.meta, measurement, summary, indexes)


def run_ranks(key: str) -> list[int]:
    """The ranks whose graphs a run holds (none for a run of one rank)."""
    ranks = sorted({r for g in loaders.load_parse(key).graphs if (r := graph_rank(g)) is not None})
    return ranks if len(ranks) > 1 else []


@st.cache_resource(max_entries=32, show_spinner="Matching the launches of both runs…")
def _match(a_key: str, b_key: str, a_id: str | None, b_id: str | None,
           a_rank: int | None = None, b_rank: int | None = None) -> GraphMatch:
    return match_pair(side(a_key, a_rank), side(b_key, b_rank), a_id, b_id)


def _run_keys() -> list[str]:
    keys = [r.id for r in loaders.get_store().list_runs(status="complete", limit=200)]
    return keys + [BUNDLED + b.name for b in bundled_runs()]


def _pickers(a_key: str, b_key: str) -> None:
    """Two run pickers kept in ?run= and ?compare=, and a swap button."""
    keys = _run_keys()
    for key in (a_key, b_key):
        if key and key not in keys:
            keys.insert(0, key)
    c1, c2, c3 = st.columns([5, 5, 1])
    picked_a = c1.selectbox("Run A", keys, index=keys.index(a_key) if a_key in keys else None, key=f"cmp_a:{a_key}")
    picked_b = c2.selectbox("Run B", keys, index=keys.index(b_key) if b_key in keys else None, key=f"cmp_b:{b_key}")
    swap = c3.button("Swap", disabled=not (a_key and b_key), help="A becomes B and B becomes A")
    if swap:
        picked_a, picked_b = b_key, a_key
    if (picked_a or "") != a_key or (picked_b or "") != b_key:
        state.update(run=picked_a, compare=picked_b, pair=None, gpair=None, group=None)
        st.rerun()


def page() -> None:
    a_key = state.get("run") or default_run_key(loaders.get_store()) or ""
    b_key = state.get("compare")
    _pickers(a_key, b_key)
    if not (a_key and b_key):
        st.info("Pick two runs to compare: what changed in fusion, kernels and time between them.")
        return
    try:
        a_rank, b_rank = _rank_pickers(a_key, b_key)
        a, b = side(a_key, a_rank), side(b_key, b_rank)
    except (StoreError, DiscoveryError) as e:
        st.error(str(e))
        return
    st.subheader(f"{a.title}  vs  {b.title}")
    st.html(rows_html(summary_rows(a, b), "A", "B"))
    if note := timing_note(a, b):
        (st.caption if note[0] else st.warning)(note[1])
    failed = failed_note(a, b)
    if failed:
        st.warning(failed)
    overrides = parse_pairs(state.get("pair"))
    pairs = pairs_of(a, b, overrides)
    _pair_of_compile(a_key, b_key, a, b, pairs)
    a_id, b_id = _graph_pair(a, b, pairs, overrides)
    pair_rows = rows_html(graph_rows(a.indexes.get(a_id), b.indexes.get(b_id), graph_costs(a, a_id),
                                     graph_costs(b, b_id)), "A", "B")
    if failed:  # the pair's numbers, no launch matched as same or changed
        st.markdown("##### This pair of graphs")
        st.html(pair_rows)
        return
    gm = _match(a_key, b_key, a_id, b_id, a_rank, b_rank)
    left, right = st.columns([2, 3], gap="small")
    with left:
        st.markdown("##### This pair of graphs")
        st.html(pair_rows)
    with right:
        st.markdown("##### Launches matched by the FX nodes they cover")
        st.html(counts_html(dict(gm.counts())))
        chosen = _group_picker(gm)
        st.html(groups_html(gm.groups, chosen, height_px=360))
    _graphs_by_class(a_key, b_key, gm, chosen)
    if chosen is not None:
        _kernels_side_by_side(a, b, gm, gm.groups[chosen])


def _rank_pickers(a_key: str, b_key: str) -> tuple[int | None, int | None]:
    """A rank picker for each side whose run has several ranks (?rank= for A, ?compare_rank= for B)."""
    a_ranks, b_ranks = run_ranks(a_key), run_ranks(b_key)
    if not (a_ranks or b_ranks):
        return None, None
    c1, c2 = st.columns(2)
    reset = ("gpair", "pair", "group", "side", "launch")  # pairs and groups are of the ranks' graphs
    return (pick_rank(a_ranks, page="compare", label="Rank of A", container=c1, reset=reset),
            pick_rank(b_ranks, page="compare", param="compare_rank", label="Rank of B", container=c2, reset=reset))


def _pair_of_compile(a_key: str, b_key: str, a: Side, b: Side, pairs: list) -> None:
    """?cid= (a link from the ranks' divergences): show the first pair whose A graph that compile id
    made, else whose B graph did (a recompile on B's rank only)."""
    cid = state.get("cid")
    if not cid:
        return
    la = graph_labels(a.parse.graphs, loaders.trace_logs(a_key))
    lb = graph_labels(b.parse.graphs, loaders.trace_logs(b_key))
    found = next((i for i, (a_id, _) in enumerate(pairs) if a_id and la[a_id].compile_id == cid), None)
    if found is None:
        found = next((i for i, (_, b_id) in enumerate(pairs) if b_id and lb[b_id].compile_id == cid), None)
    if found is None:
        known = {x.compile_id: f"[{x.compile_id}]" for x in (*la.values(), *lb.values()) if x.compile_id}
        say_unknown("compare", "cid", cid, known, noun="graph of compile id", where="either side",
                    showing="the first pair of graphs")
        return
    state.update(cid=None, gpair=found or None, group=None)


def _pair_label(pair: tuple[str | None, str | None], a: Side, b: Side) -> str:
    ga, gb = (a.parse.graph(pair[0]) if pair[0] else None), (b.parse.graph(pair[1]) if pair[1] else None)
    kind = (ga or gb).kind
    return f"{kind} · A {ga.folder.name if ga else '(none)'} ↔ B {gb.folder.name if gb else '(none)'}"


def _graph_pair(a: Side, b: Side, pairs: list, overrides: dict) -> tuple[str | None, str | None]:
    """A picker of graph pairs (?gpair=N) and one to re-pair A's graph with another of B (?pair=)."""
    n = state.get_int("gpair") or 0
    n = n if 0 <= n < len(pairs) else 0
    c1, c2 = st.columns(2)
    picked = c1.selectbox("Graphs", range(len(pairs)), index=n, format_func=lambda i: _pair_label(pairs[i], a, b),
                          key=f"gpair_sel:{n}:{state.get('pair')}")
    if picked != n:
        state.update(gpair=picked or None, group=None)
        st.rerun()
    a_id, b_id = pairs[n]
    if a_id is not None:
        options = [None] + [g.id for g in b.parse.graphs]
        labels = {g.id: f"{g.kind} · {g.folder.name}" for g in b.parse.graphs}
        repair = c2.selectbox("Pair A's graph with", options, index=options.index(b_id),
                              format_func=lambda g: "(no graph of B)" if g is None else labels[g],
                              key=f"repair_sel:{a_id}:{b_id}", help="Graphs pair by kind and order; pick another")
        if repair != b_id:
            state.update(pair=format_pairs({**overrides, a_id: repair}), group=None)
            st.rerun()
    return a_id, b_id


def _group_picker(gm: GraphMatch) -> int | None:
    """A picker of one group (?group=N); by default the first that changed."""
    if not gm.groups:
        return None
    n = state.get_int("group")
    launch, side_name = state.get_int("launch"), state.get("side")
    if launch is not None and side_name in ("a", "b"):  # a launch box's link: its group
        group = gm.group_of(side_name, launch)
        n = gm.groups.index(group) if group is not None else n
        state.update(launch=None, side=None, kernel=None, group=n)
    if n is None or not 0 <= n < len(gm.groups):
        n = next((i for i, g in enumerate(gm.groups) if g.cls != SAME), 0)
    picked = st.selectbox("Group", range(len(gm.groups)), index=n, format_func=lambda i: group_label(i, gm.groups[i]),
                          key=f"group_sel:{n}", help="Type to search kernels")
    if picked != n:
        state.update(group=picked)
        st.rerun()
    return n


def _kernel(side_: Side, graph_id: str | None, kernel: str):
    graph = side_.parse.graph(graph_id) if graph_id else None
    oc = graph.output_code if graph else None
    return oc.kernel(kernel) if oc else None


def _kernels_side_by_side(a: Side, b: Side, gm: GraphMatch, group: MatchGroup) -> None:
    """The group's first kernel of each run, side by side; a text diff when they are of the same kind."""
    st.markdown("##### The two runs' kernels")
    cols = st.columns(2, gap="small")
    found = []
    for col, name, side_, graph_id, refs in ((cols[0], "A", a, gm.a, group.a), (cols[1], "B", b, gm.b, group.b)):
        with col:
            if not refs:
                st.info(f"No launch of {name} covers these nodes.")
                found.append(None)
                continue
            pick = refs[0] if len(refs) == 1 else refs[st.radio(f"{name}'s launches", range(len(refs)), horizontal=True,
                                                                format_func=lambda i, r=refs: f"#{r[i].index} {r[i].kernel}",
                                                                key=f"refs_{name}")]
            kernel = _kernel(side_, graph_id, pick.kernel)
            st.markdown(f"**{name}: `{pick.kernel}`** · launch #{pick.index} · {pick.kind.replace('_', ' ')}")
            if kernel is None:
                st.caption("An extern call: Inductor generated no code for it, it calls a library.")
            else:
                st.html(highlight_code(kernel.source, language=kernel_language(kernel.backend),
                                       first_line=kernel.source_line, height_px=420))
            found.append((pick, kernel))
    if all(found) and all(k for _, k in found) and found[0][0].kind == found[1][0].kind:
        (ra, ka), (rb, kb) = found
        with st.expander("Text diff of the two kernels", expanded=True):
            st.html(code_diff_html(ka.source, kb.source, f"A {ra.kernel}", f"B {rb.kernel}"))


@st.cache_data(max_entries=64, show_spinner="Laying out the graph…")
def _class_svg(key: str, graph_id: str, fx_name: str, classes: tuple[tuple[int, str], ...], link: str) -> str:
    graph, index = loaders.load_parse(key).graph(graph_id), loaders.load_index(key, graph_id)
    view = GraphView(graph=fx_name, collapsed=True, link=link)
    return dot_to_svg(recolour_dot(fx_dot(graph.artifact(fx_name), index, view), dict(classes)))


def _graphs_by_class(a_key: str, b_key: str, gm: GraphMatch, chosen: int | None) -> None:
    """Both graphs, one box per launch, filled by its group's class; the chosen group outlined in both,
    and a click on a launch of either picks its group."""
    big = max(len(gm.launch_classes("a")), len(gm.launch_classes("b"))) > GRAPHS_SHOWN_UP_TO
    if not st.toggle("Both graphs coloured by class", value=not big, key="cmp_graphs"):
        return
    st.html(class_legend_html())
    group = gm.groups[chosen] if chosen is not None else None
    for col, side_name, key, graph_id in zip(st.columns(2, gap="small"), "ab", (a_key, b_key), (gm.a, gm.b), strict=True):
        with col:
            if graph_id is None:
                st.info(f"No graph of {side_name.upper()} in this pair.")
                continue
            graph = loaders.load_parse(key).graph(graph_id)
            fx_name = AOT if graph.aot_graph is not None else POST_GRAD
            try:
                svg = _class_svg(key, graph_id, fx_name, tuple(sorted(gm.launch_classes(side_name).items())),
                                 link=_here(side=side_name))
            except LayoutError as e:
                st.error(str(e))
                continue
            refs = (group.a if side_name == "a" else group.b) if group else ()
            svg = mark_svg(svg, selection_ids(graph.artifact(fx_name), frozenset(r.index for r in refs), frozenset()))
            graph_widget(svg_panel(svg, height_px=480), key=f"cmp-graph-{side_name}",
                         on_select=lambda click, s=side_name: _clicked(gm, s, click))


def _here(**params: object) -> str:
    """This comparison's link (runs, ranks, pair of graphs) with `params`: a launch box's link in
    either graph adds its `launch` and opens on its group (_group_picker)."""
    keep = ("run", "compare", "rank", "compare_rank", "pair", "gpair")
    return page_url("compare", **{k: state.get(k) for k in keep}, **params)


def _clicked(gm: GraphMatch, side_name: str, click: dict) -> None:
    """A click on a launch box: pick its group (its counterpart is outlined in the other graph)."""
    try:
        launch = int(click.get("launch") or "")
    except ValueError:
        return
    group = gm.group_of(side_name, launch)
    if group is not None:
        state.update(group=gm.groups.index(group))
        st.rerun()
