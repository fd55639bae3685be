"""A graph break and a recompile in one TORCH_TRACE log: the bundled `.item()` branch sample
called with two input shapes, so that Dynamo breaks the graph at `.item()` and, on the second
call, finds its shape guards failed and compiles the frame again (tests/test_recompile_capture.py).
"""

from __future__ import annotations

from dataclasses import replace

from sample_models.graph_break_item import SPEC as ITEM


def two_shapes(device, dtype):
    import torch

    return [(torch.randn(64, 64, device=device, dtype=dtype),), (torch.randn(32, 48, device=device, dtype=dtype),)]


GRAPH_BREAK_TWO_SHAPES = replace(
    ITEM,
    name="graph_break_two_shapes",
    title="Graph break, called with two shapes",
    teaching_note="The .item() branch called with a 64x64 and then a 32x48 input: a graph break, then a recompile.",
    input_sets=two_shapes,
)
