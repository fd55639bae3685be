"""Linear(512, 1024) -> GELU -> Linear(1024, 512)."""

from sample_models import SampleSpec


def build(device, dtype):
    from torch import nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(512, 1024)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(1024, 512)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    return MLP().to(device=device, dtype=dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(32, 512, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="mlp_gelu",
    title="MLP with GELU",
    teaching_note=(
        "Two GEMMs stay extern calls; the bias add and the GELU between them fuse into one "
        "pointwise kernel (or into the GEMM epilogue under max-autotune). In a training step, "
        "the backward graph fuses GELU's derivative with the incoming gradient, and Inductor's "
        "partitioner decides whether to save the GELU input or recompute it."
    ),
    build=build,
    example_inputs=example_inputs,
    supports_training=True,
)
