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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compile_viz.artifacts.trace.index import LogBytes

EXPORTED_PROGRAM = "exported_program"
WRAPPER = "inductor_aot_wrapper_code"
KERNEL = "inductor_aot_kernel_code"
POST_GRAD = "after_post_grad_graph"
CLAIMED = frozenset({"graph_dump", EXPORTED_PROGRAM, POST_GRAD})
# what finds each entry's line in the log's bytes
NEEDLES = {"graph_dump": b'{"graph_dump": ', EXPORTED_PROGRAM: b'{"exported_program": ',
           POST_GRAD: b'"name": "after_post_grad_graph"'}
EXPORT_KIND = "export"


def with_aot_payloads(log: TraceLog, data: LogBytes | str) -> TraceLog:
    """The log with its export and AOTInductor payloads given to its graphs (see the module's doc).
    `data` is the log as the reader read it: bytes, text, or a big log mapped (index.MappedLog)."""
    wanted: dict[str, set[int]] = {}
    for c in log.compiles:
        for name, line in c.artifacts:
            if name in CLAIMED:
                wanted.setdefault(name, set()).add(line)
    if not wanted:
        return log
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    starts = _entry_starts(raw, wanted)
    return replace(log, compiles=tuple(_record(c, raw, starts) for c in log.compiles))


def _entry_starts(raw, wanted: dict[str, set[int]]) -> dict[int, int]:
    """{line number: offset of that line} for the wanted entries ({name: lines}): each entry is found
    by a search for its name, and its line counted from the last one found, so a big log is read
    once, by bytes methods, and never split into lines."""
    out: dict[int, int] = {}
    for name, lines in wanted.items():
        needle, left = NEEDLES[name], set(lines)
        pos, line, counted = 0, 1, 0  # `line` is the number of the line starting at `counted`
        while left:
            hit = raw.find(needle, pos)
            if hit < 0:
                break
            start = raw.rfind(b"\n", 0, hit) + 1
            line += raw.count(b"\n", counted, start)
            counted = start
            if line in left and raw[start:start + 1] != b"\t":
                out[line] = start
                left.discard(line)
            pos = hit + len(needle)
    return out


def _record(record: CompileRecord, raw, starts: dict[int, int]) -> CompileRecord:
    payloads = [p for name, line in record.artifacts
                if name in CLAIMED and line in starts and (p := _payload(raw, starts[line], name, line))]
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


def _payload(raw, start: int, name: str, lineno: int) -> Payload | None:
    """The payload of the entry whose line starts at `start` (line `lineno`), named as Inductor names
    it (a graph_dump by its `name`), or None when it cannot be read. As the reader does, a payload is
    the tab-indented lines after the entry, a blank line between two of them skipped."""
    eol = raw.find(b"\n", start)
    eol = len(raw) if eol < 0 else eol
    if name == "graph_dump":
        line = bytes(raw[start:eol]).decode("utf-8", "replace")
        m = GLOG_PREFIX.match(line)
        try:
            meta = json.loads(line[m.end():])["graph_dump"] if m else None
        except (ValueError, KeyError, TypeError):
            return None
        name = str(meta.get("name", "")) if isinstance(meta, dict) else ""
    body: list[bytes] = []
    p, size = eol + 1, len(raw)
    while p < size:
        if raw[p:p + 1] == b"\t":
            e = raw.find(b"\n", p)
            e = size if e < 0 else e
            body.append(bytes(raw[p + 1:e]).rstrip(b"\r"))
            p = e + 1
        elif raw[p:p + 2] == b"\n\t":  # a blank line between two payload lines (a stutter of the log)
            p += 1
        elif raw[p:p + 3] == b"\r\n\t":
            p += 2
        else:
            break
    return Payload(name, decode(b"\n".join(body))[0], lineno) if body else None
