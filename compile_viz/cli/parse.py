"""`compile-viz parse PATH [--json]`: what the parsers found, as a summary or as JSON."""

from __future__ import annotations

import sys
from contextlib import nullcontext

from compile_viz.artifacts import DiscoveryError, GraphJob, parse_path, planned, preload
from compile_viz.artifacts.gc_pause import paused_gc
from compile_viz.artifacts.trace.discover import parse_trace_path, planned_trace
from compile_viz.cli.forked import Parts, Split, cpus, run_shared
from compile_viz.cli.parse_json import graph_parts, graph_text, is_trace, write_document


def register(sub) -> None:
    p = sub.add_parser("parse", help="parse a debug run (folder at any level, or zip) or a TORCH_TRACE log and summarise it")
    p.add_argument("path")
    p.add_argument("--trace", action="store_true",
                   help="read the TORCH_TRACE logs under PATH (a run's trace/) even when a debug folder is there")
    p.add_argument("--json", action="store_true", help="print the whole parse as JSON")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="with --json: processes that parse graphs side by side (default: the CPUs this "
                        "process may use, at most one per graph; 1: this process only)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any file gave a warning (each is printed on stderr); for CI use")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        if args.json:
            return _run_json_output(args)
        parsed = parse_trace_path(args.path) if getattr(args, "trace", False) else parse_path(args.path)
    except DiscoveryError as exc:
        print(f"compile-viz: {exc}", file=sys.stderr)
        return 2
    for line in summary_lines(parsed):
        print(line)
    if getattr(args, "strict", False):
        return strict_exit(parsed.root, _warnings(parsed))
    return 0


def _run_json_output(args) -> int:
    """`parse --json`: each graph parsed, linked and encoded as a job, the jobs shared out between
    processes (`--jobs`), the document written in the graphs' order."""
    import compile_viz.linking  # noqa: F401 - graph_json's, imported once before any fork

    _kept.clear()

    # the logs mapped, not read: their graph payloads are sliced by the processes that parse them
    trace = getattr(args, "trace", False)
    plan = nullcontext(planned_trace(args.path, map_logs=True)) if trace else planned(args.path, map_logs=True)
    with plan as (run_part, jobs), paused_gc():  # ~10^5 dicts and lists: left on, the collector walks the whole parse again and again
        if run_part.profiles:
            return _profiled_json(args, run_part, jobs)
        workers = getattr(args, "jobs", None) or cpus()
        preload(jobs)
        graphs = run_shared(job_text, jobs, [job.size for job in jobs], workers, texts_in_files=True,
                            split=SPLIT)
        warnings = [str(w) for w in run_part.warnings]
        write_document(run_part, _texts(graphs, warnings), sys.stdout)
    if getattr(args, "strict", False):
        return strict_exit(run_part.root, warnings)
    return 0


def _profiled_json(args, run_part, jobs) -> int:
    """`parse --json` of a run with a profile: every graph parsed here (the profile's regions are
    matched against all of them), each launch with its measured time, the run's profile summary last."""
    from dataclasses import replace

    from compile_viz.linking.time_report import time_report

    graphs = [job() for job in jobs]
    # no graph names in the document: the logs are not read
    report = time_report(args.path, parse=replace(run_part, graphs=tuple(graphs)), logs=())
    warnings = [str(w) for w in run_part.warnings]
    texts = ((graph_text(g, report.runtime.graphs.get(g.id, False), report.indexes.get(g.id)),
              tuple(str(w) for w in g.warnings)) for g in graphs)
    write_document(run_part, _texts(texts, warnings), sys.stdout, profile=report.summary)
    if getattr(args, "strict", False):
        return strict_exit(run_part.root, warnings)
    return 0


def _texts(graphs, warnings: list[str]):
    for text, graph_warnings in graphs:
        warnings.extend(graph_warnings)
        yield text


# The parses and links of the last `parse --json`, kept: freeing a 48-layer graph's ~10^6 objects
# takes ~7 ms that the process (or forked child) which made them has no other reason to spend
# before it exits (the command leaves by os._exit). A caller that runs another parse frees them then.
_kept: list = []


def job_text(job: GraphJob) -> tuple[Parts, tuple[str, ...]]:
    """One graph's JSON text (as its parts: forked.Parts), from its parse job, and its warnings."""
    return _text_of(job())


def _text_of(g) -> tuple[Parts, tuple[str, ...]]:
    """A parsed graph's JSON text (linked here) and its warnings; the parse and links kept (_kept)."""
    from compile_viz.linking import build_index

    index = build_index(g)
    _kept.append((g, index))
    return Parts(graph_parts(g, index=index, encoded=True)), tuple(str(w) for w in g.warnings)


def job_text_leaving_check(job: GraphJob, claim) -> tuple:
    """A forked child's job_text, with its payloads' MD5s (a TORCH_TRACE graph's: 6.4 MB hashed,
    ~15 ms, at 48 layers) left to the parent when the parent, done with its own share, took the
    check first (forked.Split): then (text, warnings, False); else job_text's (text, warnings),
    checked here. A payload not as logged has the job run again with its checks, to warn of it."""
    text, warnings = _text_of(job.unchecked(claim.given)())
    if not claim.take():
        return text, warnings, False
    return (text, warnings) if job.intact() else job_text(job)


def job_joined(job: GraphJob, result: tuple, intact: bool) -> tuple:
    """A child's result whose check was done here: as it is, or the job run here with its checks
    (and their warnings) when a payload was not as logged."""
    if len(result) == 2:  # checked by the child
        return result
    return result[:2] if intact else job_text(job)


SPLIT = Split(lambda job: job.check is not None, job_text_leaving_check, GraphJob.intact, job_joined,
              lambda job: job.prepare(*job.args) if job.prepare is not None else None)


def _warnings(parsed) -> list[str]:
    return [str(w) for w in parsed.warnings] + [str(w) for g in parsed.graphs for w in g.warnings]


def strict_exit(root: str, warnings: list[str]) -> int:
    """Print every warning on stderr; return 1 when there was one (0 otherwise)."""
    for w in warnings:
        print(f"compile-viz: warning: {w}", file=sys.stderr)
    if warnings:
        print(f"compile-viz: --strict: {len(warnings)} warning(s) in {root}", file=sys.stderr)
        return 1
    return 0


def summary_lines(parsed) -> list[str]:
    lines = []
    for g in parsed.graphs:
        fx = len(g.aot_graph.call_nodes) if g.aot_graph else 0
        pg = len(g.post_grad_graph.call_nodes) if g.post_grad_graph else 0
        oc = g.output_code
        kernels = len(oc.kernels) if oc else 0
        launches = sum(1 for launch in oc.launches if not launch.is_extern) if oc else 0
        externs = sum(1 for launch in oc.launches if launch.is_extern) if oc else 0
        groups = len(g.post_fusion.fusion_groups) if g.post_fusion else 0
        lines.append(
            f"{g.id} [{g.kind}]: {fx} FX ops (AOT), {pg} post-grad ops, {kernels} kernels, "
            f"{launches} launches, {externs} extern calls, {groups} fusion groups, {len(g.warnings)} warnings"
        )
    for gb in parsed.graph_breaks:
        lines.append(f"graph break at {gb.file}:{gb.line}: {gb.reason[:100]}")
    lines.extend(trace_summary_lines(parsed))
    if not parsed.graphs:
        lines.append("no graphs found")
    return lines


def trace_summary_lines(parsed) -> list[str]:
    """One line per compile id: status, frame, graphs, guards, recompile reason."""
    if not is_trace(parsed):
        return []
    lines = []
    for log in parsed.logs:
        rank = f"rank {log.rank} " if log.rank is not None else ""
        for c in log.compiles:
            where = f"{c.co_name} {c.co_filename}:{c.co_firstlineno}" if c.co_name else (
                "no Dynamo frame (torch.export or AOTInductor)" if not c.id else
                f"{c.stack[-1].function} {c.stack[-1].file}:{c.stack[-1].line}" if c.stack else "")
            line = f"{rank}[{c.id}] {c.status}: {where}, {len(c.graphs)} graphs, {c.guard_count or len(c.guards)} guards"
            if c.recompile_reasons:
                line += f"; recompiled: {c.recompile_reasons[0][:100]}"
            if c.fail_reason:
                line += f"; {c.fail_reason[:100]}"
            lines.append(line)
    lines.append("scheduler IR (fusion groups, fused-away buffers): not in a trace")
    return lines
