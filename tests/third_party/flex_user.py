"""A user's own attention block on FlexAttention, as a user would write it: a causal score_mod
defined just above a `flex_attention(...)` call that spans two lines.

Captured on the GPU machine with the project's CLI (FlexAttention's template is Triton: it needs a
GPU) and exported as tests/fixtures/flex/flex_attention_h100.zip, for the source pane (issue 33):
the template launch's stacks run through torch/nn/attention/flex_attention.py under the user's call.
The line numbers of this file are in that capture's stacks: edit it and the fixture no longer matches.
"""

from __future__ import annotations

from sample_models import SampleSpec

DIM, HEADS, SEQ = 256, 4, 256


def build(device, dtype):
    import torch
    from torch import nn
    from torch.nn.attention.flex_attention import flex_attention

    class CausalBlock(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(DIM, 3 * DIM)
            self.out = nn.Linear(DIM, DIM)

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)

            def causal(score, batch, head, q_idx, kv_idx):
                return torch.where(q_idx >= kv_idx, score, -float("inf"))

            y = flex_attention(q, k, v,
                               score_mod=causal)
            return self.out(y.transpose(1, 2).reshape(b, s, d))

    return CausalBlock().to(device=device, dtype=dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(2, SEQ, DIM, device=device, dtype=dtype),)


FLEX = SampleSpec(name="flex_user", title="A causal FlexAttention block (a user's file)",
                  teaching_note="FlexAttention with a causal score_mod: one Triton template kernel.",
                  build=build, example_inputs=example_inputs)
