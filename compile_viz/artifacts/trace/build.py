"""Gather a TORCH_TRACE log's entries per compile id (CompileBuilder) and pair its chromium
events into phases; read.py reads the lines and calls these."""

from __future__ import annotations

import re
from dataclasses import replace

from compile_viz.artifacts.trace.index import HeldPayload, PayloadSpan
from compile_viz.artifacts.trace.model import CompileRecord, Payload, Phase, StackFrame, TraceGraph

AOT_ID = re.compile(r"^# AOT ID: \['(\d+)_(\w+)'\]", re.M)
# The graph Inductor is handed, as the debug folder's fx_graph_readable.py holds it: the AOT
# forward and backward graphs; for inference, the graph after the joint-graph passes (logged
# after aot_inference_graph, so it replaces it where both are present).
AOT_KINDS = {
    "aot_inference_graph": "inference", "after_joint_graph": "inference",
    "aot_forward_graph": "forward", "aot_backward_graph": "backward",
}
SLOT_FIELDS = {
    "inductor_post_grad_graph": "post_grad_graph",
    "inductor_output_code": "output_code",
    "inductor_provenance_tracking_node_mappings": "provenance",
    "inductor_provenance_tracking_kernel_stack_traces": "kernel_stack_traces",
}
# what starts a new graph: a second post-grad graph or output code in the same compile id
OPENS_SLOT = {
    "post_grad_graph": ("post_grad_graph", "output_code"),
    "output_code": ("output_code",),
}


# ok: compiled; graph break: Dynamo broke the graph here (then restarted); restarted: a later
# attempt took over; failed: fail_type or dynamo_error; empty: nothing to compile; unknown: no
# metrics (the log ends mid-compile)
STATUSES = ("ok", "ok after restart", "graph break", "restarted", "failed", "empty", "unknown")


NO_COMPILE_ID = ("", None, None, 0)


def compile_id_of(envelope: dict) -> tuple:
    """(id text, frame_id, frame_compile_id, attempt) of an entry; NO_COMPILE_ID ("" for its text)
    when it has none. torch.export and AOTInductor (aoti_compile_and_package) run no Dynamo frame:
    every entry of theirs has none, and they gather in that one record, which the reader keeps
    when it holds something (graphs, metrics, a stack)."""
    frame, fcid = envelope.get("frame_id"), envelope.get("frame_compile_id")
    ca = envelope.get("compiled_autograd_id")
    if frame is None and ca is None:
        return NO_COMPILE_ID
    attempt = envelope.get("attempt") or 0
    text = f"{frame}/{fcid}" if frame is not None else "-"
    if ca is not None:
        text = f"!{ca}/{text}"
    if attempt:
        text += f"_{attempt}"
    return text, frame, fcid, int(attempt) if isinstance(attempt, int) else 0


class CompileBuilder:
    """What the log said about one compile id, as the entries arrive."""

    def __init__(self, cid: tuple | None, rank: int | None, first_line: int) -> None:
        self.id, self.frame_id, self.frame_compile_id, self.attempt = cid or ("", None, None, 0)
        self.rank = rank
        self.first_line = first_line
        self.stack: tuple[StackFrame, ...] = ()
        self.guards: tuple[str, ...] = ()
        self.metrics: dict = {}
        self.recompile_reasons: list[str] = []
        self.graph_break_reasons: list[str] = []
        self.errors: list[str] = []
        self.cache: list[str] = []
        self.artifacts: list[tuple[str, int]] = []
        self.aot: dict[str, Payload] = {}
        self.slots: list[dict] = []

    def has_data(self) -> bool:
        return bool(self.stack or self.slots or self.metrics or self.guards)

    def has_more_than_names(self) -> bool:
        """Whether any entry of it was read for more than its name (and cache outcome)."""
        return bool(self.stack or self.guards or self.metrics or self.recompile_reasons or self.graph_break_reasons
                    or self.errors or self.aot or self.slots)

    def renumber(self, before: int) -> None:
        """Move its line numbers on by `before` (it was read from a later part of its log)."""
        self.first_line += before
        self.artifacts = [(name, line + before) for name, line in self.artifacts]
        self.aot = {k: replace(p, line=p.line + before) for k, p in self.aot.items()}
        self.slots = [{k: replace(p, line=p.line + before) for k, p in slot.items()} for slot in self.slots]

    def add_graph_payload(self, name: str, payload: str | PayloadSpan | HeldPayload, lineno: int) -> None:
        p = Payload(name, payload, lineno) if isinstance(payload, str) else Payload(name, None, lineno, payload)
        if name in AOT_KINDS:
            self.aot[AOT_KINDS[name]] = p
            return
        field = SLOT_FIELDS.get(name)
        if field is None:  # dynamo_output_graph, aot_joint_graph: listed, not parsed
            return
        opens = OPENS_SLOT.get(field, ())
        if not self.slots or any(f in self.slots[-1] for f in opens):
            self.slots.append({})
        self.slots[-1].setdefault(field, p)

    def graphs(self) -> tuple[TraceGraph, ...]:
        out = []
        order = ["inference"] if "inference" in self.aot and "forward" not in self.aot else ["forward", "backward"]
        for i, slot in enumerate(self.slots):
            code = slot.get("output_code")
            m = AOT_ID.search(code.head(400)) if code else None
            kind = m.group(2) if m else (order[i] if i < len(order) else "unknown")
            aot_id = f"{m.group(1)}_{m.group(2)}" if m else ""
            out.append(TraceGraph(self.id, kind, aot_id, self.aot.get(kind), slot.get("post_grad_graph"), code,
                                  slot.get("provenance"), slot.get("kernel_stack_traces")))
        return tuple(out)

    def status(self, restarted: bool) -> str:
        """One of STATUSES: what became of this attempt."""
        m = self.metrics.get("compilation_metrics") or {}
        if m.get("fail_type") or self.errors:
            return "failed"
        if self.graph_break_reasons:
            return "graph break"
        if not m:
            return "restarted" if restarted else "unknown"
        if m.get("graph_op_count") == 0 or m.get("has_guarded_code") is False:
            return "empty"
        return "ok after restart" if m.get("restart_reasons") else "ok"

    def build(self, phases: dict[str, list[Phase]], restarted: bool) -> CompileRecord:
        """The record; `restarted`: a later attempt of the same frame compile is in the log."""
        m = self.metrics.get("compilation_metrics") or {}
        fail = ""
        if m.get("fail_type") or self.errors:
            fail = f"{m.get('fail_type') or 'error'}: {m.get('fail_reason') or (self.errors[0] if self.errors else '')}"
        recompile = list(dict.fromkeys(self.recompile_reasons))
        if not recompile and m.get("recompile_reason"):
            recompile = [str(m["recompile_reason"])]
        base = self.id.rsplit("_", 1)[0] if self.attempt else self.id
        return CompileRecord(
            self.id, self.rank, self.frame_id, self.frame_compile_id, self.attempt, self.stack, self.status(restarted),
            str(m.get("co_name") or ""), str(m.get("co_filename") or ""), m.get("co_firstlineno"), fail,
            tuple(str(r) for r in m.get("restart_reasons") or ()), tuple(self.graph_break_reasons),
            tuple(recompile), self.guards, m.get("guard_count"), tuple(self.cache), dict(self.metrics),
            self.graphs(), tuple(phases.get(base, ())) if not self.attempt else (),
            tuple(self.artifacts), self.first_line,
        )


def pair_phases(events: list[dict]) -> dict[str, list[Phase]]:
    """Phases by compile id: each B event with the next E of the same name, instants as they are."""
    open_by_name: dict[str, list[tuple[dict, int]]] = {}
    depth = 0
    done: list[tuple[dict, float, int, bool]] = []  # (begin event, duration, depth, ended)
    for e in events:
        ph, name = e.get("ph"), e.get("name")
        if ph == "B":
            open_by_name.setdefault(name, []).append((e, depth))
            depth += 1
        elif ph == "E":
            stack = open_by_name.get(name)
            if stack:
                begin, d = stack.pop()
                done.append((begin | {"args": {**(e.get("args") or {}), **(begin.get("args") or {})}},
                             _ts(e) - _ts(begin), d, True))
                depth = max(depth - 1, 0)
        elif ph in ("i", "X"):
            done.append((e, float(e.get("dur") or 0.0), depth, True))
    for stack in open_by_name.values():
        done.extend((begin, 0.0, d, False) for begin, d in stack)
    out: dict[str, list[Phase]] = {}
    for e, dur, d, ended in sorted(done, key=lambda x: _ts(x[0])):
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        cid = str(args.get("compile_id") or "")
        out.setdefault(cid, []).append(
            Phase(str(e.get("name")), cid, _ts(e), max(dur, 0.0), d, bool(args.get("is_backward")), ended))
    return out


def _ts(e: dict) -> float:
    ts = e.get("ts")
    return float(ts) if isinstance(ts, (int, float)) else 0.0
