"""Linear(64, 32) -> relu -> * 0.5: an addmm with a pointwise epilogue."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    class TinyModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(64, 32)

        def forward(self, x):
            x = self.linear(x)
            x = torch.relu(x)
            return x * 0.5

    return TinyModel().to(device=device, dtype=dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(8, 64, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="tiny_linear_relu",
    title="Tiny Linear + ReLU",
    teaching_note=(
        "The linear layer becomes an extern addmm (bias folded into the GEMM); relu and the "
        "multiply by 0.5 fuse into a single pointwise kernel that runs over the GEMM output. "
        "In a training step the backward graph shows the relu mask being recomputed or saved."
    ),
    build=build,
    example_inputs=example_inputs,
    supports_training=True,
)
