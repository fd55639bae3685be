"""What `compile-viz parse` adds for a TORCH_TRACE log: the compile ids, as JSON or summary lines."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compile_viz.artifacts.trace_model import CompileRecord, TraceLog


def is_trace(parsed) -> bool:
    """Whether `parsed` was read from TORCH_TRACE logs (a TraceParse). Its module is loaded only
    when a trace is read, so a debug folder's parse is told apart without importing it."""
    module = sys.modules.get("compile_viz.artifacts.trace_model")
    return module is not None and isinstance(parsed, module.TraceParse)


def compile_json(c: CompileRecord) -> dict:
    return {
        "id": c.id,
        "rank": c.rank,
        "status": c.status,
        "co_name": c.co_name,
        "co_filename": c.co_filename,
        "co_firstlineno": c.co_firstlineno,
        "fail_reason": c.fail_reason,
        "restart_reasons": list(c.restart_reasons),
        "graph_break_reasons": list(c.graph_break_reasons),
        "recompile_reasons": list(c.recompile_reasons),
        "guard_count": c.guard_count,
        "guards": list(c.guards),
        "cache": list(c.cache),
        "stack": [{"file": f.file, "line": f.line, "function": f.function, "code": f.code} for f in c.stack],
        "graphs": [{"kind": g.kind, "aot_id": g.aot_id} for g in c.graphs],
        "phases": [
            {"name": p.name, "start_us": p.start_us, "duration_us": p.duration_us, "depth": p.depth,
             "is_backward": p.is_backward, "ended": p.ended}
            for p in c.phases
        ],
        "times_s": {k: c.metrics.get("compilation_metrics", {}).get(k) for k in TIMES},
    }


TIMES = ("entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s")


def log_json(log: TraceLog) -> dict:
    return {
        "path": log.path,
        "rank": log.rank,
        "entries": log.entries,
        "compiles": [compile_json(c) for c in log.compiles],
        "warnings": [str(w) for w in log.warnings],
    }


def trace_json(parsed) -> dict:
    """{"traces": [...]} for a TraceParse; {} for a debug folder's parse (its JSON stays as it was)."""
    if not is_trace(parsed):
        return {}
    return {"traces": [log_json(log) for log in parsed.logs], "not_in_trace": list(parsed.not_in_trace)}


def trace_summary_lines(parsed) -> list[str]:
    """One line per compile id: status, frame, graphs, guards, recompile reason."""
    if not is_trace(parsed):
        return []
    lines = []
    for log in parsed.logs:
        rank = f"rank {log.rank} " if log.rank is not None else ""
        for c in log.compiles:
            where = f"{c.co_name} {c.co_filename}:{c.co_firstlineno}" if c.co_name else (
                f"{c.stack[-1].function} {c.stack[-1].file}:{c.stack[-1].line}" if c.stack else "")
            line = f"{rank}[{c.id}] {c.status}: {where}, {len(c.graphs)} graphs, {c.guard_count or len(c.guards)} guards"
            if c.recompile_reasons:
                line += f"; recompiled: {c.recompile_reasons[0][:100]}"
            if c.fail_reason:
                line += f"; {c.fail_reason[:100]}"
            lines.append(line)
    lines.append("scheduler IR (fusion groups, fused-away buffers): not in a trace")
    return lines
