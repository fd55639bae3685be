"""A model before and after a change that splits one fusion, for the run comparison (tests/test_compare.py).

BEFORE: a GELU, a scale and a residual add, all pointwise: one fused kernel.
AFTER: the same ops with a matmul put between the GELU and the scale: Inductor cannot fuse
across the library call, so the kernel splits in two around it (and the matmul is new).
Both captured with `compile-viz capture tests/compare_models/split_fusion.py:BEFORE` (and :AFTER).
"""

from __future__ import annotations

from sample_models import SampleSpec


def before(x, w):
    import torch

    y = torch.nn.functional.gelu(x)
    return y * 0.5 + x


def after(x, w):
    import torch

    y = torch.nn.functional.gelu(x)
    y = y @ w
    return y * 0.5 + x


def inputs(device, dtype):
    import torch

    return (torch.randn(64, 64, device=device, dtype=dtype), torch.randn(64, 64, device=device, dtype=dtype))


BEFORE = SampleSpec(name="split_fusion_before", title="GELU, scale, residual (one fusion)",
                    teaching_note="One pointwise kernel.", build=lambda device, dtype: before, example_inputs=inputs)
AFTER = SampleSpec(name="split_fusion_after", title="GELU, matmul, scale, residual (the fusion split)",
                   teaching_note="Two pointwise kernels around an extern matmul.", build=lambda device, dtype: after,
                   example_inputs=inputs)
