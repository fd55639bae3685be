"""Third-party models on the CPU: the default training loss, and a transformers GPT-2 training step
captured with the project's CLI from a spec that gives no `loss`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from compile_viz.capture.default_loss import (
    MAX_DEPTH,
    NoFloatingOutput,
    first_floating_tensor,
    make_default_loss,
)
from tests.conftest import compile_viz_cli

torch = pytest.importorskip("torch")


def picked(out) -> str:
    """Return the path the default loss takes in `out` (fails when it finds nothing)."""
    found = first_floating_tensor(out)
    assert found is not None
    return found[1]


# -- the default loss over real tensors ----------------------------------------------------------
def test_a_bare_tensor_is_the_output():
    t = torch.randn(2, 3)
    tensor, path = first_floating_tensor(t)
    assert tensor is t and path == "output"


def test_a_model_output_gives_its_logits():
    outputs = pytest.importorskip("transformers.modeling_outputs")
    logits = torch.randn(2, 3, 5)
    out = outputs.CausalLMOutput(logits=logits)  # loss=None is dropped, as the model returns it
    tensor, path = first_floating_tensor(out)
    assert tensor is logits and path == "output['logits']"


def test_a_model_output_is_taken_in_its_own_order():
    outputs = pytest.importorskip("transformers.modeling_outputs")
    out = outputs.CausalLMOutput(loss=torch.tensor(1.5), logits=torch.randn(2, 3))
    assert picked(out) == "output['loss']"


def test_integer_tensors_are_skipped():
    assert picked((torch.arange(3), torch.ones(2))) == "output[1]"
    assert picked({"ids": torch.zeros(2, dtype=torch.long), "mask": torch.ones(2, dtype=torch.bool),
                   "scores": torch.randn(2)}) == "output['scores']"


@dataclasses.dataclass
class Out:
    ids: object
    hidden: object


def test_dataclass_fields_and_nested_tuples():
    assert picked(Out(ids=torch.arange(4), hidden=torch.randn(4))) == "output.hidden"
    assert picked(((torch.arange(2), (None, "text", torch.randn(1))),)) == "output[0][1][2]"
    assert picked([{"a": Out(ids=None, hidden=torch.randn(1, dtype=torch.bfloat16))}]) == "output[0]['a'].hidden"


def test_nesting_past_max_depth_is_not_searched():
    deep = torch.randn(1)
    for _ in range(MAX_DEPTH + 1):
        deep = (deep,)
    assert first_floating_tensor(deep) is None


def test_loss_is_mean_of_squares_in_float_and_announced_once():
    said = []
    loss = make_default_loss(said.append)
    logits = torch.randn(2, 3, dtype=torch.bfloat16, requires_grad=True)
    value = loss({"ids": torch.arange(2), "logits": logits})
    assert value.dtype == torch.float32 and value.dim() == 0
    assert torch.allclose(value, logits.detach().float().pow(2).mean())
    value.backward()
    assert logits.grad is not None and logits.grad.shape == logits.shape
    loss({"logits": torch.randn(2, 3)})
    assert said == ["default loss: mean of squares of output['logits'] (dict, shape (2, 3)); "
                    "set `loss` in the spec to choose another"]


@pytest.mark.parametrize("out, kind", [((torch.arange(3), {"n": torch.ones(2, dtype=torch.int32)}), "tuple"),
                                       (None, "NoneType"), ("text", "str")])
def test_no_floating_tensor_is_one_line_that_says_what_to_do(out, kind):
    with pytest.raises(NoFloatingOutput) as err:
        make_default_loss()(out)
    message = str(err.value)
    assert "\n" not in message
    assert message == (f"the model returned {kind} with no floating tensor in it: "
                       "give the spec a loss(output) -> scalar")


# -- a real capture: transformers GPT-2 (2 layers), training step, no loss in the spec -----------
@pytest.mark.slow
def test_gpt2_training_step_with_the_default_loss(tmp_path):
    pytest.importorskip("transformers")
    home = tmp_path / "home"
    proc = compile_viz_cli("capture", "tests/third_party/models.py:GPT2_TRAIN", "--device", "cpu",
                           "--home", str(home))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert any("default loss: mean of squares of output['logits'] (CausalLM" in line
               and "shape (2, 32, 512)" in line for line in lines), proc.stdout
    run = Path(lines[-1])
    meta = json.loads((run / "meta.json").read_text())
    assert run.parent == home / "runs" and meta["status"] == "complete" and meta["resolved"]["train"] is True
    kinds = sorted(Path(g).name.split("_")[-2] for g in meta["graphs"])
    assert kinds == ["backward", "forward"], meta["graphs"]

    parsed = compile_viz_cli("parse", str(run), "--json")
    assert parsed.returncode == 0, parsed.stderr
    graphs = {g["kind"]: g for g in json.loads(parsed.stdout)["graphs"]}
    assert set(graphs) == {"forward", "backward"}
    for g in graphs.values():
        assert g["fx_nodes"] and g["kernels"] and g["launches"], g["id"]
        assert not g["warnings"], g["warnings"][:3]
