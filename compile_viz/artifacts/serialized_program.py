"""Parse `models/<name>.json` of a `.pt2` archive: the exported program torch.export.save (and
torch.export's pt2 archive) writes, in torch's serialization schema (torch/_export/serde/schema.py).
Read as JSON, never deserialized by torch; the weights beside it are never read.

    {"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "p_weight"}}, ...],
                                "nodes": [{"name": "linear", "target": "torch.ops.aten.linear.default",
                                           "inputs": [{"name": "input", "arg": {"as_tensor": {"name": "input"}}}],
                                           "outputs": [{"as_tensor": {"name": "linear"}}],
                                           "metadata": {"stack_trace": "File \\"m.py\\", line 134, in forward\\n ..."}}],
                                "outputs": [...], "tensor_values": {"linear": {"dtype": 7, "sizes": [...]}}},
                      "signature": {"input_specs": [{"parameter": {"arg": {"name": "p_weight"},
                                                                   "parameter_name": "weight"}}, ...],
                                    "output_specs": [{"user_output": {...}}]}},
     "range_constraints": {...}, "schema_version": {"major": 8, "minor": 20}}

It gives the same ExportedProgram as the printed program does (exported_program.py): an FX graph of
placeholders, call_function nodes and an output, each node with its dtype, sizes and source line,
and the graph signature in torch's words (PARAMETER, BUFFER, USER_INPUT, ...).
"""

from __future__ import annotations

import json
import re

from compile_viz.artifacts.model import (
    ExportedProgram,
    FxGraph,
    FxNode,
    InputSpec,
    OutputSpec,
    ParseWarning,
    SourceLocation,
)
from compile_viz.artifacts.text import read_artifact

# torch/_export/serde/schema.py ScalarType -> the short names FX annotations use
DTYPES = {1: "u8", 2: "i8", 3: "i16", 4: "i32", 5: "i64", 6: "f16", 7: "f32", 8: "f64", 9: "c32", 10: "c64",
          11: "c128", 12: "b8", 13: "bf16", 14: "u16", 15: "u32", 16: "u64", 26: "f8e4m3fn", 29: "f8e5m2"}
# schema InputSpec / OutputSpec union members -> torch.export's InputKind / OutputKind
INPUT_KINDS = {"user_input": "USER_INPUT", "parameter": "PARAMETER", "buffer": "BUFFER",
               "tensor_constant": "CONSTANT_TENSOR", "custom_obj": "CUSTOM_OBJ", "token": "TOKEN",
               "constant_input": "USER_INPUT"}
TARGET_KEYS = ("parameter_name", "buffer_name", "tensor_constant_name", "custom_obj_name")
OUTPUT_KINDS = {"user_output": "USER_OUTPUT", "loss_output": "LOSS_OUTPUT", "buffer_mutation": "BUFFER_MUTATION",
                "gradient_to_parameter": "GRADIENT_TO_PARAMETER", "gradient_to_user_input": "GRADIENT_TO_USER_INPUT",
                "user_input_mutation": "USER_INPUT_MUTATION", "token": "TOKEN",
                "parameter_mutation": "PARAMETER_MUTATION"}
FRAME = re.compile(r'File "(?P<file>.+?)", line (?P<line>\d+), in (?P<function>\S+)(?:\n\s+(?P<code>.*))?')


def parse_serialized_program(data: bytes | str, *, path: str) -> ExportedProgram:
    """Return the graph and signature of a serialized exported program; never raises on content."""
    text, warnings = read_artifact(data, path, text_checks=False)
    try:
        doc = json.loads(text) if text.strip() else None
    except ValueError as exc:
        warnings.append(ParseWarning(path, getattr(exc, "lineno", 0), f"not valid JSON ({exc.msg}); nothing read"))
        doc = None
    if not text.strip():
        warnings.append(ParseWarning(path, 0, "file is empty"))
    gm = doc.get("graph_module") if isinstance(doc, dict) else None
    if not isinstance(gm, dict):
        if doc is not None:
            warnings.append(ParseWarning(path, 0, "no graph_module: not a serialized exported program"))
        empty = FxGraph(path, "", (), (), (), (), (), ())
        return ExportedProgram(path, empty, (), (), "", tuple(warnings))
    graph = _graph(gm.get("graph") if isinstance(gm.get("graph"), dict) else {}, path, warnings)
    inputs, outputs = _signature(gm.get("signature") if isinstance(gm.get("signature"), dict) else {}, path, warnings)
    ranges = doc.get("range_constraints")
    ranges_text = json.dumps(ranges, sort_keys=True) if ranges else "{}"
    return ExportedProgram(path, graph, inputs, outputs, ranges_text, tuple(warnings))


def _graph(g: dict, path: str, warnings: list) -> FxGraph:
    values = g.get("tensor_values") if isinstance(g.get("tensor_values"), dict) else {}
    nodes: list[FxNode] = []
    inputs = [n for a in g.get("inputs") or () if (n := _names(a))]
    for i, names in enumerate(inputs):
        for name in names:
            nodes.append(FxNode(name, "placeholder", "", *_tensor(values.get(name)), (), (), None, i + 1))
    known = {n.name for n in nodes}
    for i, node in enumerate(g.get("nodes") or (), start=len(nodes) + 1):
        if not isinstance(node, dict):
            warnings.append(ParseWarning(path, 0, f"node {i} is not an object; skipped"))
            continue
        outs = [n for o in node.get("outputs") or () for n in _names(o)]
        name = str(node.get("name") or (outs[0] if outs else f"node_{i}"))
        args = [n for a in node.get("inputs") or () if isinstance(a, dict) for n in _names(a.get("arg")) if n in known]
        target = str(node.get("target", "")).removeprefix("torch.ops.")
        meta = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
        nodes.append(FxNode(name, "call_function", target, *_tensor(values.get(outs[0] if outs else name)),
                            tuple(dict.fromkeys(args)), (), _source(meta.get("stack_trace")), i))
        known.update(outs or (name,))
        known.add(name)
    returned = [n for o in g.get("outputs") or () for n in _names(o)]
    nodes.append(FxNode("output", "output", "", None, None, None, tuple(n for n in returned if n in known), (),
                        None, len(nodes) + 1))
    placeholders = tuple(n.name for n in nodes if n.op == "placeholder")
    return FxGraph(path, "GraphModule", tuple(nodes), placeholders, tuple(returned), (), (), ())


def _names(arg) -> list[str]:
    """The node names an argument refers to: `as_tensor`, `as_tensors`, `as_sym_int`, optional ones..."""
    out: list[str] = []
    if isinstance(arg, dict):
        for key, value in arg.items():
            if key == "name" and isinstance(value, str):
                out.append(value)
            elif key.startswith("as_") and key not in ("as_int", "as_float", "as_bool", "as_string", "as_ints",
                                                       "as_floats", "as_bools", "as_strings", "as_none"):
                out.extend(_names(value))
    elif isinstance(arg, list):
        for item in arg:
            out.extend(_names(item))
    return out


def _tensor(meta) -> tuple[str | None, tuple[str, ...] | None, tuple[str, ...] | None]:
    if not isinstance(meta, dict):
        return None, None, None
    dims = tuple(str(d.get("as_int", d.get("as_expr", {}).get("expr_str", "?"))) if isinstance(d, dict) else "?"
                 for d in meta.get("sizes") or ())
    strides = tuple(str(d.get("as_int", "?")) if isinstance(d, dict) else "?" for d in meta.get("strides") or ())
    return DTYPES.get(meta.get("dtype"), str(meta.get("dtype"))), dims, strides or None


def _source(stack) -> SourceLocation | None:
    """The innermost frame of a node's stack trace, as the printed program's `# File:` comment gives it."""
    if not isinstance(stack, str):
        return None
    frames = list(FRAME.finditer(stack))
    if not frames:
        return None
    f = frames[-1]
    return SourceLocation(f["file"], int(f["line"]), f["function"], (f["code"] or "").strip())


def _signature(sig: dict, path: str, warnings: list) -> tuple[tuple[InputSpec, ...], tuple[OutputSpec, ...]]:
    inputs, outputs = [], []
    for spec in sig.get("input_specs") or ():
        kind, body = next(iter(spec.items())) if isinstance(spec, dict) and spec else ("", {})
        if kind not in INPUT_KINDS or not isinstance(body, dict):
            warnings.append(ParseWarning(path, 0, f"input spec {kind or spec!r} not understood; skipped"))
            continue
        target = next((str(body[k]) for k in TARGET_KEYS if k in body), "")
        names = _names(body.get("arg"))
        inputs.append(InputSpec(names[0] if names else "", INPUT_KINDS[kind], target,
                                body.get("persistent") if isinstance(body.get("persistent"), bool) else None))
    for spec in sig.get("output_specs") or ():
        kind, body = next(iter(spec.items())) if isinstance(spec, dict) and spec else ("", {})
        if kind not in OUTPUT_KINDS or not isinstance(body, dict):
            warnings.append(ParseWarning(path, 0, f"output spec {kind or spec!r} not understood; skipped"))
            continue
        target = next((str(v) for k, v in body.items() if k.endswith("_name")), "")
        names = _names(body.get("arg"))
        outputs.append(OutputSpec(names[0] if names else "", OUTPUT_KINDS[kind], target))
    return tuple(inputs), tuple(outputs)
