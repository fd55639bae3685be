"""Comparing two runs: every bundled run with itself, and real pairs whose differences were read by hand.

Pairs: bert_mask vs bert_mask_autotune (H100, default vs max-autotune-no-cudagraphs: template
kernels appear), and CPU captures made here with the project's own CLI: fp32 vs bf16 of one
sample, and tests/compare_models/split_fusion.py before and after a change that splits a fusion.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from compile_viz.compare import SAME, diff_runs, graph_rows, load_side, run_rows
from compile_viz.compare.pairing import format_pairs, pair_graphs, parse_pairs
from compile_viz.compare.sides import CompareError
from tests.conftest import ROOT, SAMPLE_RUNS, THIRD_PARTY, compile_viz_cli

BUNDLED = sorted(SAMPLE_RUNS.glob("*.zip"))


def assert_every_launch_once(diff) -> None:
    """Every launch of both runs is in exactly one group of its graph pair."""
    for gm in diff.graphs:
        for side, run, gid in (("a", diff.a, gm.a), ("b", diff.b, gm.b)):
            seen = Counter(r.index for g in gm.groups for r in (g.a if side == "a" else g.b))
            expected = Counter(la.index for la in run.indexes[gid].launches) if gid else Counter()
            assert seen == expected, (gm.a, gm.b, side)


def groups_by_a(gm) -> dict[int, object]:
    return {r.index: g for g in gm.groups for r in g.a}


@pytest.mark.parametrize("zip_path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_a_run_with_itself_is_all_same_with_no_deltas(zip_path):
    a, b = load_side(str(zip_path)), load_side(str(zip_path))
    diff = diff_runs(a, b)
    assert [(gm.a, gm.b) for gm in diff.graphs] == [(g.id, g.id) for g in a.parse.graphs]
    assert_every_launch_once(diff)
    for gm in diff.graphs:
        assert gm.groups and all(g.cls == SAME for g in gm.groups), gm.counts()
        assert all(len(g.a) == len(g.b) == 1 and g.a == g.b for g in gm.groups)
        assert all(g.a_time_ms == g.b_time_ms for g in gm.groups)
        assert all(r.delta in (0, None) for r in graph_rows(a.indexes[gm.a], b.indexes[gm.b]))
    assert a.summary is not None, "the bundled runs were measured"
    assert all(r.delta == 0 for r in run_rows(a, b) if r.a is not None)
    assert any(g.a_time_ms for gm in diff.graphs for g in gm.groups), "measured runs give group times"


@pytest.fixture(scope="module")
def bert():
    return diff_runs(load_side(str(THIRD_PARTY / "bert_mask.zip")), load_side(str(THIRD_PARTY / "bert_mask_autotune.zip")))


def test_autotune_turns_library_matmuls_into_templates(bert):
    (gm,) = bert.graphs
    assert_every_launch_once(bert)
    by_a = groups_by_a(gm)
    # launch 1: extern_kernels.addmm of the query projection (modeling_bert.py:175); with
    # max-autotune the same addmm (and its view/permute) is a Triton template: one launch, another kind
    g = by_a[1]
    assert g.cls == "moved" and [r.kind for r in g.a] == ["extern"] and [r.kind for r in g.b] == ["template"]
    assert g.b[0].kernel.startswith("triton_tem_") and "addmm" in g.fx_nodes
    # the embedding + layer norm kernel is untouched, under another name suffix or not
    assert by_a[0].cls == SAME and by_a[0].a[0].kind == by_a[0].b[0].kind == "persistent_reduction"
    # the pooler's mm (launch 22) became a padding kernel and a template: split
    g = by_a[22]
    assert g.cls == "split" and sorted(r.kind for r in g.b) == ["pointwise", "template"]
    counts = gm.counts()
    assert counts["moved"] == 12 and counts["same"] == 11 and counts["split"] == 1
    assert all(g.a_time_ms is None and g.b_time_ms is None for g in gm.groups)  # neither run was measured


def test_graphs_pair_by_kind_and_order_and_can_be_repaired():
    a = [("f0", "forward"), ("f1", "forward"), ("b0", "backward")]
    b = [("F0", "forward"), ("B0", "backward"), ("B1", "backward")]
    assert pair_graphs(a, b) == [("f0", "F0"), ("f1", None), ("b0", "B0"), (None, "B1")]
    assert pair_graphs(a, b, {"f1": "F0", "b0": "B1"}) == [("f0", None), ("f1", "F0"), ("b0", "B1"), (None, "B0")]
    assert pair_graphs(a, b, {"nope": "F0", "f0": "nope"}) == pair_graphs(a, b)  # unknown ids are ignored
    text = format_pairs({"f1": "F0", "b0": None})
    assert text == "f1:F0,b0:-" and parse_pairs(text) == {"f1": "F0", "b0": None}


def test_a_repaired_graph_is_matched_against_its_new_partner():
    zip_path = str(SAMPLE_RUNS / "gpt_small.zip")
    a, b = load_side(zip_path), load_side(zip_path)
    fwd, bwd = (g.id for g in a.parse.graphs)
    diff = diff_runs(a, b, {fwd: bwd})
    assert [(gm.a, gm.b) for gm in diff.graphs] == [(fwd, bwd), (bwd, None), (None, fwd)]
    assert_every_launch_once(diff)
    assert {g.cls for g in diff.graphs[1].groups} == {"only_in_a"}
    assert {g.cls for g in diff.graphs[2].groups} == {"only_in_b"}


def test_diff_json_has_the_issue_shape(tmp_path):
    proc = compile_viz_cli("diff", str(THIRD_PARTY / "bert_mask.zip"), str(THIRD_PARTY / "bert_mask_autotune.zip"),
                           "--json", "--home", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"a", "b", "graphs", "timing_comparable"}
    assert data["timing_comparable"] is None  # neither run was measured
    assert data["a"]["mode"] == "default" and data["b"]["mode"] == "max-autotune-no-cudagraphs"
    (graph,) = data["graphs"]
    assert set(graph) == {"a", "b", "groups"} and graph["a"] == graph["b"] == "model__0_inference_0.0"
    for g in graph["groups"]:
        assert set(g) == {"class", "fx_nodes", "a_launches", "b_launches", "a_time_ms", "b_time_ms"}
    moved = next(g for g in graph["groups"] if g["a_launches"] and g["a_launches"][0]["index"] == 1)
    assert moved["class"] == "moved" and moved["b_launches"][0]["kind"] == "template"


def test_diff_text_and_errors(tmp_path):
    proc = compile_viz_cli("diff", str(SAMPLE_RUNS / "mlp_gelu.zip"), "bundled:mlp_gelu", "--home", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "groups: 3 same" in proc.stdout and "latency (compiled)" in proc.stdout
    proc = compile_viz_cli("diff", "no-such-run", str(SAMPLE_RUNS / "mlp_gelu.zip"), "--home", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.startswith("compile-viz: no run 'no-such-run'")
    assert len(proc.stderr.strip().splitlines()) == 1
    with pytest.raises(CompareError, match="neither a folder nor a zip"):
        load_side(str(ROOT / "README.md"))


def test_a_run_is_named_by_id_folder_zip_or_debug_folder(tmp_path):
    from compile_viz.store import RunStore

    store = RunStore(tmp_path)
    run = store.import_zip(SAMPLE_RUNS / "pointwise_chain.zip")
    ids = {load_side(ref, store).parse.graphs[0].id for ref in
           (run.id, run.id[:12], str(run.path), str(run.path / "debug"), str(SAMPLE_RUNS / "pointwise_chain.zip"))}
    assert len(ids) == 1
    assert load_side(str(run.path / "debug")).summary is not None  # a run's debug/ folder: the run's meta
    import shutil

    bare = shutil.copytree(run.path / "debug", tmp_path / "bare")
    side = load_side(str(bare))
    assert side.summary is None and side.meta == {} and side.parse.graphs[0].id in ids


@pytest.fixture(scope="module")
def cpu_pairs(tmp_path_factory):
    """Real CPU captures made with the project's CLI: name -> run folder."""
    pytest.importorskip("torch")
    home = tmp_path_factory.mktemp("compare_home")
    model = "tests/compare_models/split_fusion.py"
    out = {}
    for name, args in (("fp32", ["layernorm_linear_gelu_residual", "--dtype", "fp32"]),
                       ("bf16", ["layernorm_linear_gelu_residual", "--dtype", "bf16"]),
                       ("before", [f"{model}:BEFORE"]), ("after", [f"{model}:AFTER"])):
        proc = compile_viz_cli("capture", *args, "--device", "cpu", "--home", str(home), timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[name] = proc.stdout.strip().splitlines()[-1]
    return out


@pytest.mark.slow
def test_fp32_vs_bf16_keeps_every_kernel(cpu_pairs):
    diff = diff_runs(load_side(cpu_pairs["fp32"]), load_side(cpu_pairs["bf16"]))
    assert_every_launch_once(diff)
    (gm,) = diff.graphs
    # bf16 adds the casts inside the same kernels: layer norm, the addmm, GELU + residual, each one to one
    assert [g.cls for g in gm.groups] == [SAME, SAME, SAME]
    assert [g.a[0].kind for g in gm.groups] == ["cpp", "extern", "cpp"]
    rows = {r.label: r for r in graph_rows(diff.a.indexes[gm.a], diff.b.indexes[gm.b])}
    assert rows["FX ops"].delta > 0 and rows["kernels"].delta == 0


@pytest.mark.slow
def test_a_matmul_between_pointwise_ops_splits_the_fusion(cpu_pairs):
    diff = diff_runs(load_side(cpu_pairs["before"]), load_side(cpu_pairs["after"]))
    assert_every_launch_once(diff)
    (gm,) = diff.graphs
    assert sorted(g.cls for g in gm.groups) == ["only_in_b", "split"]
    split = next(g for g in gm.groups if g.cls == "split")
    assert len(split.a) == 1 and len(split.b) == 2 and {"erf", "add"} <= set(split.fx_nodes)
    new = next(g for g in gm.groups if g.cls == "only_in_b")
    assert [r.kernel for r in new.b] == ["extern_kernels.mm"] and new.fx_nodes == ("mm",)


def test_render_escapes_and_recolours():
    from compile_viz.artifacts import parse_path
    from compile_viz.linking import build_index
    from compile_viz.render.compare import class_color, code_diff_html, recolour_dot
    from compile_viz.render.fx_dot import GraphView, fx_dot

    page = code_diff_html("x = 1\n<script>a</script>", "x = 2\n<script>a</script>", "A <k>", "B")
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;k&gt;" in page
    assert "background:#ffe3e3" in page and "background:#d3f9d8" in page
    assert "identical" in code_diff_html("same", "same")
    graph = parse_path(str(SAMPLE_RUNS / "mlp_gelu.zip")).graphs[0]
    index = build_index(graph)
    for collapsed in (True, False):
        dot = recolour_dot(fx_dot(graph.aot_graph, index, GraphView(graph="aot_graph", collapsed=collapsed)),
                           {0: "moved", 1: "split"})
        assert dot.count(class_color("moved")) == 1 and dot.count(class_color("split")) == 1


GPU_PAIRS = ROOT / "tests" / "fixtures" / "compare"  # H100 captures: scripts/capture-compare-pairs.sh


def test_gpu_fp32_vs_bf16_matches_every_kernel_one_to_one():
    """On the H100, fp32 puts the bias in the GELU kernel (extern mm) and bf16 keeps it in an extern
    addmm: read by hand, still the same three steps (norm, the GEMM, the pointwise epilogue)."""
    diff = diff_runs(load_side(str(GPU_PAIRS / "layernorm_fp32.zip")), load_side(str(GPU_PAIRS / "layernorm_bf16.zip")))
    assert_every_launch_once(diff)
    (gm,) = diff.graphs
    assert [g.cls for g in gm.groups] == [SAME, SAME, SAME]
    norm = gm.groups[0]
    assert norm.a[0].kernel == norm.b[0].kernel == "triton_per_fused_native_layer_norm_0"
    gemm = gm.groups[1]
    assert (gemm.a[0].kernel, gemm.b[0].kernel) == ("extern_kernels.mm", "extern_kernels.addmm")


def test_gpu_a_matmul_between_pointwise_ops_splits_the_fusion():
    diff = diff_runs(load_side(str(GPU_PAIRS / "split_before.zip")), load_side(str(GPU_PAIRS / "split_after.zip")))
    assert_every_launch_once(diff)
    (gm,) = diff.graphs
    assert sorted(g.cls for g in gm.groups) == ["only_in_b", "split"]
    split = next(g for g in gm.groups if g.cls == "split")
    assert [r.kernel for r in split.a] == ["triton_poi_fused_add_gelu_mul_0"]
    assert [r.kernel for r in split.b] == ["triton_poi_fused_gelu_0", "triton_poi_fused_add_mul_1"]
    assert {"erf", "add"} <= set(split.fx_nodes)
    new = next(g for g in gm.groups if g.cls == "only_in_b")
    assert [r.kernel for r in new.b] == ["extern_kernels.mm"]
