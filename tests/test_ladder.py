"""Where a wrong result starts (issue 27): the backend ladder eager -> aot_eager ->
aot_eager_decomp_partition -> inductor locates a compile-only branch at graph capture and a planted
Inductor lowering at Inductor, where PyTorch's compiler bisector names the FX node; a reference that
cannot be built in float64 falls back to float32 and says so."""

from __future__ import annotations

import contextlib

import pytest

from compile_viz.measurements import Correctness, Ladder, Measurement
from compile_viz.render import ladder as render_ladder

torch = pytest.importorskip("torch")

from compile_viz.verify import bisect, correctness, ladder  # noqa: E402  (needs torch for the runs)
from compile_viz.verify.measure import make_step  # noqa: E402

SETTINGS = {"device": "cpu", "train": False, "autocast_dtype": None, "dtype": "fp32", "mode": "default",
            "dynamic": None, "fullgraph": False}


class BranchNet(torch.nn.Module):
    """Compiled code only: the hidden layer is halved under torch.compiler.is_compiling()."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        if torch.compiler.is_compiling():
            h = h * 0.5
        return self.fc2(h)


class TanhNet(BranchNet):
    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def _steps(loss=lambda out: out.square().mean()):
    return lambda fn, s: make_step(torch, fn, s, loss)


def _ladder(model, **settings):
    torch.manual_seed(0)
    args = (torch.randn(8, 16),)
    return ladder.run_ladder(torch, model=model, args=args, settings={**SETTINGS, **settings}, make_step=_steps())


@contextlib.contextmanager
def tanh_lowered_as_sigmoid():
    """Inductor only: aten.tanh lowered as sigmoid (eager, AOTAutograd and the decompositions keep tanh)."""
    from torch._inductor import lowering

    aten = torch.ops.aten
    saved = lowering.lowerings[aten.tanh.default]
    lowering.lowerings[aten.tanh.default] = lowering.lowerings[aten.sigmoid.default]
    try:
        yield
    finally:
        lowering.lowerings[aten.tanh.default] = saved
        torch._dynamo.reset()


class DropoutNet(TanhNet):
    def forward(self, x):
        return self.fc2(torch.nn.functional.dropout(torch.tanh(self.fc1(x)), 0.3, training=True))


@pytest.mark.slow
def test_dropout_is_no_false_alarm_at_the_decompositions():
    """Found on GPT-2 in training on the H100: the decompositions' dropout (rand + lt) drew eager's
    numbers in another pattern; every stage now draws them as the verdict does."""
    import torch._inductor.config  # noqa: F401

    out = _ladder(DropoutNet(), train=True)
    assert out["first"] is None, out["stages"]
    assert [s["ok"] for s in out["stages"]] == [True, True, True, True]


@pytest.mark.slow
def test_a_compile_only_branch_is_located_at_graph_capture():
    out = _ladder(BranchNet().eval(), train=True)
    assert out["first"] == "graph capture (Dynamo)" and out["first_backend"] == "eager"
    (stage,) = out["stages"]  # the later stages contain graph capture: not run
    assert stage["ok"] is False and stage["worst"] == "output" and stage["rule"] == "rmse vs float64"
    assert "bisect" not in out and out["reference"].startswith("float64")
    assert out["note"].startswith("first differs at graph capture (Dynamo)") and "is_compiling()" in out["note"]
    record = Ladder.from_json(out)
    assert record.first == "graph capture (Dynamo)" and record.stages[0].backend == "eager"


@pytest.mark.slow
def test_an_inductor_only_fault_is_located_at_inductor_and_bisected_to_its_node():
    with tanh_lowered_as_sigmoid():
        out = _ladder(TanhNet().eval())
    assert [s["backend"] for s in out["stages"]] == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    assert [s["ok"] for s in out["stages"]] == [True, True, True, False]
    assert out["first"] == "Inductor" and out["stages"][-1]["worst"] == "output"
    found = out["bisect"]
    if not hasattr(__import__("torch._inductor", fromlist=["x"]), "compiler_bisector"):
        assert found["ran"] is False and found["command"]
        return
    assert found["ran"] is True, found
    assert found["subsystem"] == "lowerings" and found["kind"] == "lowering" and found["node"] == "tanh"
    assert found["found"].startswith("Inductor's lowering of FX node tanh")
    assert "compiler bisector names Inductor's lowering of FX node tanh" in out["note"]


def test_the_bisector_missing_or_failing_says_so_with_the_command(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch._inductor.compiler_bisector", None)
    missing = bisect.bisect_inductor(torch, lambda: True)
    assert missing["ran"] is False and "has no torch._inductor.compiler_bisector" in missing["error"]
    assert missing["command"].startswith("python -m torch._inductor.compiler_bisector run")
    monkeypatch.undo()
    monkeypatch.setattr(bisect, "MAX_TRIES", 1)
    stopped = bisect.bisect_inductor(torch, lambda: False)  # never right: runs out of tries
    assert stopped["ran"] is False and stopped["error"].startswith("the compiler bisector failed: stopped after 1")


def test_what_the_bisector_names_reads_for_a_person():
    assert bisect.describe("inductor", "post_grad_passes", 3, "reorder_for_locality")["disable"] == \
        "reorder_for_locality=False"
    config = bisect.describe("inductor", "inductor_emulate_precision_casts", 0, "inductor_emulate_precision_casts")
    assert config["kind"] == "config" and config["disable"] == "emulate_precision_casts=True"
    assert bisect.describe("inductor", None, None, None)["found"] == "inductor, but no one subsystem of it"


class NoFloat64Net(torch.nn.Module):
    """A bf16 model with an op that has no float64 kernel (as grouped GEMMs of MoE models)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        if x.dtype == torch.float64:
            raise RuntimeError("no float64 kernel")
        return self.fc(x).relu()


@pytest.mark.slow
def test_a_reference_that_cannot_be_float64_falls_back_to_float32():
    model = NoFloat64Net().to(torch.bfloat16).eval()
    args = (torch.randn(8, 16, dtype=torch.bfloat16),)
    compiled = torch.compile(model)
    s = {**SETTINGS, "dtype": "bf16"}
    result = correctness.check_correctness(torch, model=model, compiled=compiled, args=args, settings=s,
                                           make_step=_steps())
    reference = result["method"]["reference"]
    assert reference.startswith("float32 eager copy (same seed): the float64 copy failed (RuntimeError: no float64")
    assert "RMSE vs float32" in result["method"]["rule"] and result["status"] == "ok"
    summary = Measurement.from_json({"correctness": result}).summary()
    assert summary.correctness_method.startswith("float32 eager copy")


def test_records_are_tolerant_and_the_row_escapes():
    assert Correctness.from_json({"ok": True}).ladder is None
    assert Measurement.from_json({"correctness": {"ok": True}}).summary().ladder_first is None
    odd = Ladder.from_json({"stages": [{"backend": "eager", "ok": "yes"}, 3], "first": 7, "bisect": "x"})
    assert odd.stages[0].ok is None and odd.stages[1].backend == "?" and odd.first is None and odd.bisect is None
    data = {"stages": [{"backend": "eager", "stage": "graph capture (Dynamo)", "ok": True},
                       {"backend": "aot_eager", "stage": "AOTAutograd", "ok": True},
                       {"backend": "aot_eager_decomp_partition", "stage": "decompositions", "ok": True},
                       {"backend": "inductor", "stage": "Inductor", "ok": False, "worst": "<logits>",
                        "note": "<logits>: worst at [0]"}],
            "first": "Inductor", "first_backend": "inductor",
            "bisect": {"ran": True, "kind": "lowering", "node": "tanh", "subsystem": "lowerings",
                       "found": "Inductor's lowering of FX node tanh (lowering #2)", "disable": "X=<1>"}}
    html = render_ladder.ladder_html(Ladder.from_json(data), links=[("graph 0: kernel cpp_fused_tanh_0", "?node=tanh")])
    assert html.count("cv-ladder-stage") == 4 and "&lt;logits&gt;" in html and "<logits>" not in html
    assert "first red: Inductor" in html and "cpp_fused_tanh_0" in html and "href='?node=tanh'" in html
    assert "X=&lt;1&gt;" in html
    capture = render_ladder.ladder_html(Ladder.from_json({"stages": [data["stages"][0] | {"ok": False}],
                                                          "first": "graph capture (Dynamo)"}))
    assert "is_compiling()" in capture and capture.count("not run</span>") == 3
    assert render_ladder.ladder_html(None) == ""


# -- the real thing: the sample wrong on purpose, captured by the CLI, shown by the Viewer ----------------
@pytest.mark.slow
def test_the_sample_wrong_on_purpose_is_red_at_eager_in_the_cli_and_the_viewer(tmp_path, monkeypatch):
    import json
    from pathlib import Path

    from tests.conftest import compile_viz_cli

    home = tmp_path / "home"
    proc = compile_viz_cli("capture", "compiled_differs", "--device", "cpu", "--measure", "--home", str(home))
    assert proc.returncode == 0, proc.stderr[-3000:]
    *_, said, last = proc.stdout.strip().splitlines()
    assert said.startswith("measured: correctness wrong: output: worst at [")
    assert "; ladder: first differs at graph capture (Dynamo): backend=\"eager\" already differs" in said
    run = Path(last)
    meta = json.loads((run / "meta.json").read_text())
    assert meta["measure"]["ladder_first"] == "graph capture (Dynamo)"
    ladder_json = json.loads((run / "measure.json").read_text())["correctness"]["ladder"]
    assert [s["backend"] for s in ladder_json["stages"]] == ["eager"] and ladder_json["stages"][0]["ok"] is False
    # the ladder's compiles left nothing in the run: one inference graph
    (inductor,) = run.glob("debug/torch_compile_debug/run_*/torchinductor")
    assert [p.name for p in inductor.iterdir() if p.is_dir()] == ["model__0_inference_0.0"]

    import streamlit as st
    from test_app_fixtures import no_errors, run_app

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(home))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_data.clear()
    st.cache_resource.clear()
    at = run_app(Path(__file__).parent.parent / "app.py", run=run.name)
    no_errors(at)
    bodies = "\n".join(h.proto.body for h in at.get("html"))
    assert bodies.count("cv-ladder-stage") == 4 and "first red: graph capture (Dynamo)" in bodies
    assert "is_compiling()" in bodies
    st.cache_data.clear()
    st.cache_resource.clear()
    # a node the bisector could name links to the kernel that computes it, in the Viewer's own terms
    from compile_viz.artifacts import parse_path
    from compile_viz.linking import build_index
    from compile_viz.linking.model import POST_GRAD
    from compile_viz.measurements import Bisect
    from compile_viz.render.selection import select

    (graph,) = parse_path(str(run)).graphs
    index = build_index(graph)
    node = next(n.name for n in graph.post_grad_graph.nodes if select(index, POST_GRAD, node=n.name).launches)
    from compile_viz.ui.page_registry import page_url

    ((label, href),) = render_ladder.kernel_links(Bisect(ran=True, node=node), [(graph.id, index)], run.name, page_url)
    assert f"node={node}" in href and href.startswith(f"/viewer?run={run.name}&graph=") and "&kernel=" in href
    assert render_ladder.kernel_links(Bisect(ran=True, node="no_such_node"), [(graph.id, index)], run.name,
                                      page_url) == []
