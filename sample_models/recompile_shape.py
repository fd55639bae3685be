"""A recompile: the same function called with a second batch size, shapes left to Dynamo."""

from sample_models import SampleSpec
from sample_models.dynamic_shapes import norm_relu


def build(device, dtype):
    return norm_relu


def example_inputs(device, dtype):
    import torch

    return (torch.randn(32, 256, device=device, dtype=dtype),)


def input_sets(device, dtype):
    import torch

    return [(torch.randn(n, 256, device=device, dtype=dtype),) for n in (32, 64, 96)]


SPEC = SampleSpec(
    name="recompile_shape",
    title="Recompile: a new batch size",
    teaching_note=(
        "dynamic_shapes' function without dynamic=True, called with batch sizes 32, 64 and 96. The first "
        "call compiles for 32 exactly; the second fails the guard on the size, and Dynamo recompiles, this "
        "time with the batch size as a symbol (automatic dynamic shapes); the third reuses that graph. "
        "The Compiles page shows the two compiles and the failed guard."
    ),
    build=build,
    example_inputs=example_inputs,
    input_sets=input_sets,
)
