"""Big graphs in layers (issue 12): launches grouped by module, repeated blocks seen as such, the
first view a handful of boxes, and only what is open laid out. Real H100 captures: the bundled
48-block gpt_deep and a 48-layer transformers GPT-2 (tests/fixtures/scale)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.trace.module_paths import module_of, read_dynamo_inputs
from compile_viz.linking import build_index
from compile_viz.linking.hierarchy import (
    MAX_BOXES,
    PARAMETERS,
    REPETITION,
    LaunchGroup,
    first_open,
    graph_hierarchy,
    tandem_repeat,
)
from compile_viz.render.fx_dot import GraphView
from compile_viz.render.hierarchy_dot import group_ids, hierarchy_dot, visible_units
from tests.conftest import SAMPLE_RUNS, corpus_sets
from tests.test_app_fixtures import fresh_store, no_errors, run_app

ROOT = Path(__file__).resolve().parents[1]
GPT_DEEP = SAMPLE_RUNS / "gpt_deep.zip"
GPT2_DEEP = ROOT / "tests" / "fixtures" / "scale" / "gpt2_deep.zip"


def _hierarchies(path: Path, inputs=None):
    parse = parse_path(str(path))
    inputs = read_dynamo_inputs(str(path)) if inputs is None else inputs
    for g in parse.graphs:
        index = build_index(g)
        yield g, index, graph_hierarchy(parse.graphs, g, index, inputs)


def _leaves(group: LaunchGroup) -> list[int]:
    out = []
    for c in group.children:
        out.extend([c] if isinstance(c, int) else _leaves(c))
    return out


def _first_view_boxes(h) -> int:
    return len(set(visible_units(h, first_open(h)).values()))


def test_dynamo_input_names_give_module_paths():
    assert module_of("L_self_modules_blocks_modules_3_modules_qkv_parameters_weight_") == ("blocks.3.qkv", "weight")
    assert module_of("L_self_modules_transformer_modules_h_modules_0_modules_attn_modules_c_attn_parameters_bias_") \
        == ("transformer.h.0.attn.c_attn", "bias")
    assert module_of("L_idx_") == (None, "L_idx_")


@pytest.mark.parametrize("path, blocks", [(GPT_DEEP, "blocks"), (GPT2_DEEP, "transformer.h")])
def test_48_layers_are_one_pattern_seen_48_times(path, blocks):
    for g, index, h in _hierarchies(path):
        assert h.evidence == PARAMETERS
        assert sorted(_leaves(h.root)) == list(range(len(index.launches)))  # each launch once
        layers = h.groups[blocks]
        assert len(layers.children) == 48
        assert all(isinstance(c, LaunchGroup) for c in layers.children)
        assert layers.pattern.startswith(("48 × the same", "47 of 48 alike")), layers.pattern
        assert _first_view_boxes(h) <= MAX_BOXES, g.id
        inside = layers.children[17].launches[0]
        path_ = h.path(inside)
        assert path_[path_.index(blocks) + 1] == layers.children[17].id
        assert layers.children[17].id.endswith((".17", ".30"))  # backward runs the layers in reverse


def test_without_the_trace_the_repeats_are_found_by_structure():
    for g, index, h in _hierarchies(GPT_DEEP, inputs=[]):
        assert h.evidence == REPETITION
        repeats = [c for c in h.groups.values() if c.kind == "repeat"]
        assert max(len(r.children) for r in repeats) >= 40, g.id
        assert sorted(_leaves(h.root)) == list(range(len(index.launches)))
        assert _first_view_boxes(h) <= MAX_BOXES


@given(st.lists(st.sampled_from("abcde"), min_size=1, max_size=6), st.integers(3, 12),
       st.lists(st.sampled_from("xyz"), max_size=8), st.lists(st.sampled_from("xyz"), max_size=8))
@settings(max_examples=200, deadline=None)
def test_tandem_repeat_covers_at_least_the_planted_run(pattern, count, before, after):
    seq = before + pattern * count + after
    found = tandem_repeat(seq)
    assert found is not None
    start, period, k = found
    assert period * k >= len(pattern) * count and k >= 3
    assert seq[start: start + period * k] == seq[start: start + period] * k


def test_every_corpus_graph_gets_a_hierarchy_holding_each_launch_once():
    for path in corpus_sets():
        for g, index, h in _hierarchies(path):
            assert sorted(_leaves(h.root)) == list(range(len(index.launches))), (path, g.id)
            if len(index.launches) > 1:
                assert _first_view_boxes(h) <= MAX_BOXES


def test_only_the_open_level_is_drawn():
    parse = parse_path(str(GPT_DEEP))
    g = next(g for g in parse.graphs if g.kind == "backward")
    index = build_index(g)
    h = graph_hierarchy(parse.graphs, g, index, read_dynamo_inputs(str(GPT_DEEP)))
    first = hierarchy_dot(g.post_grad_graph, index, h, GraphView(modules=True, collapsed=True, link="?run=x"))
    assert first.count("[shape=") <= MAX_BOXES and group_ids("blocks")[0] in first and "open=blocks" in first
    block = h.groups["blocks"].children[3]
    opened = hierarchy_dot(g.post_grad_graph, index, h,
                           GraphView(modules=True, collapsed=True, opened=frozenset({"blocks", block.id})))
    assert group_ids(block.id)[1] in opened and f'"cvL{block.launches[0]}"' in opened
    assert opened.count("[shape=") < 120  # 48 blocks, one opened: not 1,499 launches
    if shutil.which("dot"):
        from compile_viz.render.svg import dot_to_svg

        assert "<svg" in dot_to_svg(opened)


@pytest.fixture
def deep_env(tmp_path, monkeypatch):
    runs = tmp_path / "sample_runs"
    runs.mkdir()
    shutil.copy(GPT_DEEP, runs / "gpt_deep.zip")
    yield from fresh_store(tmp_path / "home", runs, monkeypatch)


def _svg(at) -> str:
    return "\n".join(json.loads(c.proto.json)["html"] for c in at.get("bidi_component"))


def test_viewer_opens_a_big_graph_in_layers(deep_env):
    with zipfile.ZipFile(GPT_DEEP) as z:
        backward = next(n.split("/")[-2] for n in z.namelist() if "_backward_" in n and n.endswith("output_code.py"))
    at = run_app(ROOT / "app.py", run="bundled:gpt_deep", graph=backward)
    no_errors(at)
    svg = _svg(at)
    assert group_ids("blocks")[0] in svg and svg.count('class="node"') <= MAX_BOXES
    assert any("module" in c.value for c in at.caption)
    # a kernel inside block 17 selected: its block and the blocks around it open, the rest closed
    parse = parse_path(str(GPT_DEEP))
    g = parse.graph(backward)
    index = build_index(g)
    h = graph_hierarchy(parse.graphs, g, index, read_dynamo_inputs(str(GPT_DEEP)))
    launch = h.groups["blocks"].children[17].launches[2]
    at = run_app(ROOT / "app.py", run="bundled:gpt_deep", graph=backward, launch=str(launch),
                 kernel=index.launches[launch].kernel)
    no_errors(at)
    svg = _svg(at)
    assert group_ids(h.groups["blocks"].children[17].id)[1] in svg and f"cvL{launch}" in svg
    assert group_ids(h.groups["blocks"].children[16].id)[0] in svg  # its neighbour stays closed
    assert index.launches[launch].kernel in "\n".join(str(m.value) for m in at.markdown)


def test_big_graph_pickers_are_search_boxes(deep_env):
    """Above viewer.LIST_MAX entries, the kernel and node pickers are search boxes: a whole name (or
    "#N" for a launch) picks it; a part that fits several lists them to pick from."""
    from compile_viz.ui.viewer import LIST_MAX

    with zipfile.ZipFile(GPT_DEEP) as z:
        backward = next(n.split("/")[-2] for n in z.namelist() if "_backward_" in n and n.endswith("output_code.py"))
    g = parse_path(str(GPT_DEEP)).graph(backward)
    names = [n.name for n in g.post_grad_graph.nodes]
    assert len(names) > LIST_MAX and len(g.output_code.launches) > LIST_MAX
    at = run_app(ROOT / "app.py", run="bundled:gpt_deep", graph=backward)
    no_errors(at)
    assert not [s for s in at.selectbox if s.label in ("FX node", "Kernel launch")]

    def field(at, label):
        return next(t for t in at.text_input if t.label == label)

    node = next(n for n in names if n.startswith("mm") and sum(n in m for m in names) == 1)
    at = field(at, "FX node").input(node).run()
    no_errors(at)
    assert field(at, "FX node").value == node and field(at, "Kernel launch").value.startswith("#")
    part = next(n[1:] for n in names if n[1:] not in names and sum(n[1:] in m for m in names) > 1)
    at = field(at, "FX node").input(part).run()  # a part of several names, none whole: they are listed
    listed = next(s for s in at.selectbox if " nodes match" in s.label)
    other = next(n for n in listed.options if n != "(pick one)" and n != node)
    at = listed.select(other).run()
    no_errors(at)
    assert field(at, "FX node").value == other
    launch = len(g.output_code.launches) - 1
    at = field(at, "Kernel launch").input(f"#{launch}").run()
    no_errors(at)
    assert field(at, "Kernel launch").value.startswith(f"#{launch} ") and field(at, "FX node").value == ""
