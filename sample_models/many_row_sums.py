"""70 scaled row sums of one input, written as 70 separate reductions: Inductor refuses to fuse
the ones far apart ("too far away"), so they land in several kernels. Written as one reduction
over a stacked weight, the same result is one kernel."""

from sample_models import SampleSpec

N_SUMS = 70


def many_sums(x):
    import torch

    return torch.stack([(x * (i + 1)).sum(dim=1) for i in range(N_SUMS)], dim=1)


def build(device, dtype):
    return many_sums


def example_inputs(device, dtype):
    import torch

    return (torch.randn(256, 512, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="many_row_sums",
    title="70 row sums: a refusal you can fix",
    teaching_note=(
        "Seventy reductions that all read `x`: Inductor fuses neighbours into shared kernels, but refuses "
        "pairs more than 64 nodes apart in the program's order (**too far apart**: fusing them would keep "
        "buffers alive across everything in between and raise peak memory), so the sums end up in several "
        "kernels that each read `x` again. Open *Why not fused?* and the refusals by reason to see every "
        "refused pair. What you can change: write the sums as one reduction over a stacked scale, "
        "`(x[:, None, :] * torch.arange(1, 71)[:, None]).sum(-1)`, and Inductor makes one kernel that reads "
        "`x` once; or keep the code and accept the extra reads (each kernel is cheap here)."
    ),
    build=build,
    example_inputs=example_inputs,
)
