"""measure.json's `correctness.ladder` as typed records: the same inputs through backend="eager",
"aot_eager", "aot_eager_decomp_partition" and Inductor, the first stage that differs, and what
PyTorch's compiler bisector named inside Inductor. `from_json` is tolerant: runs without a ladder
read as None, a wrong type as None."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compile_viz.measurements.json_fields import as_bool as _bool
from compile_viz.measurements.json_fields import as_dict as _dict
from compile_viz.measurements.json_fields import as_int as _int
from compile_viz.measurements.json_fields import as_list as _list
from compile_viz.measurements.json_fields import as_num as _num
from compile_viz.measurements.json_fields import as_str as _str

# (torch.compile backend, the stage it adds, named for a person)
STAGES = (
    ("eager", "graph capture (Dynamo)"),
    ("aot_eager", "AOTAutograd"),
    ("aot_eager_decomp_partition", "decompositions"),
    ("inductor", "Inductor"),
)

NEXT_STEP = {
    "graph capture (Dynamo)": "backend=\"eager\" already differs, so Dynamo captured something other than "
                              "what eager runs: look for torch.compiler.is_compiling() branches, graph breaks "
                              "and Python side effects in that frame",
    "AOTAutograd": "backend=\"aot_eager\" differs where \"eager\" does not: AOTAutograd's tracing "
                   "(functionalization, mutations of inputs, autograd.Function) changes the result",
    "decompositions": "backend=\"aot_eager_decomp_partition\" differs: one of Inductor's decompositions or "
                      "the partitioner changes the result; the compiler bisector's \"decomposition\" "
                      "subsystem names which",
    "Inductor": "only Inductor differs: a pass or a kernel it generates",
}
HINT = " Hint: "  # joins a wrong result's first failure and what to do, in correctness.note (verify/correctness.py)


def next_step(first: str | None, found: str | None = None) -> str | None:
    """Return what to do next from where the ladder first differs, on one line ("first differs at
    AOTAutograd: …", with what the compiler bisector named); None when it names no stage (not run,
    or every stage agreed). The one place the next step is decided: capture, the headline, the CLI."""
    if not first:
        return None
    line = f"first differs at {first}: {NEXT_STEP.get(first, 'see the ladder')}"
    return f"{line}; the compiler bisector names {found}" if found else line


def headline_note(note: str | None, first: str | None) -> str | None:
    """Return a wrong result's note with its hint taken from the ladder when the ladder names where
    the difference starts. The note's own hint is chosen from the tensor that differs before the
    ladder runs (the after-AOT minifier for any forward difference), which is no step to take when
    backend="eager" already differs; the note is unchanged without a ladder."""
    step = next_step(first)
    if note is None or step is None:
        return note
    failure, _, _ = note.partition(HINT)
    return f"{failure}{HINT}{step}."


@dataclass(frozen=True, slots=True)
class LadderStage:
    """One backend of the ladder against eager."""

    backend: str  # eager, aot_eager, aot_eager_decomp_partition, inductor
    stage: str  # what it adds, for a person: "graph capture (Dynamo)", "AOTAutograd", ...
    ok: bool | None = None  # None: differs, but drew other random numbers (not comparable)
    rule: str | None = None
    worst: str | None = None  # the first output or gradient that differs
    note: str | None = None  # where and by how much
    error: str | None = None  # the stage failed to compile or run
    max_abs: float | None = None
    failed: int | None = None
    compared: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> LadderStage:
        d = _dict(data)
        return cls(backend=_str(d.get("backend")) or "?", stage=_str(d.get("stage")) or _str(d.get("backend")) or "?",
                   ok=_bool(d.get("ok")), **{k: _str(d.get(k)) for k in ("rule", "worst", "note", "error")},
                   max_abs=_num(d.get("max_abs")), failed=_int(d.get("failed")), compared=_int(d.get("compared")))


@dataclass(frozen=True, slots=True)
class Bisect:
    """What PyTorch's compiler bisector named inside Inductor, or why it could not."""

    ran: bool | None = None
    found: str | None = None  # one line: "Inductor's lowering of FX node tanh (lowering #2)"
    kind: str | None = None  # lowering, pass, config, subsystem
    subsystem: str | None = None  # the bisector's own name: lowerings, post_grad_passes, ...
    bisect_number: int | None = None
    debug_info: str | None = None
    node: str | None = None  # a lowering's FX node (post-grad graph): its kernel can be linked
    pass_name: str | None = None
    disable: str | None = None  # an option or environment that avoids it
    error: str | None = None
    command: str | None = None  # to run it by hand
    log: str | None = None

    @classmethod
    def from_json(cls, data: Any) -> Bisect | None:
        if not isinstance(data, dict):
            return None
        texts = ("found", "kind", "subsystem", "debug_info", "node", "disable", "error", "command", "log")
        return cls(ran=_bool(data.get("ran")), bisect_number=_int(data.get("bisect_number")),
                   pass_name=_str(data.get("pass")), **{k: _str(data.get(k)) for k in texts})


@dataclass(frozen=True, slots=True)
class Ladder:
    """The backends in order, and the first stage whose result differs from eager's."""

    stages: tuple[LadderStage, ...] = ()
    first: str | None = None  # the stage, named for a person; None: every stage agreed
    first_backend: str | None = None
    reference: str | None = None
    note: str | None = None  # one line: the first stage and what to do next
    bisect: Bisect | None = None

    @classmethod
    def from_json(cls, data: Any) -> Ladder | None:
        if not isinstance(data, dict):
            return None
        return cls(stages=tuple(LadderStage.from_json(s) for s in _list(data.get("stages"))),
                   first=_str(data.get("first")), first_backend=_str(data.get("first_backend")),
                   reference=_str(data.get("reference")), note=_str(data.get("note")),
                   bisect=Bisect.from_json(data.get("bisect")))
