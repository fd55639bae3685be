"""A training step that compiles its forward and then fails: the spec's `loss` raises.

Used by tests/test_failed_run_graphs.py: a failed run whose debug folder already holds the forward
graph that Inductor compiled before the failure.
"""

from __future__ import annotations

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU()).to(device, dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(4, 16, device=device, dtype=dtype),)


def broken_loss(output):
    raise RuntimeError("the loss is broken on purpose")


SPEC = SampleSpec(name="fails_in_loss", title="Forward compiles, loss raises",
                  teaching_note="A training step whose loss raises after the forward graph was compiled.",
                  build=build, example_inputs=example_inputs, supports_training=True, default_train=True,
                  loss=broken_loss)
