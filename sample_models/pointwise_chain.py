"""Six pointwise ops on a large tensor: one kernel, one read and one write."""

from sample_models import SampleSpec


def pointwise_chain(x):
    import torch

    x = x * 2.0
    x = x + 1.0
    x = torch.sigmoid(x)
    x = x * x
    x = torch.tanh(x)
    x = x / (x.abs() + 1.0)
    return x


def build(device, dtype):
    return pointwise_chain


def example_inputs(device, dtype):
    import torch

    n = 4096 if str(device).startswith("cuda") else 1024
    return (torch.randn(n, n, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="pointwise_chain",
    title="Pointwise chain",
    teaching_note=(
        "Eager runs six kernels and writes five temporaries to memory. Every op here is "
        "elementwise with the same shape, so Inductor fuses all of them into one kernel: one "
        "load, one store, the arithmetic in registers. This is the memory-bound win that "
        "fusion exists for. (On a CPU the tensor is 1024x1024 to keep the capture quick.)"
    ),
    build=build,
    example_inputs=example_inputs,
)
