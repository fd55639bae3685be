"""The entries of a torch.export or AOTInductor TORCH_TRACE log that the reader lists but does not
keep, added to its graphs: the `exported_program` (under TORCH_DTRACE), the post-grad graph torch
2.7-2.9 logged as `after_post_grad_graph`, and AOTInductor's `graph_dump` entries
(`inductor_aot_wrapper_code`: the C++ wrapper, `inductor_aot_kernel_code`: its C++ kernels, on a GPU a
note that the Triton kernels are in the wrapper). Their entries carry no compile id: they gather in
the reader's record without one (build.NO_COMPILE_ID).

`with_aot_payloads(log, data)` reads those entries' payloads from the log's text by the lines the
reader recorded, and returns the log with each graph given them: a payload goes to the last graph
that starts before it, an exported program to the graph compiled after it (or to a graph of its
own, kind "export", when none was). A log without such entries is returned as it is, unread.
"""

from __future__ import annotations

import json
from dataclasses import replace

from compile_viz.artifacts.text import GLOG_PREFIX, decode
from compile_viz.artifacts.trace.model import CompileRecord, Payload, TraceGraph, TraceLog

EXPORTED_PROGRAM = "exported_program"
WRAPPER = "inductor_aot_wrapper_code"
KERNEL = "inductor_aot_kernel_code"
POST_GRAD = "after_post_grad_graph"
CLAIMED = frozenset({"graph_dump", EXPORTED_PROGRAM, POST_GRAD})
EXPORT_KIND = "export"


def with_aot_payloads(log: TraceLog, data: bytes | str) -> TraceLog:
    """The log with its export and AOTInductor payloads given to its graphs (see the module's doc)."""
    if not any(name in CLAIMED for c in log.compiles for name, _ in c.artifacts):
        return log
    text = decode(data)[0]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    return replace(log, compiles=tuple(_record(c, lines) for c in log.compiles))


def _record(record: CompileRecord, lines: list[str]) -> CompileRecord:
    payloads = [p for name, line in record.artifacts if name in CLAIMED and (p := _payload(lines, name, line))]
    if not payloads:
        return record
    graphs = list(record.graphs)
    for p in payloads:
        if p.name == EXPORTED_PROGRAM:
            later = [i for i, g in enumerate(graphs) if _start(g) > p.line and g.exported_program is None]
            if later:
                graphs[later[0]] = replace(graphs[later[0]], exported_program=p)
            else:
                graphs.append(TraceGraph(record.id, EXPORT_KIND, "", None, None, None, None, None, exported_program=p))
            continue
        field = {WRAPPER: "output_code", POST_GRAD: "post_grad_graph", KERNEL: "aot_kernel_code"}.get(p.name)
        if field is None:
            continue  # another graph_dump (the header of a dynamically linked package)
        i = _owner(graphs, field, p.line)
        if i is None and not any(g.kind != EXPORT_KIND for g in graphs):
            graphs.append(TraceGraph(record.id, "inference", "", None, None, None, None, None))
            i = len(graphs) - 1
        if i is not None:
            graphs[i] = replace(graphs[i], **{field: p})
    graphs.sort(key=_start)
    return replace(record, graphs=tuple(graphs))


def _owner(graphs: list[TraceGraph], field: str, line: int) -> int | None:
    """The graph a payload on `line` belongs to: a post-grad graph to the first graph without one
    whose output code comes after it (Inductor logs a graph's post-grad graph, then its code); the
    wrapper and kernel code to the last graph without them that starts before it."""
    free = [i for i, g in enumerate(graphs) if g.kind != EXPORT_KIND and getattr(g, field) is None]
    if field == "post_grad_graph":
        return next((i for i in free if graphs[i].output_code is None or graphs[i].output_code.line > line), None)
    before = [i for i in free if _start(graphs[i]) < line]
    return before[-1] if before else None


def _start(g: TraceGraph) -> int:
    """The first line of a graph's payloads in the log."""
    found = [p.line for p in (g.aot_graph, g.post_grad_graph, g.output_code, g.provenance, g.exported_program)
             if p is not None]
    return min(found) if found else 0


def _payload(lines: list[str], name: str, lineno: int) -> Payload | None:
    """The payload of the entry on line `lineno` (1-based), named as Inductor names it (a graph_dump
    by its `name`), or None when it cannot be read."""
    if not 0 < lineno <= len(lines):
        return None
    if name == "graph_dump":
        line = lines[lineno - 1]
        m = GLOG_PREFIX.match(line)
        try:
            meta = json.loads(line[m.end():])["graph_dump"] if m else None
        except (ValueError, KeyError, TypeError):
            return None
        name = str(meta.get("name", "")) if isinstance(meta, dict) else ""
    body: list[str] = []
    i = lineno
    while i < len(lines):
        line = lines[i]
        if line.startswith("\t"):
            body.append(line[1:])
        elif line == "" and i + 1 < len(lines) and lines[i + 1].startswith("\t"):
            pass  # a blank line between two payload lines: a stutter of the log, as the reader skips it
        else:
            break
        i += 1
    return Payload(name, "\n".join(body), lineno) if body else None
