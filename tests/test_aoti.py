"""torch.export and AOTInductor (issue 29): capture --aoti, the C++ wrapper, .pt2 packages, export and AOTI
TORCH_TRACE logs, and a JIT run compared with an AOT run of the same model."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compile_viz.artifacts import DiscoveryError, parse_path
from compile_viz.artifacts.aoti_wrapper import parse_aoti_wrapper
from compile_viz.artifacts.exported_program import parse_exported_program
from compile_viz.artifacts.package import slim_package
from compile_viz.compare import diff_runs, load_side
from compile_viz.linking.index import build_index
from compile_viz.store import RunStore, StoreError
from compile_viz.trace_import import import_path
from tests.conftest import CORPUS, ROOT, compile_viz_cli, corpus_required

FIXTURES = ROOT / "tests" / "fixtures"
AOTI_RUN = FIXTURES / "aoti" / "gpt2_infer_aoti_cpu.zip"
JIT_RUN = FIXTURES / "aoti" / "gpt2_infer_jit_cpu.zip"
TLPARSE = FIXTURES / "traces" / "tlparse-aoti"


def _member(zip_path: Path, suffix: str) -> bytes:
    with zipfile.ZipFile(zip_path) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith(suffix)))


def _escape(pt2: Path, out: Path, name: str) -> Path:
    """A copy of a real package with one more member, named `name` (a path outside the archive)."""
    with zipfile.ZipFile(pt2) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr(name, "outside")
    return out


# --------------------------------------------------------------------------- a CPU --aoti run (fixture)


def test_an_aoti_run_parses_like_a_jit_one_with_every_launch_linked():
    parse = parse_path(str(AOTI_RUN))
    (g,) = parse.graphs
    assert g.kind == "inference" and "output_code.cpp" in g.folder.files
    assert not g.warnings and not parse.warnings
    oc = g.output_code
    assert len(oc.kernels) == 8 and all(k.backend == "cpp" and k.source.startswith('extern "C"') for k in oc.kernels)
    assert sum(not la.is_extern for la in oc.launches) == 9
    assert {la.kernel for la in oc.launches if la.is_extern} >= {"aoti_torch_cpu_addmm_out", "aoti_torch_cpu_mm_out"}
    assert oc.graph_inputs == ("arg29_1",) and oc.returns == "var_3"
    ep = g.exported_program  # export/exported_program.txt, given to the graph
    assert len(ep.inputs_of("PARAMETER")) == 29 and [i.name for i in ep.inputs_of("USER_INPUT")] == ["input_ids"]
    assert ep.inputs[0].target == "transformer.wte.weight" and ep.outputs[0].kind == "USER_OUTPUT"
    weight = g.aot_graph.node("transformer_h_0_attn_c_attn_weight")  # getattr(self.transformer.h, "0")...
    assert (weight.op, weight.target) == ("get_attr", "transformer.h.0.attn.c_attn.weight")
    index = build_index(g)
    assert all(la.post_grad_nodes and la.fx_nodes and la.source_lines for la in index.launches)
    assert {la.evidence for la in index.launches} == {"provenance"}
    addmm = next(la for la in index.launches if la.kernel == "aoti_torch_cpu_addmm_out")
    assert addmm.fusion_group and addmm.scheduler_nodes


def test_the_run_keeps_the_packages_text_only_and_it_opens_alone():
    meta = json.loads(_member(AOTI_RUN, "meta.json"))
    assert meta["resolved"]["compiler"] == "aoti" and meta["package"] == "package/model.pt2"
    assert meta["timings"]["export_s"] < meta["timings"]["compile_s"]
    pt2 = _member(AOTI_RUN, "package/model.pt2")
    with zipfile.ZipFile(io.BytesIO(pt2)) as zf:
        names = zf.namelist()
    assert any(n.endswith(".wrapper.cpp") for n in names) and any(n.endswith("kernel_information.json") for n in names)
    assert not any(n.endswith((".so", ".cubin", ".o")) or "/weights/" in n for n in names)


def test_a_package_opens_with_parse_and_import(tmp_path):
    pt2 = tmp_path / "model.pt2"
    pt2.write_bytes(_member(AOTI_RUN, "package/model.pt2"))
    (g,) = parse_path(str(pt2)).graphs
    assert len(g.output_code.kernels) == 8 and len(g.output_code.launches) == 21
    assert g.aot_graph is None and any("holds no post-grad graph" in w.text for w in g.warnings)
    index = build_index(g)  # provenance from kernel_information.json, stacks too
    assert all(la.post_grad_nodes and la.source_lines for la in index.launches)
    store = RunStore(tmp_path / "home")
    done = import_path(store, pt2)
    assert done.new and done.run.meta["source"]["kind"] == "aoti_package"
    assert [len(x.output_code.launches) for x in parse_path(str(done.run.path)).graphs] == [21]
    assert not import_path(store, pt2).new


@pytest.mark.parametrize("name", ["../outside.txt", "/etc/outside.txt", "model/../../outside.txt"])
def test_a_package_with_a_path_outside_the_archive_is_refused_in_one_line(tmp_path, name):
    pt2 = tmp_path / "model.pt2"
    pt2.write_bytes(_member(AOTI_RUN, "package/model.pt2"))
    evil = _escape(pt2, tmp_path / "evil.pt2", name)
    with pytest.raises(DiscoveryError, match="outside the archive") as e:
        parse_path(str(evil))
    assert "\n" not in str(e.value)
    with pytest.raises(StoreError, match="outside the archive"):
        import_path(RunStore(tmp_path / "home"), evil)
    with pytest.raises(DiscoveryError):
        slim_package(evil, tmp_path / "slim.pt2")
    r = compile_viz_cli("parse", str(evil))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "refused" in r.stderr


H100 = {name: FIXTURES / "aoti" / f"{name}_h100.zip" for name in
        ("gpt2_infer_jit", "gpt2_infer_aoti", "bert_mask_jit", "bert_mask_aoti")}


@pytest.mark.parametrize("jit, aot, launches", [(JIT_RUN, AOTI_RUN, 21),
                                                (H100["gpt2_infer_jit"], H100["gpt2_infer_aoti"], 20),
                                                (H100["bert_mask_jit"], H100["bert_mask_aoti"], 24)],
                         ids=["gpt2_cpu", "gpt2_h100", "bert_h100"])
def test_jit_and_aot_runs_of_one_model_compare_launch_for_launch(jit, aot, launches):
    """The same kernels, launched from C++ instead of Python, extern calls through the C shim. Nodes are
    known by op alone across the two tracers: Dynamo names the model's line for a torch module's node
    (modeling_bert.py's self.query(...)), export the line inside torch (linear.py:134)."""
    diff = diff_runs(load_side(str(jit)), load_side(str(aot)))
    (gm,) = diff.graphs
    assert gm.counts() == {"same": launches}, gm.counts()
    shim = {(ra.kernel, rb.kernel) for g in gm.groups for ra, rb in zip(g.a, g.b, strict=True)
            if rb.kernel.startswith("aoti_torch_")}
    assert shim and all(a.startswith(("extern_kernels.", "aten.")) for a, _ in shim), shim


def test_an_h100_aoti_capture_of_a_transformers_model_has_triton_kernels_linked():
    for name, triton_kernels in (("gpt2_infer_aoti", 8), ("bert_mask_aoti", 5)):
        parse = parse_path(str(H100[name]))
        (g,) = parse.graphs
        assert not g.warnings and not parse.warnings
        kernels = g.output_code.kernels
        assert len(kernels) == triton_kernels and all(k.backend == "triton" and "@triton.jit" in k.source
                                                      for k in kernels)
        index = build_index(g)
        assert all(la.evidence == "provenance" and la.fx_nodes and la.source_lines for la in index.launches)
        assert {la.kernel for la in index.launches if la.is_extern} >= {"aoti_torch_cuda_mm_out"}
        meta = json.loads(_member(H100[name], "meta.json"))  # the compile is complete; loading the package is not
        assert meta["status"] == "complete" and meta["package_run"]["status"] == "failed"
        assert meta["package_run"]["reason"].endswith("died from SIGSEGV (logs/package_run.txt)")


VIEWER = """
import streamlit as st
from compile_viz.ui import page_registry, viewer

pages = dict(viewer=st.Page(viewer.page, title="Viewer", url_path="viewer", default=True))
page_registry.register(pages)
st.navigation(list(pages.values())).run()
"""


@pytest.fixture
def app_store(tmp_path, monkeypatch):
    from test_app_fixtures import fresh_store

    yield from fresh_store(tmp_path / "home", ROOT / "sample_runs", monkeypatch)


@pytest.mark.parametrize("source, kernel", [(AOTI_RUN, "cpp_fused_"), (TLPARSE / "inductor_provenance_aot_cuda_log.txt",
                                                                       "triton_poi_fused_")], ids=["cpu_run", "cuda_trace"])
def test_the_viewer_opens_an_aot_run_on_a_launch_with_its_kernel(app_store, source, kernel):
    from test_app_fixtures import no_errors, run_app

    run = import_path(app_store, source).run
    at = run_app(VIEWER, run=run.id, launch="1")
    no_errors(at)
    _viewer_checks(at, source, kernel)


def test_the_viewer_opens_the_h100_aoti_capture_of_gpt2_on_a_triton_kernel(app_store):
    from test_app_fixtures import run_app

    run = app_store.import_zip(H100["gpt2_infer_aoti"])
    at = run_app(VIEWER, run=run.id, launch="1")
    assert not at.exception and not at.error  # the compile is complete; the package's run failed
    assert [w.value for w in at.warning] == ["Compiled ahead of time; the package did not run in a fresh process: "
                                             "died from SIGSEGV (logs/package_run.txt)."]
    assert at.query_params["graph"] == "model___0.0"
    assert "triton_red_fused_add_arange_embedding_native_layer_norm" in repr(at._tree)
    assert any(e.label.startswith("Exported program (torch.export): 1 user input, 29 parameters") for e in at.expander)


def _viewer_checks(at, source, kernel) -> None:
    assert at.query_params["graph"] in ("model___0.0", "[] inference")
    assert kernel in repr(at._tree)
    labels = [e.label for e in at.expander if e.label.startswith("Exported program")]
    if source == AOTI_RUN:  # its signature: what export lifted out of the module
        assert labels == ["Exported program (torch.export): 1 user input, 29 parameters -> 1 user output"]
    else:
        assert labels == []


def test_the_signature_is_escaped():
    from compile_viz.render.exported import signature_html

    text = _member(AOTI_RUN, "exported_program.txt").decode().replace("target='lm_head.weight'",
                                                                       "target='<b>lm_head</b>'")
    ep = parse_exported_program(text, path="exported_program.txt")
    html = signature_html(ep)
    assert "&lt;b&gt;lm_head&lt;/b&gt;" in html and "<b>" not in html


# --------------------------------------------------------------------------- parsers on real text


@settings(max_examples=40, deadline=None)
@given(cut=st.floats(min_value=0, max_value=1))
def test_the_wrapper_parser_never_raises_on_a_cut_file(cut):
    data = _member(AOTI_RUN, "output_code.cpp")
    result = parse_aoti_wrapper(data[: int(len(data) * cut)], path="output_code.cpp")
    assert isinstance(result.warnings, tuple)
    if cut < 0.9:
        assert result.warnings


@settings(max_examples=40, deadline=None)
@given(cut=st.floats(min_value=0, max_value=1))
def test_the_exported_program_parser_never_raises_on_a_cut_file(cut):
    data = _member(AOTI_RUN, "exported_program.txt")
    result = parse_exported_program(data[: int(len(data) * cut)], path="exported_program.txt")
    assert isinstance(result.warnings, tuple)


# --------------------------------------------------------------------------- TORCH_TRACE logs


def test_tlparse_aoti_cuda_log_opens_with_triton_kernels_launches_and_provenance():
    parse = parse_path(str(TLPARSE / "inductor_provenance_aot_cuda_log.txt"))
    (g,) = parse.graphs
    assert g.kind == "inference" and not g.warnings
    oc = g.output_code
    assert [k.name for k in oc.kernels] == ["triton_poi_fused_addmm_relu_sigmoid_0", "triton_poi_fused_mul_1",
                                            "triton_poi_fused_addmm_gelu_2"]
    assert all(k.backend == "triton" and "@triton.jit" in k.source for k in oc.kernels)
    assert [la.kernel for la in oc.launches] == ["aoti_torch_cuda_mm_out", "triton_poi_fused_addmm_relu_sigmoid_0",
                                                 "triton_poi_fused_mul_1", "aoti_torch_cuda_mm_out",
                                                 "triton_poi_fused_addmm_gelu_2"]
    assert len(g.post_grad_graph.nodes) > 10 and g.provenance.code_to_post
    index = build_index(g)
    gelu = index.launches[4]
    assert gelu.evidence == "provenance" and "erf" in gelu.post_grad_nodes and gelu.source_lines


def test_tlparse_aoti_cpu_log_opens_with_cpp_kernels():
    (g,) = parse_path(str(TLPARSE / "inductor_provenance_aot_log.txt")).graphs
    assert g.output_code.kernels and all(k.backend == "cpp" for k in g.output_code.kernels)
    assert sum(not la.is_extern for la in g.output_code.launches) == len(g.output_code.kernels)
    assert not g.warnings


def test_export_logs_open_with_their_exported_graph():
    (g,) = parse_path(str(TLPARSE / "export_guard_added.log")).graphs
    assert g.kind == "export" and [n.name for n in g.aot_graph.nodes] == ["a", "mul", "output"]
    assert [(i.name, i.kind) for i in g.exported_program.inputs] == [("a", "USER_INPUT")]
    corpus_required()
    (g,) = parse_path(str(CORPUS / "traces" / "tlparse-tests" / "export.log")).graphs
    assert g.kind == "export" and g.aot_graph.node("slice_1") is not None
    assert [i.name for i in g.exported_program.inputs] == ["x", "y"]
    assert g.exported_program.range_constraints.startswith("{u0:")


def test_an_aoti_trace_imports_and_its_run_opens(tmp_path):
    done = import_path(RunStore(tmp_path), TLPARSE / "inductor_provenance_aot_cuda_log.txt")
    assert done.run.meta["trace"]["graphs"] == 1
    (g,) = parse_path(str(done.run.path)).graphs
    assert len(g.output_code.kernels) == 3


# --------------------------------------------------------------------------- a real capture --aoti


@pytest.mark.slow
def test_capture_aoti_of_a_bundled_sample_on_the_cpu(tmp_path):
    r = compile_viz_cli("capture", "mlp_gelu", "--aoti", "--device", "cpu", "--home", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    run = Path(r.stdout.strip().splitlines()[-1])
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["resolved"]["compiler"] == "aoti" and not meta["resolved"]["train"]
    assert meta["package_run"]["status"] == "ok", meta["package_run"]  # loaded and called in a fresh process
    assert not list((run / "trace").glob("*.log"))[1:], "the fresh process writes no second trace"
    (g,) = parse_path(str(run)).graphs
    assert not g.warnings, g.warnings
    assert g.exported_program.inputs_of("USER_INPUT") and g.exported_program.inputs_of("PARAMETER")
    index = build_index(g)
    assert any(not la.is_extern for la in index.launches)
    assert all(la.fx_nodes and la.source_lines for la in index.launches)
    (pg,) = parse_path(str(run / "package" / "model.pt2")).graphs
    assert [la.kernel for la in pg.output_code.launches] == [la.kernel for la in g.output_code.launches]
    r = compile_viz_cli("parse", "--trace", str(run))  # its TORCH_TRACE log: the same kernels, no Dynamo frame
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("[] inference"))
    assert r.returncode == 0 and f"{len(g.output_code.kernels)} kernels" in line, r.stdout


@pytest.mark.slow
def test_an_export_failure_is_a_failed_run_with_the_reason_and_the_users_line(tmp_path):
    model = tmp_path / "branchy.py"
    model.write_text(
        "from sample_models import SampleSpec\n\n"
        "def build(device, dtype):\n"
        "    import torch\n\n"
        "    class Branchy(torch.nn.Module):\n"
        "        def forward(self, x):\n"
        "            if x.sum().item() > 0:  # data-dependent control flow\n"
        "                return x * 2\n"
        "            return x - 1\n\n"
        "    return Branchy()\n\n"
        "def example_inputs(device, dtype):\n"
        "    import torch\n"
        "    return (torch.randn(4, 8, device=device, dtype=dtype),)\n\n"
        "SPEC = SampleSpec(name='branchy', title='Branchy', teaching_note='', build=build,\n"
        "                  example_inputs=example_inputs)\n")
    r = compile_viz_cli("capture", str(model), "--aoti", "--device", "cpu", "--home", str(tmp_path / "home"))
    assert r.returncode == 1
    meta = json.loads((Path(r.stdout.strip().splitlines()[-1]) / "meta.json").read_text())
    reason = meta["reason"]
    assert meta["status"] == "failed" and reason.startswith("torch.export failed: ") and "\n" not in reason
    assert f"{model}:8 in forward" in reason, reason


def test_the_compare_and_compiles_pages_open_aot_runs(app_store):
    from test_app_fixtures import no_errors, run_app

    jit, aot = app_store.import_zip(JIT_RUN), app_store.import_zip(AOTI_RUN)
    trace = import_path(app_store, TLPARSE / "export_guard_added.log").run
    pages = """
import streamlit as st
from compile_viz.ui import compare_page, compiles_page, page_registry, viewer

pages = dict({first}=st.Page({first}_page.page if "{first}" != "viewer" else viewer.page, title="{first}",
                               url_path="{first}", default=True),
             viewer=st.Page(viewer.page, title="Viewer", url_path="viewer"))
page_registry.register(pages)
st.navigation(list(pages.values())).run()
"""
    at = run_app(pages.format(first="compare"), run=jit.id, compare=aot.id)
    no_errors(at)
    assert "same" in repr(at._tree) and "aoti_torch_cpu_mm_out" in repr(at._tree)
    no_errors(run_app(pages.format(first="compiles"), run=trace.id))


@pytest.mark.slow
def test_capture_aoti_of_a_plain_function_with_dynamic_shapes(tmp_path):
    """dynamic_shapes builds a function, not a module, and asks for dynamic=True: export takes it wrapped,
    every dimension Dim.AUTO, and the package runs both of its input shapes."""
    r = compile_viz_cli("capture", "dynamic_shapes", "--aoti", "--device", "cpu", "--home", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    run = Path(r.stdout.strip().splitlines()[-1])
    (g,) = parse_path(str(run)).graphs
    assert not g.warnings and g.output_code.kernels
    ep = g.exported_program
    assert [i.kind for i in ep.inputs] == ["USER_INPUT"] and ep.range_constraints.startswith("{s")
    assert "running    the package on 2 input sets, in a fresh process" in r.stdout
    meta = json.loads((run / "meta.json").read_text())
    assert meta["package_run"]["status"] == "ok" and meta["timings"]["package_run_s"] > 0


def test_uploading_a_package_on_the_runs_page_opens_it_in_the_viewer(app_store):
    from streamlit.testing.v1 import AppTest
    from test_app_fixtures import no_errors

    app = """
import streamlit as st
from compile_viz.ui import page_registry, runs_page, viewer

pages = dict(runs=st.Page(runs_page.page, title="Runs", url_path="runs", default=True),
             viewer=st.Page(viewer.page, title="Viewer", url_path="viewer"))
page_registry.register(pages)
st.navigation(list(pages.values())).run()
"""
    at = AppTest.from_string(app, default_timeout=120).run()
    at.file_uploader[0].set_value(("model.pt2", _member(AOTI_RUN, "package/model.pt2"), "application/zip")).run()
    no_errors(at)
    run = app_store.get(at.query_params["run"])
    assert run.meta["source"]["kind"] == "aoti_package" and at.query_params["graph"] == "model"


def test_the_compile_page_starts_an_aoti_capture(app_store, monkeypatch):
    from test_app_fixtures import no_errors, run_app

    from compile_viz.ui import jobs

    started = []
    monkeypatch.setattr(jobs, "start", lambda model, options, store: started.append(options) or
                        jobs.CaptureJob(model, options))  # never started: shows as in progress
    app = """
import streamlit as st
from compile_viz.ui import compile_page, page_registry, viewer

pages = dict(compile=st.Page(compile_page.page, title="Compile", url_path="compile", default=True),
             viewer=st.Page(viewer.page, title="Viewer", url_path="viewer"))
page_registry.register(pages)
st.navigation(list(pages.values())).run()
"""
    at = run_app(app)
    next(c for c in at.checkbox if c.label.startswith("Ahead of time")).check().run()
    at.button[0].click().run()
    no_errors(at)
    (options,) = started
    assert options.aoti and not options.measure


def test_an_exported_program_archive_opens_with_its_graph_and_signature(tmp_path):
    """torch.export.save writes a .pt2 with models/model.json (torch's serialization schema) and no
    compiled model: it opens as an export graph, read as JSON, its weights never read."""
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.BatchNorm1d(16)).eval()
    pt2 = tmp_path / "ep.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(4, 8),)), str(pt2))
    (g,) = parse_path(str(pt2)).graphs
    assert g.kind == "export" and g.output_code is None
    ep = g.exported_program
    assert [i.kind for i in ep.inputs].count("PARAMETER") == 4 and ep.inputs_of("BUFFER")
    assert ep.inputs_of("USER_INPUT")[0].name == "input" and ep.inputs[0].target == "0.weight"
    linear = next(n for n in g.aot_graph.nodes if n.target == "aten.linear.default")
    assert linear.dtype == "f32" and linear.shape == ("4", "16") and linear.source.file.endswith("linear.py")
    assert any("nothing was compiled" in w.text for w in g.warnings)
    done = import_path(RunStore(tmp_path / "home"), pt2)
    assert done.run.meta["source"]["kind"] == "aoti_package"
    (again,) = parse_path(str(done.run.path)).graphs
    assert again.exported_program.inputs == ep.inputs
    from compile_viz.artifacts.serialized_program import parse_serialized_program

    data = _member(pt2, "models/model.json")
    for cut in (0, 1, len(data) // 3, len(data) // 2, len(data) - 1):  # cut anywhere: a warning, never a raise
        assert parse_serialized_program(data[:cut], path="model.json").warnings
    flipped = data.replace(b'"parameter"', b'"parameterX"', 1)
    assert any("not understood" in w.text for w in parse_serialized_program(flipped, path="m").warnings)


def test_a_package_that_does_not_run_is_a_note_in_one_line(tmp_path):
    """The package runs in a fresh process: its failure (a crash seen on an H100 in the compiling process)
    is one line in meta.json's package_run, and the capture keeps its artifacts."""
    torch = pytest.importorskip("torch")
    from compile_viz.capture.aoti import run_package

    (tmp_path / "logs").mkdir()
    pt2 = tmp_path / "model.pt2"
    pt2.write_bytes(b"not a package")
    ran = run_package(torch, pt2, [(torch.randn(2, 3),)], run_dir=tmp_path)
    assert ran["status"] == "failed" and "\n" not in ran["reason"]
    assert ran["reason"].startswith("the package did not run in a fresh process: exited with code 1: ")
    assert (tmp_path / "logs" / "package_run.txt").read_text()


def test_parse_json_of_an_aot_run_has_the_signature():
    r = compile_viz_cli("parse", "--json", str(AOTI_RUN))
    (g,) = json.loads(r.stdout)["graphs"]
    ep = g["exported_program"]
    assert ep["inputs"][0] == {"name": "p_transformer_wte_weight", "kind": "PARAMETER",
                               "target": "transformer.wte.weight", "persistent": None}
    assert ep["outputs"] == [{"name": "linear", "kind": "USER_OUTPUT", "target": ""}]
    r = compile_viz_cli("parse", "--json", str(JIT_RUN))
    assert "exported_program" not in json.loads(r.stdout)["graphs"][0]  # a JIT graph's document is as it was


@pytest.mark.slow
def test_capture_aoti_of_a_transformers_model_runs_its_package_in_a_fresh_process(tmp_path):
    """GPT-2 returns a transformers ModelOutput: the fresh process imports transformers.modeling_outputs
    (the module of the package's output type) before it loads the package, or the package cannot be read."""
    pytest.importorskip("transformers")
    r = compile_viz_cli("capture", "tests/third_party/models.py:GPT2_INFER", "--aoti", "--device", "cpu",
                        "--home", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    meta = json.loads((Path(r.stdout.strip().splitlines()[-1]) / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["package_run"]["status"] == "ok", meta.get("package_run")
