"""Which module each graph input belongs to, from the names Dynamo gives its inputs.

Dynamo's output graph (the `dynamo_output_graph` entry of a TORCH_TRACE log) names every input
after where it came from: `L_self_modules_blocks_modules_3_modules_qkv_parameters_weight_` is
the parameter `blocks.3.qkv.weight`, `L_idx_` a user input. AOTAutograd keeps that order for
its `primals_N` (training) and `argN_1` (inference) placeholders, so a placeholder's parameter,
and hence its module, can be read off by position; the linking layer checks dtype and shape
before it trusts the match (linking/hierarchy.py). The debug folder has no such names (its
`torchdynamo/debug.log` is empty by default); only runs with a trace have module paths.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.frozen import frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compile_viz.artifacts.trace.index import LogBytes

ENTRY = re.compile(rb'\{"dynamo_output_graph"')
SIGNATURE = re.compile(r'(\w+): "([^"]*)"')  # NAME: "f32[768, 3072][3072, 1]cuda:0"
TYPE = re.compile(r"^(?P<dtype>[a-zA-Z]+\d*)(?:\[(?P<shape>[^\]]*)\])?")
PARAM = re.compile(r"^L_self_(?P<path>.*?)_(?:parameters|buffers)_(?P<leaf>\w+?)_?$")


@frozen(slots=True)
class DynamoInput:
    """One input of a Dynamo output graph, in order."""

    name: str  # as Dynamo wrote it: "L_self_modules_blocks_modules_3_modules_qkv_parameters_weight_"
    module: str | None  # "blocks.3.qkv"; None for user inputs and what is not a module's
    dtype: str  # "f32", "i64", "Sym"
    shape: tuple[str, ...] | None


def module_of(name: str) -> tuple[str | None, str]:
    """Return (module path, leaf) of a Dynamo input name: ("blocks.3.qkv", "weight"), or
    (None, name) for an input that is no module's parameter or buffer. The root module's own
    parameters have the module path ""."""
    m = PARAM.match(name)
    if m is None:
        return None, name
    path = m["path"]
    if path.startswith("modules_"):
        parts = path[len("modules_"):].split("_modules_")
    elif path == "":
        parts = []
    else:
        return None, name
    return ".".join(parts), m["leaf"]


def parse_signature(text: str) -> tuple[DynamoInput, ...]:
    """The inputs of a `def forward(self, A: "T", B: "T", ...)` signature (one line or many)."""
    out = []
    for name, annotation in SIGNATURE.findall(text):
        m = TYPE.match(annotation)
        dtype = m["dtype"] if m else ""
        shape = tuple(s.strip() for s in m["shape"].split(",") if s.strip()) if m and m["shape"] is not None else None
        module, _ = module_of(name)
        out.append(DynamoInput(name, module, dtype, shape))
    return tuple(out)


def scan_dynamo_inputs(data: LogBytes) -> list[tuple[DynamoInput, ...]]:
    """The input list of every Dynamo output graph in a TORCH_TRACE log, in log order, found
    without reading the rest of the log (payload lines start with a tab)."""
    out = []
    for m in ENTRY.finditer(data):
        start = data.find(b"\n", m.end()) + 1
        if start == 0:
            break
        at = data.find(b"def forward(", start, start + 4096)
        if at < 0:
            out.append(())
            continue
        end = data.find(b"):\n", at)  # "Sym(s0)" holds a `)`, but never one before `:` and a newline
        if end < 0:
            end = data.find(b"):\r\n", at)
        text = data[at: end if end >= 0 else len(data)].decode("utf-8", errors="replace")
        out.append(parse_signature(text))
    return out


def read_dynamo_inputs(path: str) -> list[tuple[DynamoInput, ...]]:
    """The Dynamo input lists of the TORCH_TRACE logs at or under `path` (a log, a run folder with
    trace/, or a zip of one; its debug/ tree is not read); [] when there is none. Only a run with
    one log (one rank) is read."""
    import os

    from compile_viz.artifacts.trace.discover import trace_logs

    if not os.path.exists(path):
        return []
    logs = trace_logs(path, skip_dirs=("debug",))
    return scan_dynamo_inputs(logs[0][1]) if len(logs) == 1 else []


def read_dynamo_inputs_by_rank(path: str) -> dict[int | None, list[tuple[DynamoInput, ...]]]:
    """The Dynamo input lists of each rank's TORCH_TRACE log at or under `path` ({None: ...} for a
    run of one log without a rank); {} when there is none."""
    import os

    from compile_viz.artifacts.trace.discover import trace_logs

    if not os.path.exists(path):
        return {}
    return dynamo_inputs_by_rank(trace_logs(path, skip_dirs=("debug",)))


def dynamo_inputs_by_rank(logs) -> dict[int | None, list[tuple[DynamoInput, ...]]]:
    """The same from logs already read (trace.discover.trace_logs' (name, bytes) pairs)."""
    from compile_viz.artifacts.trace.read import rank_of

    if len(logs) == 1:
        return {None: scan_dynamo_inputs(logs[0][1])}
    out = {}
    for name, data in logs:
        if (rank := rank_of(name)) is not None:
            out[rank] = scan_dynamo_inputs(data)
    return out
