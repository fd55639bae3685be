"""The same function called with two batch sizes under dynamic=True."""

from sample_models import SampleSpec


def norm_relu(x):
    import torch

    return torch.nn.functional.layer_norm(x, x.shape[-1:]).relu()


def build(device, dtype):
    return norm_relu


def example_inputs(device, dtype):
    import torch

    return (torch.randn(32, 256, device=device, dtype=dtype),)


def input_sets(device, dtype):
    import torch

    return [(torch.randn(32, 256, device=device, dtype=dtype),), (torch.randn(64, 256, device=device, dtype=dtype),)]


SPEC = SampleSpec(
    name="dynamic_shapes",
    title="Dynamic shapes",
    teaching_note=(
        "With dynamic=True the batch size is a symbol (s0, ks0) in the FX graph, the IR and the "
        "kernels, so the second call with another batch size reuses the same compiled code "
        "instead of recompiling. Look for symbolic sizes in the kernel signatures and for the "
        "guards on them."
    ),
    build=build,
    example_inputs=example_inputs,
    input_sets=input_sets,
    default_dynamic=True,
)
