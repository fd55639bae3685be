"""The frozen dataclasses the TORCH_TRACE reader returns (artifacts/trace/read.py).

A TORCH_TRACE log (what `TORCH_TRACE=dir` writes and tlparse reads) is a sequence of entries,
each tagged with a compile id (`frame_id/frame_compile_id`, an attempt, a compiled-autograd id).
We keep Dynamo's own words: a `CompileRecord` per compile id, with the user stack of its
`dynamo_start`, its `compilation_metrics`, guards, recompile reasons, the phases of its
`chromium_event`s, and the graphs Inductor compiled for it (`TraceGraph`, payload texts kept as
they are, parsed into `GraphParse` by artifacts/trace/graphs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.model import DebugParse, ParseWarning, StackFrame  # noqa: F401 - StackFrame: here too
from compile_viz.artifacts.trace.index import HeldPayload, PayloadSpan


@frozen(slots=True)
class Phase:
    """A timed phase from a pair of `chromium_event`s (ph B then E), or an instant (ph i)."""

    name: str  # "dynamo", "entire_frame_compile", "inductor_compile", "code_gen", ...
    compile_id: str  # as the event's args give it ("" when none)
    start_us: float
    duration_us: float  # 0 for instants and for a phase that never ended
    depth: int  # nesting level among the phases open at its start
    is_backward: bool
    ended: bool


@frozen(slots=True)
class Payload:
    """An entry's payload: its text, and where it starts in the log (for warnings and links).

    A graph payload of a big log stays in the file (`span`, trace/index.py), one of a log read into
    memory stays as logged (a HeldPayload), until its text is asked for."""

    name: str  # the entry's kind: "inductor_output_code", "aot_forward_graph", ...
    body: str | None  # the text, when it was read with the log; None when it is left in the file
    line: int  # line of the entry's metadata in the log; the payload starts on the next
    span: PayloadSpan | HeldPayload | None = None

    @property
    def text(self) -> str:
        return self.read(False)

    def read(self, check: bool) -> str:
        """Its text; with `check`, its MD5 checked in the same pass (`intact` then answers at once)."""
        if self.body is not None:
            return self.body
        return self.span.read()[0] if check else self.span.text()

    @property
    def intact(self) -> bool:
        """False when a payload read from its file now does not match the MD5 its entry gave."""
        if self.body is not None:
            return True
        return self.span.intact()

    @property
    def size(self) -> int:
        """Its size in the log (characters when read, bytes when left in the file)."""
        return len(self.body) if self.body is not None else self.span.stop - self.span.start

    def head(self, size: int) -> str:
        """Its first `size` characters, read from the file alone when it was left there."""
        if self.body is not None:
            return self.body[:size]
        return self.span.head(size)


@frozen(slots=True)
class TraceGraph:
    """One graph Inductor compiled in a compile id: its AOT graph, post-grad graph, output code
    and provenance payloads (None when the log has no such entry)."""

    compile_id: str
    kind: str  # inference | forward | backward | unknown
    aot_id: str  # "0_forward", from the output code's `# AOT ID:` line ("" when absent)
    aot_graph: Payload | None
    post_grad_graph: Payload | None
    output_code: Payload | None
    provenance: Payload | None  # inductor_provenance_tracking_node_mappings
    kernel_stack_traces: Payload | None  # inductor_provenance_tracking_kernel_stack_traces
    # ahead of time (trace/aot.py): the program torch.export made, AOTInductor's C++ kernels (the
    # wrapper is output_code, named inductor_aot_wrapper_code)
    exported_program: Payload | None = None
    aot_kernel_code: Payload | None = None


@frozen(slots=True)
class CompileRecord:
    """Everything the log says about one compile id."""

    id: str  # "0/0", "1/0_1" (attempt 1), "!0/2/0" (compiled autograd 0)
    rank: int | None
    frame_id: int | None
    frame_compile_id: int | None
    attempt: int
    stack: tuple[StackFrame, ...]  # dynamo_start: outermost first, the compiled frame last
    status: str  # one of build.STATUSES: ok, ok after restart, graph break, restarted, failed, empty, unknown
    co_name: str
    co_filename: str
    co_firstlineno: int | None
    fail_reason: str  # fail_type: fail_reason, "" unless status is failed
    restart_reasons: tuple[str, ...]
    graph_break_reasons: tuple[str, ...]  # dynamo_graph_break_reason payloads
    recompile_reasons: tuple[str, ...]  # "0/0: tensor 'x' size mismatch at index 0. ..."
    guards: tuple[str, ...]  # dynamo_cpp_guards_str lines, or dynamo_guards' code_list
    guard_count: int | None  # from the metrics (the guard tree has more lines than guards)
    cache: tuple[str, ...]  # "fx_graph_cache_hit", "aotautograd_cache_miss", ...
    metrics: dict  # compilation_metrics as written (plus bwd_ ones under "bwd")
    graphs: tuple[TraceGraph, ...]
    phases: tuple[Phase, ...]
    artifacts: tuple[tuple[str, int], ...]  # (entry kind, log line) of every entry, in order
    first_line: int


@frozen(slots=True)
class TraceLog:
    """The parse of one TORCH_TRACE file (one rank)."""

    path: str
    rank: int | None
    compiles: tuple[CompileRecord, ...]
    entries: int  # entries read
    warnings: tuple[ParseWarning, ...]

    def compile(self, compile_id: str) -> CompileRecord | None:
        for c in self.compiles:
            if c.id == compile_id:
                return c
        return None


OPENED_KEPT = 8  # graphs of a lazy TraceParse kept parsed


@dataclass(frozen=True, slots=True)
class TraceParse(DebugParse):
    """A DebugParse made from TORCH_TRACE logs: graphs as from a debug folder, plus the logs.

    `not_in_trace` names the artifacts a trace never holds (the scheduler IR), so that views which
    need them say so instead of warning about a missing file.
    """

    logs: tuple[TraceLog, ...] = ()
    not_in_trace: tuple[str, ...] = ("pre_fusion", "post_fusion")
    # a big trace opened for viewing (graphs.lazy_trace_parse): `graphs` holds each graph's folder
    # alone, and `graph(id)` parses that graph's payloads when first asked (the last few are kept)
    pending: dict = field(default_factory=dict, compare=False, repr=False)  # graph id -> GraphJob
    opened: dict = field(default_factory=dict, compare=False, repr=False)  # graph id -> GraphParse

    def graph(self, graph_id: str):
        job = self.pending.get(graph_id)
        if job is None:
            return DebugParse.graph(self, graph_id)
        found = self.opened.pop(graph_id, None) or job()
        self.opened[graph_id] = found  # the most recent last
        while len(self.opened) > OPENED_KEPT:
            self.opened.pop(next(iter(self.opened)))
        return found
