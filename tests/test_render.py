"""Render functions, without Streamlit, over real corpus captures."""

from __future__ import annotations

import re
import shutil

import pytest
from test_app_fixtures import need_corpus

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.model import FxGraph, FxNode
from compile_viz.linking.model import (
    AOT,
    POST_GRAD,
    GraphIndex,
    GraphSummary,
    GroupLink,
    LaunchLink,
    NodeLink,
)
from compile_viz.render import panels
from compile_viz.render.code_html import highlight_code
from compile_viz.render.fx_dot import (
    GraphView,
    dot_quote,
    fx_dot,
    layout_view,
    neighbourhood,
    selection_ids,
    transitive_reduction,
)
from compile_viz.render.selection import select
from compile_viz.render.summary import Card, cards_html, graph_cards, run_cards
from compile_viz.render.svg import dot_to_svg, mark_svg, svg_panel


@pytest.fixture(scope="module")
def mlp():
    """The backward graph of the corpus's MLP training step, with a small hand-made index over
    its real node and kernel names (the linking layer is tested on its own)."""
    parse = parse_path(str(need_corpus() / "mlp_train_step" / "torch_compile_debug"))
    graph = next(g for g in parse.graphs if g.kind == "backward")
    oc = graph.output_code
    kinds = {k.name: k.kind for k in oc.kernels}
    names = {n.name for n in graph.post_grad_graph.nodes}
    launches, nodes = [], {}
    for la in oc.launches:
        members = tuple(n for n in la.comments.source_nodes if n in names)
        launches.append(LaunchLink(la.index, la.kernel, la.is_extern, "extern" if la.is_extern else kinds[la.kernel],
                                   members, members, (), f"g{la.index}", (f"buf{la.index}",),
                                   (("capture_cases.py", 10 + la.index),), "comments", la.line))
        for n in members:
            old = nodes.get((POST_GRAD, n))
            nodes[(POST_GRAD, n)] = NodeLink(n, POST_GRAD, (old.launches if old else ()) + (la.index,), "")
    groups = tuple(GroupLink(f"g{la.index}", "fused", ("op1", "op2"), (f"buf{la.index}",), ("buf_tmp<1>",), (la.index,))
                   for la in launches)
    index = GraphIndex(graph.id, tuple(launches), nodes, groups, GraphSummary(0, 0, 0, 0, 0, 0, 0.0))
    return graph, index


def test_dot_quote_escapes_quotes_backslashes_and_newlines():
    assert dot_quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_full_graph_has_one_cluster_per_launch_and_marks_inputs(mlp):
    graph, index = mlp
    dot = fx_dot(graph.post_grad_graph, index, GraphView())
    fused = next(la for la in index.launches if la.kernel == "triton_per_fused_gelu_gelu_backward_sum_1")
    assert f'subgraph "cluster_L{fused.index}"' in dot
    primary = {index.node(n.name).launches[0] for n in graph.post_grad_graph.call_nodes if index.node(n.name)}
    assert dot.count("subgraph ") == len(primary)
    assert 'shape="invhouse"' in dot and 'shape="house"' in dot  # inputs and the output
    assert "gelu_backward" in dot or "mul_4" in dot
    svg = dot_to_svg(dot) if shutil.which("dot") else ""
    if svg:
        assert svg.startswith("<svg") and "cluster_L" in svg


def test_selection_marks_nodes_and_cluster(mlp):
    graph, index = mlp
    sel = select(index, POST_GRAD, kernel="triton_per_fused_gelu_gelu_backward_sum_1")
    assert {"mul_4", "sum_2"} <= sel.nodes and len(sel.launches) == 1
    dot = fx_dot(graph.post_grad_graph, index, GraphView(selected_launches=sel.launches, selected_nodes=sel.nodes))
    marked = set(re.findall(r'"([^"]+)" \[[^\]]*penwidth="3"', dot))
    assert {"mul_4", "sum_2"} <= marked


def test_a_selection_shares_the_layout_and_is_marked_on_the_svg(mlp):
    graph, index = mlp
    fx = graph.post_grad_graph
    sel = select(index, POST_GRAD, kernel="triton_per_fused_gelu_gelu_backward_sum_1")
    for collapsed in (False, True):
        base = GraphView(collapsed=collapsed, link="?run=r")
        view = GraphView(collapsed=collapsed, selected_launches=sel.launches, selected_nodes=sel.nodes, link="?run=r")
        assert layout_view(view) == base  # one layout, whatever is selected
    hop = GraphView(selected_launches=sel.launches, selected_nodes=sel.nodes, hops=1)
    assert layout_view(hop) == hop  # k hops: the selection decides what is drawn
    if not shutil.which("dot"):
        pytest.skip("no Graphviz dot")
    (launch,) = sel.launches
    ids = selection_ids(fx, sel.launches, sel.nodes)
    full = mark_svg(dot_to_svg(fx_dot(fx, index, GraphView())), ids)
    marked = set(re.findall(r'<g id="[^"]+" class="node cv-sel">\n<title>([^<]+)</title>', full))
    assert {"mul_4", "sum_2"} <= marked and marked <= sel.nodes
    assert f'<g id="cvC{launch}" class="cluster cv-cluster cv-sel-cluster">' in full
    assert full.count('stroke="#d62828" stroke-width="3"') == len(marked) + 1
    box = mark_svg(dot_to_svg(fx_dot(fx, index, GraphView(collapsed=True))), ids)
    assert f'<g id="cvL{launch}" class="node cv-sel">' in box and box.count("cv-sel") == 1
    assert mark_svg(box, ids) == box  # marking twice changes nothing
    assert mark_svg(box, set()) is box


def test_node_selects_its_kernel(mlp):
    _, index = mlp
    sel = select(index, POST_GRAD, node="sum_1")
    assert sel.kernel == "triton_per_fused_sum_0"
    assert select(index, POST_GRAD, node="no_such_node").launches == frozenset()


def test_collapsed_view_draws_one_box_per_launch_and_expands_the_selected(mlp):
    graph, index = mlp
    dot = fx_dot(graph.post_grad_graph, index, GraphView(collapsed=True, link="?run=r&graph=g"))
    boxes = set(re.findall(r'^  "L(\d+)" \[', dot, re.M))
    assert boxes and "subgraph" not in dot
    assert 'URL="?run=r&graph=g&kernel=' in dot and 'target="_top"' in dot
    first = int(sorted(boxes)[0])
    opened = fx_dot(graph.post_grad_graph, index, GraphView(collapsed=True, expanded=frozenset({first})))
    assert f'subgraph "cluster_L{first}"' in opened and f'"L{first}" [' not in opened


def test_k_hop_neighbourhood_keeps_only_nearby_nodes(mlp):
    graph, index = mlp
    fx = graph.post_grad_graph
    near = neighbourhood(fx, {"sum_1"}, 1)
    assert "sum_1" in near and len(near) < len(fx.nodes)
    dot = fx_dot(fx, index, GraphView(selected_nodes=frozenset({"sum_1"}), hops=1))
    drawn = set(re.findall(r'^\s+"([^"]+)" \[', dot, re.M))
    assert drawn == near


def test_transitive_reduction_drops_implied_edges():
    assert transitive_reduction([("a", "b"), ("b", "c"), ("a", "c")]) == [("a", "b"), ("b", "c")]
    cycle = [("a", "b"), ("b", "a")]
    assert transitive_reduction(cycle) == cycle


def test_hostile_names_are_escaped_in_dot_and_html():
    evil = '<script>alert(1)</script>"\\'
    node = FxNode(evil, "call_function", "aten.add.Tensor", "f32", ("4",), None, (), (), None, 1)
    fx = FxGraph("x.py", "G", (node,), (), (), (), (), ())
    index = GraphIndex("g", (LaunchLink(0, evil, False, "pointwise", (evil,), (evil,), (), evil, (evil,), (), "", 1),),
                       {(POST_GRAD, evil): NodeLink(evil, POST_GRAD, (0,), "")},
                       (GroupLink(evil, "fused", (evil,), (evil,), (evil,), (0,)),), GraphSummary(0, 0, 0, 0, 0, 0, 0.0))
    dot = fx_dot(fx, index, GraphView())
    assert '\\"\\\\' in dot  # the quote and backslash are escaped in DOT strings
    if shutil.which("dot"):
        assert "<script>" not in dot_to_svg(dot)
    assert "<script>" not in panels.groups_html(index, frozenset({0}))
    assert "<script>" not in panels.launches_html([], frozenset())
    assert "<script>" not in panels.source_html(None, {1: evil}, {1})
    assert "<script>" not in highlight_code(evil)


def test_code_is_highlighted_with_file_line_numbers(mlp):
    graph, _ = mlp
    kernel = graph.output_code.kernels[0]
    out = highlight_code(kernel.source, first_line=kernel.source_line, marked=(kernel.source_line,))
    assert f">{kernel.source_line}<" in out.replace(" ", "") or str(kernel.source_line) in out
    assert "background-color" in out and "style=" in out  # inline styles: works in st.html


def test_groups_table_marks_the_selected_group(mlp):
    _, index = mlp
    out = panels.groups_html(index, frozenset({index.launches[2].index}))
    assert out.count("cv-selected") == 1 and "buf_tmp&lt;1&gt;" in out


def test_source_pane_marks_lines_in_the_file_and_falls_back_to_snippets():
    text = "\n".join(f"line {i}" for i in range(1, 21))
    out = panels.source_html(text, {}, {5})
    assert "line" in out and "background-color" in out  # Pygments' hl_lines
    out = panels.source_html(None, {7: "x = y + 1", 9: "return x"}, {9})
    assert "return x" in out and "#fff3bf" in out


def test_summary_cards_count_kernels_and_externs(mlp):
    """The cards and the layout line read one GraphSummary (the linking layer's, not the hand index's)."""
    from compile_viz.linking import build_index
    from compile_viz.render.summary import launch_counts

    index = build_index(mlp[0])
    cards = {c.label: c.value for c in graph_cards(index)}
    assert cards["kernels"] == "2" and cards["extern calls"] == "3" and cards["launches"] == "2"
    assert launch_counts(index.summary) == "2 launches, 3 extern calls"


def test_cards_wrap_and_keep_versions_and_device_whole():
    meta = {"timings": {"compile_s": 28.8}, "versions": {"torch": "2.11.0+cu130", "triton": "3.6.0"},
            "hardware": {"gpu": "NVIDIA H100 80GB HBM3", "device": "cuda"}}
    out = cards_html([Card("kernels", "21", "definitions"), *run_cards(meta), Card("x<y", "<b>", 'a"b')])
    assert "flex-wrap:wrap" in out and "…" not in out and "text-overflow" not in out
    assert ">torch 2.11.0+cu130 · triton 3.6.0<" in out and ">NVIDIA H100 80GB HBM3<" in out
    assert "<b>" not in out and "x&lt;y" in out and 'title="a&quot;b"' in out


def test_svg_panel_keeps_the_natural_size_for_the_widget_to_fit():
    svg = '<svg width="100pt" height="50pt" viewBox="0 0 100 50"></svg>'
    panel = svg_panel(svg, height_px=480)
    assert svg in panel  # the widget reads the natural size from it and scales the drawing to fit
    assert 'data-height="480"' in panel and "max-height:480px" in panel


def test_aot_view_uses_aot_links(mlp):
    graph, index = mlp
    assert select(index, AOT, node="sum_1").launches == frozenset()  # the hand index links post-grad only


def _other_peoples_graphs():
    from tests.conftest import CORPUS, THIRD_PARTY

    sources = sorted((CORPUS / "public").glob("*/")) if (CORPUS / "public").is_dir() else []
    return sources + sorted(THIRD_PARTY.glob("*.zip"))


@pytest.mark.parametrize("source", _other_peoples_graphs(), ids=lambda p: p.name)
def test_every_view_renders_on_captures_nobody_here_wrote(source):
    """Both FX views (full and collapsed), the cards, the groups table and every kernel's
    highlighted code, on each public corpus set (torch 2.0 to 2.12) and third-party capture."""
    from compile_viz.linking import build_index
    from compile_viz.render.code_html import kernel_language

    for graph in parse_path(str(source)).graphs:
        index = build_index(graph)
        for fx_name in (AOT, POST_GRAD):
            fx = graph.artifact(fx_name)
            if fx is None:
                continue
            for view in (GraphView(graph=fx_name), GraphView(graph=fx_name, collapsed=True)):
                dot = fx_dot(fx, index, view)
                assert dot.startswith("digraph") and dot.rstrip().endswith("}")
        assert cards_html(graph_cards(index))
        assert "<table" in panels.groups_html(index, frozenset())
        for kernel in graph.output_code.kernels if graph.output_code else ():
            html = highlight_code(kernel.source, language=kernel_language(kernel.backend), first_line=kernel.source_line)
            assert "<script" not in html.lower()


def test_a_user_triton_kernels_call_is_drawn_in_its_launchs_box():
    """PyTorch's provenance gives the `triton_kernel_wrapper_mutation` node of a user-defined Triton
    kernel (tests/fixtures/unseen/user_triton.zip) to the kernel launched before it as well: the node
    is drawn in the user kernel's own box, so that launch has one to click."""
    from compile_viz.artifacts import parse_path
    from compile_viz.linking import build_index
    from compile_viz.render.fx_dot import GraphView, fx_dot
    from tests.conftest import ROOT

    (g,) = parse_path(str(ROOT / "tests" / "fixtures" / "unseen" / "user_triton.zip")).graphs
    dot = fx_dot(g.post_grad_graph, build_index(g), GraphView())
    box = dot[dot.index('subgraph "cluster_L2"'):]
    box = box[:box.index("  }")]
    assert "scaled_add_kernel_0" in box and '"triton_kernel_wrapper_mutation"' in box
