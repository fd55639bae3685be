"""The default training loss: mean of squares of the first floating tensor a model returns.

Models return anything: a tensor, a tuple, a dict, a dataclass, or a Hugging Face `ModelOutput`
(an OrderedDict and a tuple at once, whose `None` fields are dropped). The walk below takes them in
their own order (a mapping's keys, a dataclass's fields, a sequence's items), depth first, and
names the path it took (`output['logits']`, `output[0].hidden`) so the capture can say what it
picked. No torch import: anything with `is_floating_point()` and `requires_grad`-style methods is
treated as a tensor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 6


class NoFloatingOutput(ValueError):
    """The output holds no floating tensor; the one-line message says what to do."""


def _is_tensor(x: Any) -> bool:
    return callable(getattr(x, "is_floating_point", None)) and hasattr(x, "dtype") and hasattr(x, "shape")


def _children(x: Any, path: str):
    """Yield (child, path) in the container's own order; nothing for a leaf."""
    if isinstance(x, Mapping):  # dict, OrderedDict, ModelOutput
        for key, value in x.items():
            yield value, f"{path}[{key!r}]"
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            yield getattr(x, f.name, None), f"{path}.{f.name}"
    elif isinstance(x, (tuple, list)):
        for i, value in enumerate(x):
            yield value, f"{path}[{i}]"


def first_floating_tensor(out: Any, path: str = "output", depth: int = 0) -> tuple[Any, str] | None:
    """Return (tensor, path) of the first floating tensor in `out`, depth first, or None."""
    if _is_tensor(out):
        return (out, path) if out.is_floating_point() else None
    if depth >= MAX_DEPTH:
        return None
    for child, child_path in _children(out, path):
        found = first_floating_tensor(child, child_path, depth + 1)
        if found is not None:
            return found
    return None


def make_default_loss(announce=None):
    """Return loss(output) -> scalar; `announce(text)` is called once with what it picked."""
    said: list[str] = []

    def loss(out):
        found = first_floating_tensor(out)
        if found is None:
            raise NoFloatingOutput(
                f"the model returned {type(out).__name__} with no floating tensor in it: "
                "give the spec a loss(output) -> scalar"
            )
        tensor, path = found
        if not said:
            said.append(path)
            if announce is not None:
                announce(f"default loss: mean of squares of {path} ({type(out).__name__}, "
                         f"shape {tuple(tensor.shape)}); set `loss` in the spec to choose another")
        return tensor.float().pow(2).mean()

    return loss
