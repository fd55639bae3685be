"""Golden tests: every real capture parses, and the counts agree with independent greps."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from compile_viz.artifacts import EXPECTED, parse_path
from tests.conftest import CORPUS, GPU_CORPUS, SAMPLE_RUNS, THIRD_PARTY, corpus_required, corpus_sets

GRAPH_PARENTS = ("torchinductor", "aot_torchinductor")  # torch 2.0 wrote aot_torchinductor/
# Independent greps over the raw text (deliberately not the parsers' own patterns).
FX_OPS = re.compile(r"^(?![ \t]*#).*= torch\.ops\.", re.M)  # not in `# File: ..., code: x = torch.ops...`
KERNEL_DEFS = re.compile(r"async_compile\.(?:triton|cpp|cpp_pybinding)\(")
RUN_CALLS = re.compile(r"^\s+\w+\.run\(", re.M)
EXTERN_CALLS = re.compile(r"^\s+(?:[\w, ]+ = )?(?:extern_kernels\.\w+|torch\.ops\.[\w.]+|aten\.[\w.]+|inductor_ops\.\w+)\(", re.M)
# (`aten` and `inductor_ops` are output_code.py's own aliases of torch.ops.aten / torch.ops.inductor)
FUSED_HEADERS = re.compile(r"^\w+: \w*FusedSchedulerNode\(", re.M)
CPP_DEF_NAME = re.compile(r"^(\w+) = async_compile\.cpp", re.M)


def _call_section(code: str) -> str:
    """The text of call() and partition functions: from `def call` to `runner =` / `def get_args`."""
    start = code.find("def call(")
    if start < 0:
        return ""
    first_partition = code.find("def partition_0(")
    if 0 <= first_partition < start:
        start = first_partition
    end = min(x for x in (code.find("\nrunner = ", start), code.find("\ndef get_args", start), len(code)) if x >= 0)
    return code[start:end]


def expected_counts(files: dict[str, str]) -> dict[str, int]:
    code = files.get("output_code.py", "")
    call = _call_section(code)
    cpp_names = CPP_DEF_NAME.findall(code)
    cpp_calls = sum(len(re.findall(rf"^\s+{re.escape(n)}\(", call, re.M)) for n in cpp_names)
    return {
        "fx_ops": len(FX_OPS.findall(files.get("fx_graph_readable.py", ""))),
        "post_grad_ops": len(FX_OPS.findall(files.get("fx_graph_transformed.py", ""))),
        "kernels": len(KERNEL_DEFS.findall(code)),
        "launches": len(RUN_CALLS.findall(call)) + cpp_calls + len(EXTERN_CALLS.findall(call)),
        "fusion_groups": len(FUSED_HEADERS.findall(files.get("ir_post_fusion.txt", ""))),
    }


def parsed_counts(g) -> dict[str, int]:
    def torch_ops(graph):
        if graph is None:
            return 0
        return sum(
            1
            for n in graph.nodes + graph.subgraph_nodes
            if n.op == "call_function" and not n.target.startswith(("operator.", "torch.", "expr"))
        )

    return {
        "fx_ops": torch_ops(g.aot_graph),
        "post_grad_ops": torch_ops(g.post_grad_graph),
        "kernels": len(g.output_code.kernels) if g.output_code else 0,
        "launches": len(g.output_code.launches) if g.output_code else 0,
        "fusion_groups": len(g.post_fusion.fusion_groups) if g.post_fusion else 0,
    }


def raw_files_of(source: Path) -> dict[str, dict[str, str]]:
    """graph folder name -> {artifact name: text}, read without the project's discovery code."""
    out: dict[str, dict[str, str]] = {}
    if source.suffix == ".zip":
        with zipfile.ZipFile(source) as zf:
            for name in zf.namelist():
                p = Path(name)
                if p.parent.parent.name in GRAPH_PARENTS:
                    out.setdefault(p.parent.name, {})[p.name] = zf.read(name).decode("utf-8", "replace")
        return out
    for f in source.rglob("*"):
        # graph folders under (aot_)torchinductor/, or artifacts copied out to the set's root
        if f.is_file() and (f.parent.parent.name in GRAPH_PARENTS or f.parent == source):
            key = source.name if f.parent == source else f.parent.name
            out.setdefault(key, {})[f.name] = f.read_text("utf-8", "replace")
    return out


def all_sources() -> list[Path]:
    return corpus_sets() + sorted(SAMPLE_RUNS.glob("*.zip")) + sorted(THIRD_PARTY.glob("*.zip"))


@pytest.mark.parametrize("source", all_sources(), ids=lambda p: p.name)
def test_counts_agree_with_greps(source: Path):
    parsed = parse_path(str(source))
    raw = raw_files_of(source)
    assert parsed.graphs, "no graphs found"
    for g in parsed.graphs:
        files = raw[g.folder.name]
        assert parsed_counts(g) == expected_counts(files), g.id


def test_corpus_present_and_every_set_parses_clean():
    corpus_required()
    sets = corpus_sets()
    assert len(sets) >= 8
    for s in sets:
        parsed = parse_path(str(s))
        raw = raw_files_of(s)
        for g in parsed.graphs:
            assert g.output_code is not None, g.id
            # the one warning allowed is true of the set: a file its author did not keep
            absent = {n for n in EXPECTED if n not in raw[g.folder.name]}
            assert (g.aot_graph is None) == ("fx_graph_readable.py" in absent), g.id
            said = [str(w) for w in g.warnings]
            assert said == [f"{g.folder.name}/{n}: missing: views that need it will be partial" for n in EXPECTED if n in absent], said


def test_the_whole_public_corpus_at_once():
    """One folder holding seven captures of seven torch versions: every graph once, ids unique."""
    corpus_required()
    sets = [s for s in corpus_sets() if s.parent.name == "public"]
    parsed = parse_path(str(CORPUS / "public"))
    ids = [g.id for g in parsed.graphs]
    assert len(ids) == len(set(ids)) == sum(len(parse_path(str(s)).graphs) for s in sets)
    assert not [w for g in parsed.graphs for w in g.warnings if "missing" not in w.text]


def _graph(case: str, kind: str = "inference", index: int = 0):
    corpus_required()
    parsed = parse_path(str(GPU_CORPUS / case))
    graphs = [g for g in parsed.graphs if g.kind == kind]
    return parsed, graphs[index]


def test_matmul_softmax_hand_checked():
    _, g = _graph("matmul_softmax")
    aot = g.aot_graph
    assert [n.name for n in aot.call_nodes] == ["mm", "amax", "sub", "exp", "sum_1", "div"]
    mm = aot.node("mm")
    assert mm.target == "aten.mm.default" and mm.dtype == "f32" and mm.shape == ("100", "100")
    assert mm.args == ("arg0_1", "arg1_1")
    assert (mm.source.file, mm.source.line, mm.source.function) == ("capture_cases.py", 20, "simple_fn")
    assert aot.node("amax").constants == ("[1]", "True")
    assert aot.inputs == ("arg0_1", "arg1_1") and aot.outputs == ("div",)

    post = g.post_grad_graph
    assert post.node("getitem").target == "operator.getitem"
    assert post.node("prepare_softmax_online_default").source is None  # "No stacktrace found"

    pre = g.pre_fusion
    assert [n.name for n in pre.nodes] == ["op0", "op1", "op2", "op3"]
    op0 = pre.nodes[0]
    assert op0.kind == "extern" and op0.extern_kernel == "extern_kernels.mm"
    assert op0.outputs[0].layout.size == ("100", "100") and op0.outputs[0].users == ("op1", "op2", "op3")
    op3 = pre.nodes[3]
    assert op3.unmet == ("buf0", "buf1", "buf2")
    assert op3.loop_body_ops == ("load", "load", "sub", "exp", "load", "truediv", "store")
    assert op3.iteration == "(10000, 1)"

    (group,) = g.post_fusion.fusion_groups
    assert group.name == "op1_op2_op3" and group.members == ("op1", "op2", "op3")
    assert group.buffers == ("buf1", "buf2", "buf3")

    (kernel,) = g.output_code.kernels
    assert kernel.kind == "persistent_reduction" and kernel.heuristics == "persistent_reduction"
    assert kernel.source.lstrip().startswith("import triton")
    assert "def triton_per_fused__softmax" in kernel.source
    assert kernel.comments.original_aten[0] == "prims.prepare_softmax_online"
    assert dict(kernel.comments.source_to_aten)["softmax"] == ("div",)
    assert kernel.comments.graph_fragment[-1] == "return %getitem,%getitem_1,%div"

    mm_call, softmax_launch = g.output_code.launches
    assert mm_call.is_extern and mm_call.kernel == "extern_kernels.mm" and mm_call.outputs == ("buf0",)
    assert mm_call.comments.provenance_handle == "extern_kernels.mm:1"
    assert softmax_launch.kernel == kernel.name and softmax_launch.buffers == ("buf3",)
    assert softmax_launch.comments.source_nodes == ("softmax",)
    reuse = [a for a in g.output_code.allocations if a.kind == "reuse"]
    assert [(a.name, a.reused_from) for a in reuse] == [("buf3", "buf0")]
    assert [a.name for a in g.output_code.asserts] == ["arg0_1", "arg1_1"]

    prov = g.provenance
    assert prov.code_to_post["extern_kernels.mm:1"] == ("mm",)
    assert prov.pre_to_post["z"] == ("mm",)


def test_backward_graph_and_kernel_meta():
    from compile_viz.artifacts.kernel_meta import kernel_meta

    _, g = _graph("mlp_train_step", "backward")
    assert g.aot_graph.outputs == ("mm_2", "view_1", None, "mm_1", "view")
    assert g.output_code.graph_inputs == ("primals_3", "primals_4", "addmm", "mul_2", "tangents_1")
    kinds = [(la.kernel, la.is_extern) for la in g.output_code.launches]
    assert kinds[0] == ("extern_kernels.mm", True) and kinds[2] == ("triton_per_fused_sum_0", False)
    meta = kernel_meta(g.output_code.kernels[0])
    assert meta.size_hints and meta.count("num_load") is not None and meta.signature


def test_dynamic_shapes_keep_symbols():
    _, g = _graph("dynamic_shapes")
    x = g.aot_graph.node("arg2_1")
    assert x.shape == ("s77", "s27")
    assert g.aot_graph.node("arg0_1").dtype == "Sym"
    assert any("s77" in "".join(b.layout.size) for n in g.pre_fusion.nodes for b in n.outputs if b.layout)


def test_graph_break_run_has_two_graphs_and_the_reason():
    parsed, _ = _graph("graph_break_item")
    assert [g.id for g in parsed.graphs] == ["model__0_inference_0.0", "model__1_inference_1.1"]
    (gb,) = parsed.graph_breaks
    assert (gb.file, gb.line) == ("capture_cases.py", 85)
    assert "Tensor.item()" in gb.reason and gb.code == "if y.mean().item() > 0:"


@pytest.mark.parametrize("level", ["case", "torch_compile_debug", "run", "torchinductor", "graph"])
def test_discovery_at_every_level(level):
    corpus_required()
    case = GPU_CORPUS / "mlp_train_step"
    run = next((case / "torch_compile_debug").glob("run_*"))
    path = {
        "case": case,
        "torch_compile_debug": case / "torch_compile_debug",
        "run": run,
        "torchinductor": run / "torchinductor",
        "graph": run / "torchinductor" / "model__0_forward_1.0",
    }[level]
    parsed = parse_path(str(path))
    ids = [g.id for g in parsed.graphs]
    assert ids == (["model__0_forward_1.0"] if level == "graph" else ["model__0_forward_1.0", "model__0_backward_3.1"])
    assert parsed.graphs[0].kind == "forward"
    assert "output_code.py" in parsed.graphs[0].folder.files


def test_discovery_of_a_zip(tmp_path):
    corpus_required()
    case = GPU_CORPUS / "graph_break_item"
    zpath = tmp_path / "run.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for f in case.rglob("*"):
            if f.is_file():
                zf.write(f, f.relative_to(case.parent))
    parsed = parse_path(str(zpath))
    assert len(parsed.graphs) == 2 and parsed.graph_breaks


def test_graph_break_new_log_format_from_a_bundled_run():
    zpath = SAMPLE_RUNS / "graph_break_print.zip"
    if not zpath.exists():
        pytest.skip("sample_runs/graph_break_print.zip is absent")
    (gb,) = parse_path(str(zpath)).graph_breaks
    assert gb.file.endswith("sample_models/graph_break_print.py") and gb.line == 12
    assert gb.reason == "Failed to trace builtin operator"
    assert gb.code.startswith('print("graph_break_print: inside forward")')
