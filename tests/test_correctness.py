"""Correctness like PyTorch's accuracy harness (issue 16): randomness made equal, float64 reference,
a failure named by its path, and "not comparable" (never "wrong") when randomness differs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compile_viz.measurements import Correctness, Measurement, MeasureSummary
from compile_viz.render import perf
from tests.conftest import compile_viz_cli

torch = pytest.importorskip("torch")

from compile_viz.verify import accuracy, correctness  # noqa: E402  (needs torch for the checks)
from compile_viz.verify.measure import make_step  # noqa: E402

SETTINGS = {"device": "cpu", "train": True, "autocast_dtype": None, "dtype": "fp32", "mode": "default",
            "dynamic": None, "fullgraph": False}


class DropoutNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.drop, self.fc2 = torch.nn.Linear(16, 32), torch.nn.Dropout(0.3), torch.nn.Linear(32, 4)

    def weight2(self):
        return self.fc2.weight

    def forward(self, x):
        return {"logits": torch.nn.functional.linear(self.drop(torch.relu(self.fc1(x))), self.weight2(),
                                                     self.fc2.bias)}


class PlantedNet(DropoutNet):
    """Compiled code only: the first half of fc2.weight's rows get no gradient; values unchanged."""

    def weight2(self):
        w = self.fc2.weight
        if torch.compiler.is_compiling():
            mask = (torch.arange(w.shape[0]) < w.shape[0] // 2).to(w.dtype)[:, None]
            w = w - (w - w.detach()) * mask
        return w


class OwnGeneratorNet(torch.nn.Module):
    """Draws noise from a generator of its own, which torch.manual_seed does not reset."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.gen = torch.Generator().manual_seed(1)

    def forward(self, x):
        return self.fc(x) + torch.rand(x.shape, generator=self.gen)


def _check(model, **settings):
    torch.manual_seed(0)
    args = (torch.randn(8, model.fc1.in_features if hasattr(model, "fc1") else 8),)
    s = {**SETTINGS, **settings}
    loss = lambda out: next(iter(out.values())).square().mean() if isinstance(out, dict) else out.square().mean()  # noqa: E731
    compiled = torch.compile(model)
    make_step(torch, compiled, s, loss)(args)  # the user's compile, as the capture ran it
    return correctness.check_correctness(torch, model=model, compiled=compiled, args=args, settings=s,
                                         make_step=lambda fn, st: make_step(torch, fn, st, loss))


@pytest.mark.slow
def test_dropout_training_step_is_ok_with_eager_random_numbers():
    result = _check(DropoutNet().train())
    assert result["status"] == "ok" and result["ok"] is True, result["note"]
    assert result["model_draws_random"] and result["compared"] == 5  # logits + 4 gradients
    assert "fallback_random=True" in result["method"]["rng"] and result["method"]["reference"].startswith("float64")
    assert result["max_abs"] < 1e-5


@pytest.mark.slow
def test_a_planted_gradient_error_is_named_with_its_parameter():
    result = _check(PlantedNet().train())
    assert result["status"] == "wrong" and result["ok"] is False and result["failed"] == 1
    first = result["first_failure"]
    assert first["what"] == "grad of fc2.weight" and first["rule"] == "rmse vs float64"
    assert first["index"][0] < 2 and first["compiled"] == 0.0 and first["fp64"] != 0.0  # a dropped row
    assert result["note"].startswith("grad of fc2.weight: worst at [") and "Hint: the outputs agree" in result["note"]


@pytest.mark.slow
def test_randomness_that_cannot_be_made_equal_is_not_comparable(monkeypatch):
    own = _check(OwnGeneratorNet(), train=False)
    assert own["status"] == "not comparable" and own["ok"] is None
    assert own["note"].startswith(correctness.NOT_COMPARABLE) and "seed does not control" in own["note"]

    def no_check_compile(*a, **k):
        raise RuntimeError("the check compile is unavailable")

    monkeypatch.setattr(correctness, "eager_rng_compile", no_check_compile)
    torch._dynamo.reset()
    dropout = _check(DropoutNet().train())  # the user's compile draws Inductor's own random numbers
    assert dropout["status"] == "not comparable" and dropout["ok"] is None, dropout["note"]
    assert "check compile failed" in dropout["method"]["rng"]


def test_same_rules_with_a_float64_reference():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 64, dtype=torch.float64, generator=g)
    eager = (x + 1e-3 * torch.randn(x.shape, dtype=torch.float64, generator=g)).float()
    noisy = (x + 1e-3 * torch.randn(x.shape, dtype=torch.float64, generator=g)).float()
    ok = accuracy.compare(torch, "logits", eager, noisy, x, None)
    assert ok["ok"] and ok["rule"] == "rmse vs float64"  # allclose fails; as close to float64 as eager is
    small = x.float() * 1e-4  # gradients far below tol: same()'s absolute atol would pass anything
    dropped = small.clone()
    dropped[:32] = 0
    bad = accuracy.compare(torch, "grad of w", small, dropped, x * 1e-4, None)
    assert not bad["ok"] and bad["index"][0] < 32 and bad["compiled"] == 0.0
    assert "grad of w: worst at" in accuracy.describe(bad)


def test_cosine_similarity_without_float64_and_other_failures():
    e = torch.randn(256, 256).bfloat16()
    assert accuracy.compare(torch, "out", e, (e.float() * 1.01).bfloat16(), None, "bfloat16")["ok"]
    half = e.clone()
    half[:128] = 0
    cos = accuracy.compare(torch, "out", e, half, None, "bfloat16")
    assert not cos["ok"] and cos["rule"] == "cosine similarity" and cos["cosine"] < 0.99
    shape = accuracy.compare(torch, "output[1]", e, e[:2], None, None)
    assert not shape["ok"] and "shape" in accuracy.hint(shape, outputs_ok=False)
    nan = e.float().clone()
    nan[3, 4] = float("nan")
    bad = accuracy.compare(torch, "logits", e.float(), nan, None, None)
    assert not bad["ok"] and bad["index"] == [3, 4] and bad["compiled"] == "nan"
    assert "NaN/inf" in accuracy.hint(bad, outputs_ok=False)


def test_output_paths():
    t = torch.zeros(1)
    assert [p for p, _ in correctness.flatten(torch, t)] == ["output"]
    out = {"loss": t, "logits": t, "hidden_states": (t, [t]), "cache": object()}
    assert [p for p, _ in correctness.flatten(torch, out)] == ["loss", "logits", "hidden_states[0]",
                                                               "hidden_states[1][0]"]
    assert [p for p, _ in correctness.flatten(torch, (t, {"a": t}))] == ["output[0]", "output[1].a"]


def test_the_cli_says_the_verdict_before_the_run_folder():
    from compile_viz.cli.capture import measure_line

    assert measure_line({}) is None
    line = measure_line({"measure": {"ok": None, "correctness": "not comparable", "speedup": 1.5,
                                     "correctness_note": "not comparable: the model draws random numbers (x)"}})
    assert line == "measured: correctness not comparable: the model draws random numbers (x); speedup 1.50x " \
                   "(details in measure.json)"
    assert measure_line({"measure": {"ok": True}}).startswith("measured: correctness ok; speedup unknown")


def test_records_summary_and_panel_say_what_failed():
    first = {"what": "grad of transformer.h.1.attn.c_attn.weight", "ok": False, "rule": "rmse vs float64",
             "index": [3, 7], "eager": 0.5, "compiled": 0.0, "fp64": 0.5, "hint": "look <here>"}
    data = {"correctness": {"ok": False, "status": "wrong", "note": "grad of transformer.h.1.attn.c_attn.weight: "
                            "worst at [3, 7] <b>", "method": {"reference": "float64 eager copy", "rng": "seed 0",
                                                              "rule": "same()"},
                            "first_failure": first, "checks": [first], "max_abs": 0.5, "eager_max_abs": 1e-7},
            "speedup": 2.0}
    m = Measurement.from_json(data)
    assert m.correctness.first_failure.index == (3, 7) and m.correctness.first_failure.compiled == 0.0
    summary = MeasureSummary.from_json(json.loads(json.dumps(m.summary().to_json())))
    assert summary.correctness == "wrong" and summary.correctness_method == "float64 eager copy; seed 0; same()"
    html = perf.summary_html(summary)
    assert "grad of transformer.h.1.attn.c_attn.weight" in html and "&lt;b&gt;" in html and "<b>" not in html
    assert "against the float64 reference (eager&#x27;s own: 1e-07)" in html and "wrong" in html
    odd = MeasureSummary(ok=None, correctness="not comparable", correctness_note=correctness.NOT_COMPARABLE,
                         speedup=1.5, eager_median_ms=3.0, compiled_median_ms=2.0)
    assert perf.verdict(odd)[0] == "faster" and "not comparable: the model draws random numbers" in perf.summary_html(odd)
    old = Correctness.from_json({"ok": False, "checks": [{"what": "output 0", "ok": False, "rtol": 0.05}]})
    assert old.status == "wrong" and old.method_line() == "" and old.checks[0].rtol == 0.05


# -- the real thing: transformers GPT-2 (2 layers, dropout 0.1), a training step, the CLI, --measure ---------
@pytest.mark.slow
def test_gpt2_with_dropout_and_a_planted_error_names_only_the_parameter(tmp_path):
    pytest.importorskip("transformers")
    proc = compile_viz_cli("capture", "tests/third_party/models.py:GPT2_PLANTED", "--device", "cpu", "--measure",
                           "--home", str(tmp_path / "home"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    *_, said, last = proc.stdout.strip().splitlines()
    assert said.startswith("measured: correctness wrong: grad of transformer.h.1.attn.c_attn.weight: worst at [")
    run = Path(last)
    meta = json.loads((run / "meta.json").read_text())
    measure = meta["measure"]
    assert measure["correctness"] == "wrong" and measure["ok"] is False
    assert measure["correctness_note"].startswith("grad of transformer.h.1.attn.c_attn.weight: worst at [")
    assert "fallback_random=True" in measure["correctness_method"] and measure["errors"] == 0
    full = json.loads((run / "measure.json").read_text())["correctness"]
    assert full["failed"] == 1 and full["model_draws_random"]  # logits and 27 other gradients agree, dropout and all
    # the check's own compile left nothing in the run: two graphs, no recompile, no fusion-log graph of its own
    (inductor,) = run.glob("debug/torch_compile_debug/run_*/torchinductor")
    assert sorted(p.name for p in inductor.iterdir() if p.is_dir()) == ["model__0_backward_3.1", "model__0_forward_1.0"]
    assert len(list(inductor.glob("aot_*_debug.log"))) == 1 and not meta["recompiles"]
    marks = [x for x in (run / "logs" / "fusion.log").read_text().splitlines() if x.startswith("# graph: ")]
    assert len(marks) == 2, marks
