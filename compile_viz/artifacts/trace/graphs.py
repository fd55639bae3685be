"""Turn a TraceLog's graph payloads into the GraphParse objects a debug folder gives.

The payloads are the same texts Inductor writes into a graph folder (`aot_forward_graph` is
`fx_graph_readable.py`, `inductor_post_grad_graph` is `fx_graph_transformed.py`,
`inductor_output_code` is `output_code.py`), so the same parsers read them. Two differences are
smoothed here: the trace writes AOT graphs with one parameter per line (`def forward(` ... `):`),
which we fold into one line, keeping every other line where it was; and the backward graph's
node mapping holds only `{"version": ...}`, which we treat as absent, as the debug folder does.
The scheduler IR is never in a trace: TraceParse.not_in_trace says so.
"""

from __future__ import annotations

from dataclasses import replace

from compile_viz.artifacts.discover import parse_dynamo_log
from compile_viz.artifacts.fx_graph import parse_fx_graph
from compile_viz.artifacts.gc_pause import without_gc
from compile_viz.artifacts.jobs import GraphJob, run_here
from compile_viz.artifacts.model import GraphBreak, GraphFolder, GraphParse, ParseWarning
from compile_viz.artifacts.output_code import parse_output_code
from compile_viz.artifacts.provenance import parse_provenance
from compile_viz.artifacts.trace import aot
from compile_viz.artifacts.trace.kernel_stacks import parse_kernel_stacks, stacks_from_state, stacks_state
from compile_viz.artifacts.trace.model import Payload, TraceGraph, TraceLog, TraceParse

# TraceGraph field -> (the file a debug folder holds it in, its parser)
FILES = {
    "aot_graph": ("fx_graph_readable.py", parse_fx_graph),
    "post_grad_graph": ("fx_graph_transformed.py", parse_fx_graph),
    "output_code": ("output_code.py", parse_output_code),
    "provenance": ("inductor_provenance_tracking_node_mappings.json", parse_provenance),
}
MAPPING_KEYS = ('"preToPost"', '"cppCodeToPost"', '"postToPre"')


def trace_parse(root: str, logs: list[TraceLog]) -> TraceParse:
    """The DebugParse of one or several logs (one per rank): their graphs, graph breaks, warnings."""
    run, jobs = trace_jobs(root, logs)
    return run_here(run, jobs)


def trace_jobs(root: str, logs: list[TraceLog]) -> tuple[TraceParse, tuple[GraphJob, ...]]:
    """`trace_parse(root, logs)` in two parts: the TraceParse with no graphs yet, and one job per
    graph, in order, whose GraphParses go in its `graphs`."""
    jobs: list[GraphJob] = []
    breaks: list[GraphBreak] = []
    seen: set[str] = set()
    for log in logs:
        prefix = f"rank {log.rank} " if len(logs) > 1 and log.rank is not None else ""
        for record in log.compiles:
            for g in record.graphs:
                gid = _unique(f"{prefix}[{g.compile_id}] {g.kind}", seen)
                jobs.append(GraphJob(graph_parse, (log.path, g, gid), _payload_size(g), check=payloads_intact,
                                     prepare=kernel_stacks_of))
            for text in record.graph_break_reasons:
                breaks.extend(b for b in parse_dynamo_log(text) if b not in breaks)
    warnings = tuple(w for log in logs for w in log.warnings)
    return TraceParse(root, (), tuple(breaks), warnings, logs=tuple(logs)), tuple(jobs)


def parsed_now_or_later(run, jobs: tuple[GraphJob, ...], lazy_above: int | None):
    """`run` (a DebugParse with no graphs yet) with its graphs: parsed now, or, for a trace whose
    graph payloads weigh more than `lazy_above` bytes, parsed when `graph(id)` asks (lazy_trace_parse)."""
    if lazy_above is not None and isinstance(run, TraceParse) and sum(job.size for job in jobs) > lazy_above:
        return lazy_trace_parse(run, jobs)
    return run_here(run, jobs)


def lazy_trace_parse(run: TraceParse, jobs: tuple[GraphJob, ...]) -> TraceParse:
    """`run` with its graphs left unparsed: each graph's folder (id, name, kind, where) in `graphs`,
    its payloads parsed when `run.graph(id)` first asks for it. For a big trace opened to look at a
    few graphs; what needs every graph parsed (parse --json) runs the jobs."""
    stubs = []
    for job in jobs:
        log_path, g, gid = job.args
        files = [file for field, (file, _) in FILES.items() if getattr(g, field) is not None]
        stubs.append(GraphParse(folder=_folder(log_path, g, gid, files), aot_graph=None, post_grad_graph=None,
                                pre_fusion=None, post_fusion=None, output_code=None, provenance=None, warnings=()))
    return replace(run, graphs=tuple(stubs), pending={job.args[2]: job for job in jobs})


def _check_payload(log_path: str, g: TraceGraph, payload: Payload, warnings: list[ParseWarning],
                   checks: bool = True) -> None:
    """Warnings when a payload read now (left in a big log, or held as logged) does not match its
    MD5 (unless `checks` is False), or held bytes that are not UTF-8."""
    if checks and not payload.intact:
        warnings.append(ParseWarning(log_path, payload.line, f"{payload.name} ({g.compile_id}): payload does "
                                     "not match its MD5 (cut or altered)"))
    if getattr(payload.span, "replaced", False):
        warnings.append(ParseWarning(log_path, payload.line, f"{payload.name} ({g.compile_id}): payload is not "
                                     "valid UTF-8; bad bytes were replaced"))


def kernel_stacks_of(log_path: str, g: TraceGraph, gid: str):
    """The graph's kernel stacks as graph_parse reads them, in `stacks_state`'s tuples (None when
    the log has none, or its bytes are not UTF-8: graph_parse, which warns of it, reads them
    itself). What `parse --json`'s parent makes first for a forked child (GraphJob.prepare), while
    the child parses the rest: a 48-layer backward's 3.6 MB of stacks, ~25 ms off the child's
    path. Their MD5 is checked with the rest (payloads_intact)."""
    if g.kernel_stack_traces is None:
        return None
    stacks = _parse_stacks(log_path, g.kernel_stack_traces, False)
    return None if getattr(g.kernel_stack_traces.span, "replaced", False) else stacks_state(stacks)


def _parse_stacks(log_path: str, payload: Payload, check: bool):
    """A kernel stacks payload parsed; its warnings at its entry's line of the log."""
    return parse_kernel_stacks(payload.read(check), path=f"{log_path}:{payload.line}")


def payloads_intact(log_path: str, g: TraceGraph, gid: str) -> bool:
    """Whether every payload of the graph matches the MD5 its entry gave (GraphJob.intact): what
    graph_parse(..., checks=False) left unchecked (a caller that finds one that does not runs
    graph_parse again with its checks, to warn of it)."""
    return all(p.intact for p in (g.aot_graph, g.post_grad_graph, g.output_code, g.provenance,
                                  g.kernel_stack_traces, g.exported_program, g.aot_kernel_code) if p is not None)


def _folder(log_path: str, g: TraceGraph, gid: str, files: list[str]) -> GraphFolder:
    """Where a trace graph is: named by its AOT id, at the first line of its payloads."""
    name = g.aot_id or f"{g.compile_id}_{g.kind}"
    first = min((p.line for p in (g.post_grad_graph, g.output_code, g.aot_graph) if p is not None), default=0)
    return GraphFolder(gid, name, g.kind, f"{log_path}:{first}", tuple(files))


def _payload_size(g: TraceGraph) -> int:
    return sum(p.size for p in (g.aot_graph, g.post_grad_graph, g.output_code, g.provenance,
                                     g.kernel_stack_traces, g.exported_program, g.aot_kernel_code) if p is not None)


def _unique(gid: str, seen: set[str]) -> str:
    n, out = 2, gid
    while out in seen:
        out, n = f"{gid} {n}", n + 1
    seen.add(out)
    return out


@without_gc
def graph_parse(log_path: str, g: TraceGraph, gid: str, *, checks: bool = True, given=None) -> GraphParse:
    """One trace graph as a GraphParse; warnings point at lines of the log. `checks=False`: the
    payloads' MD5s not checked (nor warned about), left to `payloads_intact` (GraphJob.unchecked).
    `given`: a function returning the graph's kernel stacks as `kernel_stacks_of` made them in
    another process, or None (then parsed here)."""
    fields: dict[str, object] = {}
    files: list[str] = []
    warnings: list[ParseWarning] = []
    for field, (file, parser) in FILES.items():
        payload: Payload | None = getattr(g, field)
        if field == "output_code" and payload is not None and payload.name == aot.WRAPPER:
            continue  # AOTInductor's C++ wrapper: _aot_fields reads it
        if payload is None or (field == "provenance" and not any(k in payload.text for k in MAPPING_KEYS)):
            continue
        text = payload.read(checks)
        text = unfold_forward(text) if field == "aot_graph" else text
        if not text.endswith("\n"):
            text += "\n"  # the log drops the file's last newline
        result = parser(text, path=file)
        _check_payload(log_path, g, payload, warnings, checks)
        if field == "provenance":
            result = _without_version(result)
        fields[field] = result
        files.append(file)
        warnings.extend(ParseWarning(log_path, payload.line + w.line, f"{payload.name} ({g.compile_id}): {w.text}")
                        for w in result.warnings)
    _aot_fields(log_path, g, fields, files, warnings)
    stacks = None
    if g.kernel_stack_traces is not None:
        state = given() if given is not None else None
        stacks = (stacks_from_state(state) if state is not None
                  else _parse_stacks(log_path, g.kernel_stack_traces, checks))
        _check_payload(log_path, g, g.kernel_stack_traces, warnings, checks)
        warnings.extend(stacks.warnings)
    return GraphParse(folder=_folder(log_path, g, gid, files), aot_graph=fields.get("aot_graph"), post_grad_graph=fields.get("post_grad_graph"),
                      pre_fusion=None, post_fusion=None, output_code=fields.get("output_code"),
                      provenance=fields.get("provenance"), warnings=tuple(warnings), kernel_stacks=stacks,
                      exported_program=fields.get("exported_program"))


def _aot_fields(log_path: str, g: TraceGraph, fields: dict, files: list, warnings: list) -> None:
    """Ahead of time (trace/aot.py): the exported program (its graph is the AOT graph when the log
    has no other) and AOTInductor's C++ wrapper with its kernels, as the debug tree's
    output_code.cpp holds them: the wrapper, then the kernel file."""
    if g.exported_program is not None:
        from compile_viz.artifacts.exported_program import parse_exported_program

        p = g.exported_program
        ep = parse_exported_program(p.text + "\n", path="exported_program.txt")
        fields["exported_program"] = ep
        fields.setdefault("aot_graph", ep.graph)
        files.append("exported_program.txt")
        warnings.extend(ParseWarning(log_path, p.line + w.line, f"{p.name} ({g.compile_id}): {w.text}")
                        for w in ep.warnings)
    code = g.output_code
    if code is not None and code.name == aot.WRAPPER:
        from compile_viz.artifacts.aoti_wrapper import parse_aoti_wrapper

        kernels = g.aot_kernel_code.text if g.aot_kernel_code is not None else ""
        wrapper_lines = code.text.count("\n") + 1
        result = parse_aoti_wrapper(code.text + "\n" + (kernels + "\n" if kernels else ""), path="output_code.cpp")
        fields["output_code"] = result
        files.append("output_code.cpp")
        for w in result.warnings:  # a line past the wrapper's is a line of the kernel file's payload
            where = (code.line + w.line) if w.line <= wrapper_lines or g.aot_kernel_code is None else (
                g.aot_kernel_code.line + w.line - wrapper_lines)
            warnings.append(ParseWarning(log_path, where, f"{code.name} ({g.compile_id}): {w.text}"))


def _without_version(result):
    """The provenance parse without the warning about the trace's own "version" key."""
    kept = tuple(w for w in result.warnings if "'version'" not in w.text)
    if len(kept) == len(result.warnings):
        return result
    return replace(result, warnings=kept)


def unfold_forward(text: str) -> str:
    """The FX text with each multi-line `def forward(` signature and `return (` tuple on one line,
    padded with blank lines so that every node keeps its line number."""
    if "def forward(\n" not in text and "return (\n" not in text:
        return text
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped in ("def forward(", "return ("):
            i = _fold(lines, i, stripped)
        i += 1
    return "\n".join(lines)


def _fold(lines: list[str], i: int, opener: str) -> int:
    """Fold lines[i] (`def forward(` or `return (`) up to its closing `)` line; return that line."""
    j = i + 1
    items = []
    while j < len(lines) and not lines[j].strip().startswith(")"):
        item = lines[j].split("  #", 1)[0].strip().rstrip(",")
        if item:
            items.append(item)
        j += 1
    if j == len(lines):
        return i  # no closing line: left as it is, for the parser to warn about
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    if opener == "return (":  # as print_readable writes it on one line: `return (a, b)`, `return (a,)`
        lines[i] = f"{indent}return ({', '.join(items)}{',' if len(items) == 1 else ''})"
    else:
        lines[i] = f"{indent}def forward({', '.join(items)}):"
    for k in range(i + 1, j + 1):
        lines[k] = ""
    return j
