"""softmax(x @ y) on 100x100: an extern matmul and one fused softmax kernel."""

from sample_models import SampleSpec


def simple_fn(x, y):
    import torch

    z = torch.matmul(x, y)
    return torch.nn.functional.softmax(z, dim=1)


def build(device, dtype):
    return simple_fn


def example_inputs(device, dtype):
    import torch

    return (torch.randn(100, 100, device=device, dtype=dtype), torch.randn(100, 100, device=device, dtype=dtype))


SPEC = SampleSpec(
    name="matmul_softmax",
    title="Matmul + softmax",
    teaching_note=(
        "Inductor does not write its own matmul here: `x @ y` becomes an extern call (cuBLAS on "
        "GPU, mkldnn/BLAS on CPU), and the softmax's max, subtract, exp, sum and divide fuse into "
        "one reduction kernel that reads the matmul output once. At 100x100 the compiled version "
        "can be slower than eager: launch overhead dominates, which is a lesson in itself."
    ),
    build=build,
    example_inputs=example_inputs,
)
