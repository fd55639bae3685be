"""The sample gallery: every spec is well formed and runs eagerly on the CPU (no compile here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sample_models import DTYPES, SampleSpec, all_samples, get_sample, sample_names

ISSUE_SAMPLES = {
    "matmul_softmax", "tiny_linear_relu", "pointwise_chain", "mlp_gelu", "layernorm_linear_gelu_residual",
    "transformer_layer", "graph_break_print", "graph_break_item", "graph_break_loop", "dynamic_shapes",
    "convnet_bn_relu", "gpt_small",
    "many_row_sums",  # issue 11: a refusal a user can fix
    "gpt_deep",  # issue 12: a 48-layer graph
    "compiled_differs",  # issue 27: wrong on purpose, found by the backend ladder
    # issue 39: the lessons' missing views (captured on a GPU by the lead)
    "graph_break_library", "cudagraph_skip_mutation", "recompile_shape",
}


def test_gallery_has_every_sample_of_the_issue():
    assert set(sample_names()) == ISSUE_SAMPLES
    for spec in all_samples():
        assert isinstance(spec, SampleSpec)
        assert spec.name in sample_names() and spec.title and len(spec.teaching_note) > 80
        assert spec.default_dtype in DTYPES


def test_listing_and_parent_side_import_neither_torch_nor_streamlit():
    code = ("import sys, sample_models as s; s.all_samples(); import compile_viz.capture, compile_viz.cli, "
            "compile_viz.cli.capture, compile_viz.cli.runs, compile_viz.cli.export, compile_viz.cli.import_, "
            "compile_viz.store; print(sorted(m for m in ('torch', 'streamlit', 'plotly', 'graphviz', 'pygments') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_sample():
    with pytest.raises(KeyError, match="known: matmul_softmax"):
        get_sample("nope")


def test_cpu_fallback_dtype_is_explained():
    spec = get_sample("layernorm_linear_gelu_residual")
    assert spec.dtype_for("cuda") == ("fp16", "")
    dtype, note = spec.dtype_for("cpu")
    assert dtype == "bf16" and "CPU" in note


def test_defaults_of_special_samples():
    dyn = get_sample("dynamic_shapes")
    assert dyn.default_dynamic is True and dyn.input_sets is not None
    gpt = get_sample("gpt_small")
    assert gpt.default_train and gpt.default_dtype == "autocast" and gpt.large


@pytest.mark.parametrize("name", [n for n in sorted(ISSUE_SAMPLES) if n not in ("gpt_small", "gpt_deep")])
def test_sample_runs_eagerly_on_cpu(name):
    torch = pytest.importorskip("torch")
    spec = get_sample(name)
    dtype, _ = spec.dtype_for("cpu")
    tdtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "autocast": torch.float32}[dtype]
    model = spec.build("cpu", tdtype)
    calls = spec.calls("cpu", tdtype)
    assert calls and all(isinstance(c, tuple) for c in calls)
    with torch.no_grad():
        for args in calls:
            out = model(*args)
            assert torch.is_tensor(out) and torch.isfinite(out.float()).all()
    if name == "dynamic_shapes":
        assert [c[0].shape[0] for c in calls] == [32, 64]
    if name == "recompile_shape":
        assert [c[0].shape[0] for c in calls] == [32, 64, 96]


def test_gpt_small_is_gpt2_small_shaped():
    torch = pytest.importorskip("torch")
    from sample_models import gpt_small

    assert (gpt_small.LAYERS, gpt_small.D_MODEL, gpt_small.HEADS, gpt_small.SEQ) == (12, 768, 12, 256)
    assert 50_000 <= gpt_small.VOCAB <= 51_000
    idx, targets = gpt_small.example_inputs("cpu", torch.float32)
    assert idx.shape == targets.shape == (1, 256) and idx.dtype == torch.long


def test_gpt_deep_is_gpt_small_with_48_blocks():
    torch = pytest.importorskip("torch")
    model = get_sample("gpt_deep").build("meta", torch.float32)
    assert len(model.blocks) == 48
