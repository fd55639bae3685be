"""One-line reasons: graph breaks and recompiles from Dynamo's log records, and failures.

Stdlib only, so it is testable without torch: it reads message text and exception names.
"""

from __future__ import annotations

import re

_GB_WHERE = re.compile(r"in user code at (?P<file>.+?):(?P<line>\d+)\s*$", re.M)
_GB_REASON = re.compile(r"Graph Break Reason:\s*(?P<reason>.*?)(?:\nUser code traceback:|\Z)", re.S)
_RECOMPILE = re.compile(r"Recompiling function (?P<function>\S+) in (?P<file>.+?):(?P<line>\d+)")
_GUARD = re.compile(r"^\s*-\s*(?P<guard>.+)$", re.M)
MAX_REASON = 300
# Triton's CompilationError says (triton/compiler/errors.py, CompilationError._format_message):
# "at LINE:COL:", then the kernel's source up to LINE (its last 12 lines at most), a caret under COL
# on a line of its own, then the error. Triton before 3.0 put no newline after "at LINE:COL:".
_TRITON_AT = re.compile(r"^at (?P<line>\d+):(?P<col>\d+):(?P<rest>.*)$")
_TRITON_CARET = re.compile(r"^ *\^$")
_TRITON_DEF = re.compile(r"^\s*def\s+(?P<name>\w+)\s*\(", re.M)
CARET_MARK = "▸"  # where Triton's caret points, in the one line
KERNEL_NAME_SHOWN = 80  # a longer kernel name keeps its head and its tail (the tail tells it from its twins)


def one_line(text: str, limit: int = MAX_REASON) -> str:
    """Return text squeezed onto one line, cut at `limit` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def signal_name(num: int) -> str:
    """SIGKILL for 9; "signal N" for a number that names no signal here."""
    import signal

    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _summary(reason: str) -> str:
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    # The first line is often the generic "Encountered graph break when attempting to trace ...".
    if len(lines) > 1 and lines[0].startswith("Encountered graph break"):
        return lines[1]
    return lines[0] if lines else ""


def parse_graph_break(message: str) -> dict:
    """Return {file, line, summary, reason, duplicate} from a graph_breaks log record."""
    where = _GB_WHERE.search(message.splitlines()[0] if message else "")
    why = _GB_REASON.search(message)
    reason = why.group("reason").strip() if why else message.strip()
    return {
        "file": where.group("file") if where else None,
        "line": int(where.group("line")) if where else None,
        "summary": one_line(_summary(reason)),
        "reason": reason,
        "duplicate": "duplicate graph break" in message.splitlines()[0] if message else False,
    }


def parse_recompile(message: str) -> dict:
    """Return {function, file, line, reason, guards} from a recompiles log record."""
    m = _RECOMPILE.search(message)
    guards = [g.group("guard").strip() for g in _GUARD.finditer(message)]
    return {
        "function": m.group("function") if m else None,
        "file": m.group("file") if m else None,
        "line": int(m.group("line")) if m else None,
        "reason": one_line("; ".join(guards) or message),
        "guards": guards,
    }


def _chain(exc: BaseException) -> list[BaseException]:
    seen, out = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def exception_reason(exc: BaseException, phase: str) -> str:
    """Return a one-line reason for an exception raised in the child during `phase`."""
    chain = _chain(exc)
    names = [type(e).__name__ for e in chain]
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    for e in chain:
        if type(e).__name__ == "OutOfMemoryError" or "CUDA out of memory" in str(e):
            return one_line(f"CUDA out of memory while {phase}: {_first_line(e)}")
    for e in chain:
        if type(e).__name__ == "CompilationError" or type(e).__module__.split(".")[0] == "triton":
            src = getattr(e, "src", None)  # the kernel's whole source, where its def line always is
            return one_line(f"Triton compile error while {phase}: {type(e).__name__}"
                            f"{triton_error(str(e), src if isinstance(src, str) else None)}")
    if "BackendCompilerFailed" in names or "InductorError" in names:
        inner = chain[-1]
        return one_line(f"Inductor failed while {phase}: {type(inner).__name__}: {_first_line(inner)}")
    if names[0] in ("Unsupported", "UserError") and phase == "compiling":
        return one_line(f"Dynamo could not trace the model (fullgraph?): {_first_line(exc)}")
    return one_line(f"model raised {type(exc).__name__} while {phase}: {_first_line(exc)}")


def triton_error(text: str, src: str | None = None) -> str:
    """Return Triton's CompilationError message as the tail of one line: " in KERNEL at L:C: the
    offending source line, CARET_MARK where the caret points: the error". The kernel is named by the
    def line of `src` (the exception's kernel source) or else of the message's excerpt; a message in
    another shape gives ": its first line"."""
    lines = text.strip("\n").split("\n")
    m = _TRITON_AT.match(lines[0].strip())
    if m is None:
        return f": {lines[0].strip()}" if lines[0].strip() else ""
    excerpt = ([m["rest"]] if m["rest"].strip() else []) + lines[1:]
    caret = next((i for i, line in enumerate(excerpt) if _TRITON_CARET.match(line)), None)
    kernel = _TRITON_DEF.search(src or "") or _TRITON_DEF.search("\n".join(excerpt[:caret]))
    out = (f" in {_short(kernel['name'])}" if kernel else "") + f" at {m['line']}:{m['col']}:"
    error = excerpt
    if caret:  # the line above the caret, marked where it points
        line, col = excerpt[caret - 1], len(excerpt[caret]) - 1
        out += f" {(line[:col] + CARET_MARK + line[col:]).strip()}"
        error = excerpt[caret + 1:]
    said = " ".join(" ".join(error).split())
    return out + (f" {said}" if said and not caret else f": {said}" if said else "")


def _short(name: str) -> str:
    if len(name) <= KERNEL_NAME_SHOWN:
        return name
    half = (KERNEL_NAME_SHOWN - 1) // 2
    return f"{name[:half]}…{name[-half:]}"
