"""70 scaled row sums of one input, written as 70 separate reductions and a stack: on the GPU
Inductor refuses to fuse them past `max_fusion_size` ("exceeds max fusion"), so they land in
dozens of kernels. Written as one reduction over a stacked weight, the same result is one kernel."""

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
        "Seventy reductions that all read `x`, then a `stack`: 141 scheduler nodes. On the GPU Inductor "
        "fuses each scaled sum, then wants to put them together with the `stack` that reads them all, and "
        "refuses every such pair: **exceeds max fusion**, the fused node would hold more than "
        "`max_fusion_size` (64) nodes. So 66 kernel launches run (on an H100), each reading `x` again. Open "
        "*Why not fused?* and *Refusals by reason* to see the pairs. What you can change: raise the limit "
        "(`--option max_fusion_size=256` on the Compile page or the CLI): 2 launches; or write the sums as "
        "one reduction over a stacked scale, `(x[:, None, :] * torch.arange(1, 71)[:, None]).sum(-1)`: one "
        "kernel that reads `x` once (`scripts/verify-many-row-sums.sh` checks all three on a GPU). "
        "(On the CPU the C++ backend already runs them in one loop nest.)"
    ),
    build=build,
    example_inputs=example_inputs,
)
