"""An exported program's graph signature as escaped HTML: what torch.export lifted out of the module
(parameters, buffers, constants) beside the user's own inputs, and what the graph returns."""

from __future__ import annotations

from collections import Counter
from html import escape

from compile_viz.artifacts.model import ExportedProgram

# torch.export's input kinds, in the order a reader looks for them
INPUT_KINDS = ("USER_INPUT", "PARAMETER", "BUFFER", "CONSTANT_TENSOR", "CUSTOM_OBJ", "TOKEN")
KIND_WORDS = {"USER_INPUT": "user inputs", "PARAMETER": "parameters", "BUFFER": "buffers",
              "CONSTANT_TENSOR": "constant tensors", "CUSTOM_OBJ": "custom objects", "TOKEN": "tokens"}
MAX_ROWS = 200


def signature_line(ep: ExportedProgram) -> str:
    """One line: `1 user input, 29 parameters, 2 buffers -> 1 user output` (plain text)."""
    kinds = Counter(i.kind for i in ep.inputs)
    order = [k for k in INPUT_KINDS if k in kinds] + sorted(k for k in kinds if k not in INPUT_KINDS)
    ins = ", ".join(f"{kinds[k]} {_word(k, kinds[k])}" for k in order) or "no inputs"
    outs = Counter(o.kind for o in ep.outputs)
    return f"{ins} -> " + (", ".join(f"{n} {k.lower().replace('_', ' ')}{'s' * (n != 1)}" for k, n in outs.items())
                           or "no outputs")


def _word(kind: str, n: int) -> str:
    word = KIND_WORDS.get(kind, kind.lower().replace("_", " "))
    return word[:-1] if n == 1 and word.endswith("s") else word


def signature_html(ep: ExportedProgram) -> str:
    """A table of the signature's inputs (placeholder, kind, the module attribute it is) and outputs."""
    rows = [(i.name, i.kind, i.target + (" (not persistent)" if i.persistent is False else "")) for i in ep.inputs]
    rows += [(o.name, o.kind, o.target) for o in ep.outputs]
    body = "".join(f"<tr><td><code>{escape(n)}</code></td><td>{escape(k)}</td><td><code>{escape(t)}</code></td></tr>"
                   for n, k, t in rows[:MAX_ROWS])
    more = f"<p>… and {len(rows) - MAX_ROWS} more</p>" if len(rows) > MAX_ROWS else ""
    ranges = (f"<p>Range constraints: <code>{escape(ep.range_constraints)}</code></p>"
              if ep.range_constraints not in ("", "{}") else "")
    return (f"<table><tr><th>graph input / output</th><th>kind</th><th>module attribute</th></tr>{body}</table>"
            f"{more}{ranges}")
