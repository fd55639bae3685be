"""The sample-model gallery: one module per model, one `SampleSpec` each.

Importing this package does not import torch: builders import it when called, so the
dashboard can list the gallery without torch installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

DTYPES = ("fp32", "bf16", "fp16", "autocast")


@dataclass(frozen=True)
class SampleSpec:
    """One model for the capture: how to build it, what to feed it, what to expect.

    `build(device, dtype)` returns an `nn.Module` or a plain callable; `example_inputs(device,
    dtype)` returns the positional arguments of one call. `dtype` is a `torch.dtype` (float32
    under autocast). `input_sets`, when given, returns several argument tuples that are called
    in turn (e.g. two batch sizes under dynamic=True); it replaces `example_inputs` then.
    """

    name: str
    title: str
    teaching_note: str
    build: Callable[[str, Any], Any]
    example_inputs: Callable[[str, Any], tuple]
    supports_training: bool = False
    default_dtype: str = "fp32"
    # Used instead of default_dtype on CPU, with cpu_note saying why (e.g. fp16 on CPU).
    cpu_dtype: str | None = None
    cpu_note: str = ""
    input_sets: Callable[[str, Any], Sequence[tuple]] | None = None
    default_dynamic: bool | None = None
    default_train: bool = False
    # output -> scalar loss for a training step; default: mean of squares of the first floating
    # tensor in the output (tensor, tuple, list, dict, dataclass or ModelOutput, depth first).
    loss: Callable[[Any], Any] | None = None
    # Captured only on a GPU in practice (minutes on a CPU); still CPU-capable.
    large: bool = False

    def __post_init__(self) -> None:
        for d in (self.default_dtype, self.cpu_dtype):
            if d is not None and d not in DTYPES:
                raise ValueError(f"sample {self.name!r}: dtype {d!r} is not one of {', '.join(DTYPES)}")

    def calls(self, device: str, dtype: Any) -> list[tuple]:
        """Return the argument tuples to call the compiled model with, in order."""
        if self.input_sets is not None:
            return [tuple(args) for args in self.input_sets(device, dtype)]
        return [tuple(self.example_inputs(device, dtype))]

    def dtype_for(self, device: str) -> tuple[str, str]:
        """Return (dtype name, note) this sample uses by default on `device`."""
        if device.startswith("cpu") and self.cpu_dtype:
            return self.cpu_dtype, self.cpu_note
        return self.default_dtype, ""


# Gallery order: from one fused kernel to a whole GPT training step.
SAMPLE_MODULES = (
    "matmul_softmax",
    "tiny_linear_relu",
    "pointwise_chain",
    "mlp_gelu",
    "layernorm_linear_gelu_residual",
    "transformer_layer",
    "graph_break_print",
    "graph_break_item",
    "graph_break_loop",
    "graph_break_library",
    "compiled_differs",
    "dynamic_shapes",
    "recompile_shape",
    "convnet_bn_relu",
    "cudagraph_skip_mutation",
    "many_row_sums",
    "gpt_small",
    "gpt_deep",
)


def sample_names() -> list[str]:
    """Return the names of the bundled samples, in gallery order."""
    return list(SAMPLE_MODULES)


def get_sample(name: str) -> SampleSpec:
    """Return the spec of sample `name`; KeyError with the known names otherwise."""
    if name not in SAMPLE_MODULES:
        raise KeyError(f"unknown sample {name!r}; known: {', '.join(SAMPLE_MODULES)}")
    return importlib.import_module(f"{__name__}.{name}").SPEC


def all_samples() -> list[SampleSpec]:
    """Return every bundled spec, in gallery order."""
    return [get_sample(n) for n in SAMPLE_MODULES]
