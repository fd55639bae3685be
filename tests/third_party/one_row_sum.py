"""The many_row_sums sample written as one reduction over a stacked scale (its teaching note's fix)."""

from sample_models import SampleSpec
from sample_models.many_row_sums import N_SUMS, example_inputs


def one_sum(x):
    import torch

    scale = torch.arange(1, N_SUMS + 1, device=x.device, dtype=x.dtype)
    return (x[:, None, :] * scale[:, None]).sum(-1)


SPEC = SampleSpec(name="one_row_sum", title="70 row sums as one reduction", teaching_note="many_row_sums' fix.",
                  build=lambda device, dtype: one_sum, example_inputs=example_inputs)
