"""Issue 39 without a browser: short kernel names, and every lesson step against its bundled run
(the graph, the kernel at that launch). tests/test_browser_lessons.py walks them in Chromium."""

from __future__ import annotations

import pytest
from test_app_fixtures import REPO

from compile_viz.artifacts import parse_path
from compile_viz.linking import build_index
from compile_viz.render.code_html import kernel_body
from compile_viz.render.kernel_names import fused_ops, short_kernel_name
from compile_viz.render.lessons import step_bar_html
from compile_viz.ui.lessons_data import LESSONS
from compile_viz.ui.runs import BUNDLED

SAMPLE_RUNS = REPO / "sample_runs"


@pytest.mark.parametrize(("kernel", "short"), [
    ("triton_poi_fused_add_gelu_3", "K3 · fused add, gelu"),
    ("triton_poi_fused_addmm_gelu_0", "K0 · fused addmm, gelu"),
    # the issue's example: views, transposes and copies left out, three ops and a count of the rest
    ("triton_poi_fused__unsafe_view_add_bmm_cat_clone_cos_mul_neg_sin_slice_transpose_unsqueeze_view_2",
     "K2 · fused add, bmm, cos, +3"),
    ("triton_per_fused__to_copy_add_embedding_native_layer_norm_1", "K1 · fused add, embedding, native_layer_norm"),
    ("triton_poi_fused__to_copy_3", "K3 · fused to_copy"),  # only a copy: said, not left empty
    ("cpp_fused_add_gelu_0", "K0 · fused add, gelu"),
    ("extern_kernels.mm", "mm (library)"),
    ("aten._scaled_dot_product_cudnn_attention.default", "scaled_dot_product_cudnn_attention (library)"),
    ("my_kernel", "my_kernel"),
])
def test_short_kernel_names(kernel, short):
    assert short_kernel_name(kernel) == short


def test_fused_ops_read_multi_word_ops_whole():
    name = ("triton_red_fused__log_softmax__log_softmax_backward_data__to_copy_arange_eq_expand_nll_loss_backward_"
            "nll_loss_forward_scalar_tensor_view_where_0")
    assert fused_ops(name) == ("_log_softmax", "_log_softmax_backward_data", "_to_copy", "arange", "eq", "expand",
                               "nll_loss_backward", "nll_loss_forward", "scalar_tensor", "view", "where")


def test_kernel_body_starts_at_the_decorator():
    src = "async_compile.triton('k', '''\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n''')"
    body, first = kernel_body(src, 10)
    assert body.startswith("@triton.jit") and first == 13
    assert kernel_body("no kernel here", 4) == ("no kernel here", 4)


def test_step_bar_escapes_and_links():
    html = step_bar_html(lesson="L <1>", k=1, n=2, title="`a<b`", text="x & y", back=None, forward="/viewer?a=1&b=2",
                         index="/lessons")
    assert "<code>a&lt;b</code>" in html and "x &amp; y" in html and "L &lt;1&gt;" in html
    assert 'href="/viewer?a=1&amp;b=2"' in html and "cv-lesson-back" not in html  # no step before the first


def test_lessons_follow_the_issue_path():
    ids = [les.id for les in LESSONS]
    assert ids == ["dynamo", "aot", "fuse", "refuse", "modes", "dynamic", "win", "wrong"]
    for les in LESSONS:
        assert les.steps and all(s.title and s.text and s.run.startswith(BUNDLED) for s in les.steps)


def bundled_steps():
    for les in LESSONS:
        for k, step in enumerate(les.steps, 1):
            if (SAMPLE_RUNS / f"{step.run.removeprefix(BUNDLED)}.zip").is_file():
                yield pytest.param(step, id=f"{les.id}-{k}")


_INDEXES: dict = {}


@pytest.mark.parametrize("step", list(bundled_steps()))
def test_every_step_names_what_its_run_has(step):
    """The step's graph is in its run, and its launch runs its kernel (a generated one, with code)."""
    name = step.run.removeprefix(BUNDLED)
    assert step.kernel and step.launch is not None, f"{name} is bundled now: name the kernel and launch this step selects"
    if name not in _INDEXES:
        parse = parse_path(str(SAMPLE_RUNS / f"{name}.zip"))
        _INDEXES[name] = {g.id: (g, build_index(g)) for g in parse.graphs}
    assert step.graph in _INDEXES[name], f"{name} has no graph {step.graph}"
    graph, index = _INDEXES[name][step.graph]
    launch = index.launches[step.launch]
    assert launch.kernel == step.kernel
    assert graph.output_code.kernel(step.kernel) is not None, "a step selects a kernel whose code can be shown"


def test_lessons_waiting_for_a_capture_name_a_sample_model():
    """Every sample a lesson waits for is a file in sample_models/ (the lead captures it on a GPU)."""
    for les in LESSONS:
        for name in les.needs:
            assert (REPO / "sample_models" / f"{name}.py").is_file(), name


def test_projector_graphs_label_launches_short_and_keep_the_name_in_the_tooltip():
    from compile_viz.linking.model import POST_GRAD
    from compile_viz.render.fx_dot import GraphView, fx_dot

    graph = parse_path(str(SAMPLE_RUNS / "mlp_gelu.zip")).graphs[0]
    index = build_index(graph)
    for collapsed in (False, True):
        dot = fx_dot(graph.post_grad_graph, index, GraphView(graph=POST_GRAD, collapsed=collapsed, short_names=True))
        assert "#1 K0 · fused addmm, gelu" in dot and "#1 triton_poi_fused_addmm_gelu_0" in dot  # label, tooltip
        plain = fx_dot(graph.post_grad_graph, index, GraphView(graph=POST_GRAD, collapsed=collapsed))
        assert "K0 · fused" not in plain


@pytest.fixture
def bundled_env(tmp_path, monkeypatch):
    """The real bundled runs, an empty store (test_app_fixtures.fresh_store)."""
    from test_app_fixtures import fresh_store

    yield from fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch)


def test_lessons_page_links_each_step_keeping_projector_mode(bundled_env):
    import re

    from test_app_fixtures import no_errors, run_app

    at = run_app("from compile_viz.ui import lessons_page\nlessons_page.page()", present="1")
    no_errors(at)
    body = "\n".join(h.proto.body for h in at.get("html"))
    hrefs = [h.replace("&amp;", "&") for h in re.findall(r'class="cv-lesson-step" href="([^"]+)"', body)]
    ready = [les for les in LESSONS if all((SAMPLE_RUNS / f"{s.run.removeprefix(BUNDLED)}.zip").is_file()
                                           for s in les.steps)]
    assert len(hrefs) == sum(len(les.steps) for les in ready) and all("present=1" in h for h in hrefs)
    assert hrefs[0].startswith("/viewer?run=bundled%3Agraph_break_print&graph=model__0_inference_0.0&kernel="
                               "triton_poi_fused_mul_sin_0&launch=0&lesson=dynamo&step=1")
    if not (SAMPLE_RUNS / "compiled_differs.zip").is_file():
        assert any("Waiting for a GPU capture of compiled_differs" in c.value for c in at.caption)


def test_viewer_in_projector_mode_shows_a_step_short_and_large(bundled_env):
    from test_app_fixtures import REPO, no_errors, run_app

    at = run_app(REPO / "app.py", run="bundled:mlp_gelu", graph="model__0_inference_0.0",
                 kernel="triton_poi_fused_addmm_gelu_0", launch="1", lesson="fuse", step="2", present="1")
    no_errors(at)
    picker = next(s for s in at.sidebar.selectbox if s.label == "Kernel launch")
    assert picker.format_func(picker.value) == "#1 K0 · fused addmm, gelu"
    body = "\n".join(h.proto.body for h in at.get("html"))
    assert 'class="cv-kname" title="triton_poi_fused_addmm_gelu_0">K0 · fused addmm, gelu' in body
    assert "font-size:18px" in body and "@triton" in body.split("cv-kname", 1)[1]
    assert 'class="cv-lesson-next" href="/viewer?run=bundled%3Alayernorm_linear_gelu_residual&amp;graph=' in body
    nxt = body.split('class="cv-lesson-next" href="', 1)[1].split('"', 1)[0]
    assert "step=3" in nxt and "present=1" in nxt
    toggle = next(t for t in at.sidebar.toggle if t.label == "Projector mode")
    toggle.set_value(False).run()
    assert "present" not in at.query_params  # off: gone from the URL, and so from every link
