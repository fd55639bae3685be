"""Parse `str(ExportedProgram)`: the run's export/exported_program.txt, a TORCH_TRACE log's
`exported_program` entry (written under TORCH_DTRACE).

    ExportedProgram:
        class GraphModule(torch.nn.Module):
            def forward(self, p_linear_weight: "f32[32, 64]", x: "f32[8, 64]"):
                ...
                return (mul,)

    Graph signature:
        # inputs
        p_linear_weight: PARAMETER target='linear.weight'
        x: USER_INPUT

        # outputs
        mul: USER_OUTPUT

    Range constraints: {}

Torch before 2.6 writes the signature on one line as its repr:
`Graph signature: ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.USER_INPUT: 1>,
arg=TensorArgument(name='x'), target=None, persistent=None)], output_specs=[OutputSpec(...)])`.
The graph is read by the FX parser, with every line where it was in the file.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.fx_graph import parse_fx_graph
from compile_viz.artifacts.model import ExportedProgram, InputSpec, OutputSpec, ParseWarning
from compile_viz.artifacts.text import read_artifact

HEADER = "ExportedProgram:"
SIGNATURE = "Graph signature:"
RANGES = "Range constraints:"
GRAPH_INDENT = "    "
SECTION = re.compile(r"^\s*# (inputs|outputs)\s*$")
SPEC_LINE = re.compile(r"^\s*(\w+): ([A-Z_]+)(?: target='([^']*)')?(?: persistent=(True|False))?\s*$")
# the repr of older torch: one InputSpec(...) / OutputSpec(...) per input and output
SPEC_REPR = re.compile(r"(Input|Output)Spec\(kind=<\w+Kind\.(\w+): \d+>, arg=\w+\((?:name='(\w+)')?[^)]*\)"
                       r"(?:, target=(?:None|'([^']*)'))?(?:, persistent=(True|False|None))?")


def parse_exported_program(data: bytes | str, *, path: str) -> ExportedProgram:
    """Return the graph and signature of an exported program's text; never raises on content."""
    text, warnings = read_artifact(data, path)
    lines = text.splitlines()
    sig = next((i for i, ln in enumerate(lines) if ln.startswith(SIGNATURE)), None)
    ranges = next((i for i, ln in enumerate(lines) if ln.startswith(RANGES)), None)
    if lines and not lines[0].startswith(HEADER):
        warnings.append(ParseWarning(path, 1, f"does not start with {HEADER!r}: not a torch.export program?"))
    graph_end = sig if sig is not None else (ranges if ranges is not None else len(lines))
    # the graph keeps its line numbers: the other lines become blank
    graph_lines = [""] + [ln[len(GRAPH_INDENT):] if ln.startswith(GRAPH_INDENT) else ln for ln in lines[1:graph_end]]
    graph = parse_fx_graph("\n".join(graph_lines) + "\n", path=path) if graph_end > 1 else parse_fx_graph("", path=path)
    warnings.extend(graph.warnings)
    inputs: list[InputSpec] = []
    outputs: list[OutputSpec] = []
    if sig is None:
        warnings.append(ParseWarning(path, 0, "no 'Graph signature:': inputs and outputs unknown (cut short?)"))
    else:
        end = ranges if ranges is not None and ranges > sig else len(lines)
        _signature(lines, sig, end, path, inputs, outputs, warnings)
    range_text = lines[ranges][len(RANGES):].strip() if ranges is not None else ""
    return ExportedProgram(path, graph, tuple(inputs), tuple(outputs), range_text, tuple(warnings))


def _signature(lines: list[str], sig: int, end: int, path: str, inputs: list, outputs: list, warnings: list) -> None:
    first = lines[sig][len(SIGNATURE):].strip()
    if first:  # the one-line repr of older torch
        for m in SPEC_REPR.finditer(first):
            side, kind, name, target, persistent = m.groups()
            if side == "Input":
                inputs.append(InputSpec(name or "", kind, target or "", _bool(persistent)))
            else:
                outputs.append(OutputSpec(name or "", kind, target or ""))
        if not inputs and not outputs:
            warnings.append(ParseWarning(path, sig + 1, f"graph signature not understood: {first[:120]}"))
        return
    section = ""
    for i in range(sig + 1, end):
        line = lines[i]
        if not line.strip():
            continue
        if m := SECTION.match(line):
            section = m.group(1)
            continue
        m = SPEC_LINE.match(line)
        if m and section == "inputs":
            inputs.append(InputSpec(m.group(1), m.group(2), m.group(3) or "", _bool(m.group(4))))
        elif m and section == "outputs":
            outputs.append(OutputSpec(m.group(1), m.group(2), m.group(3) or ""))
        else:
            warnings.append(ParseWarning(path, i + 1, f"signature line not understood: {line.strip()[:120]}"))


def _bool(text: str | None) -> bool | None:
    return {"True": True, "False": False}.get(text or "")
