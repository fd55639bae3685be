"""TORCH_TRACE compile records -> rows, escaped HTML and a Plotly timeline; no st.* calls.

The Compiles page shows the compile ids of a log as a tree by frame, each with its status, user
stack, guards, recompile reasons in plain words and the timeline of its compile phases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

import plotly.graph_objects as go

from compile_viz.artifacts.trace.model import CompileRecord, Phase, StackFrame, TraceLog
from compile_viz.render.cells import text_cell

STATUS_ICONS = {
    "ok": "✅", "ok after restart": "✅", "graph break": "🟠", "restarted": "🔁", "failed": "❌",
    "empty": "⚪", "unknown": "❔",
}
# frames of torch and of the Python runtime: shown dimmed, the user's frames stand out
LIBRARY_FRAME = re.compile(r"(/site-packages/|/dist-packages/|<frozen |/torch/|/lib/python3\.\d+/)")
RECOMPILE = re.compile(r"^(\S+): (.*)$", re.S)
# the phases the timeline shows by default: Dynamo, AOT, Inductor lowering, scheduling, codegen, Triton
MAIN_PHASES = (
    "entire_frame_compile", "bytecode_tracing", "build_guards", "backend_compile", "create_aot_dispatcher_function",
    "inductor_compile", "_recursive_post_grad_passes", "GraphLowering.run", "Scheduler.__init__",
    "Scheduler.fused_nodes", "code_gen", "Scheduler.codegen", "PythonWrapperCodegen.generate",
    "async_compile.precompile", "async_compile.wait", "CachingAutotuner.benchmark_all_configs",
)


def compile_rows(log: TraceLog) -> list[dict]:
    """One row per compile id, grouped by frame (frame id order), as the tree's table shows it."""
    rows = []
    for c in sorted(log.compiles, key=_tree_key):
        times = c.metrics.get("compilation_metrics") or {}
        rows.append({
            "compile id": c.id,
            "status": f"{STATUS_ICONS.get(c.status, '')} {c.status}",
            "frame": frame_label(c),
            "graphs": ", ".join(g.kind for g in c.graphs),
            "guards": text_cell(c.guard_count if c.guard_count is not None else len(c.guards) or None),
            "compile s": text_cell(times.get("entire_frame_compile_time_s"), "{:.3g}"),
            "recompile reason": plain_recompile_reason(c.recompile_reasons[0]) if c.recompile_reasons else "",
        })
    return rows


def _tree_key(c: CompileRecord) -> tuple:
    return (c.frame_id if c.frame_id is not None else -1, c.frame_compile_id or 0, c.attempt, c.id)


def frame_label(c: CompileRecord) -> str:
    """`forward (model.py:43)`: the frame Dynamo compiled, from the metrics or the stack."""
    if c.co_name:
        return f"{c.co_name} ({c.co_filename.rsplit('/', 1)[-1]}:{c.co_firstlineno})"
    if c.stack:
        f = c.stack[-1]
        return f"{f.function} ({f.file.rsplit('/', 1)[-1]}:{f.line})"
    return "(no frame)"


def plain_recompile_reason(reason: str) -> str:
    """"0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3" in plain words."""
    m = RECOMPILE.match(reason.strip())
    if not m:
        return reason.strip()
    return f"the guards of compile {m.group(1)} failed: {m.group(2).strip()}"


def stack_html(frames: Sequence[StackFrame]) -> str:
    """The user stack, outermost first; library frames dimmed, the compiled frame highlighted."""
    if not frames:
        return '<div class="cv-stack">no stack in the log</div>'
    items = []
    for i, f in enumerate(frames):
        last = i == len(frames) - 1
        cls = "cv-frame-last" if last else ("cv-frame-lib" if LIBRARY_FRAME.search(f.file) else "cv-frame")
        style = "font-weight:600;background:#fff3c4" if last else ("color:#999" if cls == "cv-frame-lib" else "")
        code = f"<br><code>{escape(f.code)}</code>" if f.code else ""
        items.append(f'<li class="{cls}" style="{style}">{escape(f.function)} — '
                     f"{escape(f.file)}:{f.line}{code}</li>")
    return f'<ol class="cv-stack" style="font-size:0.85em">{"".join(items)}</ol>'


def filter_guards(guards: Sequence[str], query: str) -> list[str]:
    """The guard lines containing `query` (case-insensitive); all of them for an empty query."""
    q = query.strip().lower()
    return [g for g in guards if q in g.lower()] if q else list(guards)


def phase_figure(phases: Sequence[Phase], *, all_phases: bool = False) -> go.Figure:
    """A Gantt-like timeline of a compile's phases (ms from its first phase), nested ones indented."""
    shown = [p for p in phases if p.duration_us > 0 and (all_phases or p.name in MAIN_PHASES or p.depth <= 1)]
    fig = go.Figure()
    if not shown:
        fig.update_layout(title="no timed phases in the log", height=120)
        return fig
    t0 = min(p.start_us for p in shown)
    labels = [f"{'· ' * max(p.depth - 1, 0)}{p.name}{' (bwd)' if p.is_backward else ''}" for p in shown]
    fig.add_trace(go.Bar(
        y=[f"{i:03d} {label}" for i, label in enumerate(labels)], x=[p.duration_us / 1000 for p in shown],
        base=[(p.start_us - t0) / 1000 for p in shown], orientation="h",
        marker_color=["#c0504d" if p.is_backward else "#4f81bd" for p in shown],
        customdata=[p.name for p in shown], text=[f"{p.duration_us / 1000:.1f} ms" for p in shown],
        hovertemplate="%{customdata}: %{x:.1f} ms from %{base:.1f} ms<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed", ticktext=labels, tickvals=[f"{i:03d} {la}" for i, la in enumerate(labels)])
    fig.update_layout(height=120 + 18 * len(shown), margin=dict(l=10, r=10, t=30, b=30),
                      xaxis_title="ms since the compile started", showlegend=False)
    return fig


def phases_of(log: TraceLog, c: CompileRecord) -> tuple[Phase, ...]:
    """A compile id's timed phases. An attempt after a restart (`0/0_1`) has none of its own: Dynamo
    times the whole frame, every attempt (`compile_attempt_N`), under the first attempt's id."""
    if c.phases or not c.attempt:
        return c.phases
    first = next((o for o in log.compiles if o.attempt == 0 and o.frame_id == c.frame_id
                  and o.frame_compile_id == c.frame_compile_id), None)
    return first.phases if first is not None else ()
