"""Read a TORCH_TRACE log (what `TORCH_TRACE=dir` writes, what tlparse reads) into a TraceLog.

Each entry is one line, a glog prefix then a JSON envelope (`V1123 04:51:28.049000 1614
torch/_dynamo/utils.py:2126] {"chromium_event": {}, "frame_id": 0, ..., "has_payload": MD5}`),
followed by its payload, one tab-indented line per payload line. The envelope's one key besides
the compile id names the entry (`artifact` entries are named by `artifact.name`). As tlparse
does, an entry is first claimed by its name (`HANDLERS`), then read; a name nobody claims is
only listed. A line we cannot read becomes a warning with its line number, and reading goes on.
"""

from __future__ import annotations

import hashlib
import json
import re

from compile_viz.artifacts.model import ParseWarning
from compile_viz.artifacts.text import GLOG_PREFIX, decode
from compile_viz.artifacts.trace.build import CompileBuilder, compile_id_of, pair_phases
from compile_viz.artifacts.trace.model import StackFrame, TraceLog

RANK_IN_NAME = re.compile(r"rank_(\d+)")
ID_KEYS = frozenset({"compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload", "rank"})
GRAPH_ENTRIES = frozenset({
    "dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "aot_joint_graph",
    "after_joint_graph", "inductor_post_grad_graph", "inductor_output_code", "inductor_provenance_tracking_node_mappings",
    "inductor_provenance_tracking_kernel_stack_traces",
})
# the "\n" that ends a payload: the next line starts with no tab, nor is a blank line before one
PAYLOAD_END = re.compile(r"\n(?!\t|\n\t)")
LINE_START = re.compile(r"\n\n?\t")  # a payload line's start, a blank line before it dropped
CACHE_ENTRY = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")


def rank_of(path: str) -> int | None:
    """The rank a per-rank log's name carries (`..._rank_3.log`), or None."""
    m = RANK_IN_NAME.search(path.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


def parse_trace(data: bytes | str, *, path: str, rank: int | None = None) -> TraceLog:
    """Return every compile id of a TORCH_TRACE log; never raises on content."""
    text, replaced = decode(data)
    reader = _Reader(path, rank if rank is not None else rank_of(path))
    if replaced:
        reader.warn(0, "file is not valid UTF-8; bad bytes were replaced")
    if "\r" in text:  # logs copied through Windows tools; tlparse reads them too ("\r" alone: memchr, not a 2-character search)
        text = text.replace("\r\n", "\n")
    reader.run(text)
    return reader.finish()


def entry_name(envelope: dict) -> str:
    """The entry's kind: its one key besides the compile id (an artifact's name for artifacts)."""
    for key in envelope:
        if key not in ID_KEYS:
            if key == "artifact":
                meta = envelope[key]
                return str(meta.get("name", "artifact")) if isinstance(meta, dict) else "artifact"
            return key
    return ""


class _Reader:
    def __init__(self, path: str, rank: int | None) -> None:
        self.path = path
        self.rank = rank
        self.warnings: list[ParseWarning] = []
        self.strings: dict[int, str] = {}  # the `str` intern table: index -> file name
        self.compiles: dict[str, CompileBuilder] = {}
        self.entries = 0
        self.orphans = 0
        self.events: list[dict] = []  # chromium events, paired into phases at the end

    def warn(self, line: int, text: str) -> None:
        self.warnings.append(ParseWarning(self.path, line, text))

    def run(self, text: str) -> None:
        """Read every entry of `text`. Payload lines are found with str methods over the whole text,
        not one by one: they are 98% of a log's lines."""
        p, lineno, size = 0, 1, len(text)  # p: start of the line numbered `lineno`
        match = GLOG_PREFIX.match
        while p < size:
            eol = text.find("\n", p)
            eol = size if eol < 0 else eol
            line, p, lineno, at = text[p:eol], eol + 1, lineno + 1, lineno
            if not line:
                continue  # a blank line is never an entry (a blank payload line is a lone tab)
            if line[0] == "\t":
                self.orphans += 1
                continue
            m = match(line)
            if m is None:
                self.warn(at, f"no glog prefix; line skipped: {line[:80]}")
                continue
            try:
                envelope = json.loads(line[m.end():])
            except ValueError as exc:
                self.warn(at, f"metadata is not valid JSON ({exc}); entry skipped")
                continue
            # the payload: the lines after it that start with a tab, and a blank line between two
            # of them (a stutter of the log, skipped as tlparse does)
            payload = ""
            if text.startswith("\t", p) or text.startswith("\n\t", p):
                end = PAYLOAD_END.search(text, p)
                stop = size if end is None else end.start()
                payload = LINE_START.sub("\n", text[p + 1 if text[p] == "\n" else p:stop])[1:]
                lineno += text.count("\n", p, stop + 1)
                p = stop + 1
            if not isinstance(envelope, dict):
                self.warn(at, "metadata is not a JSON object; entry skipped")
                continue
            self.entry(at, envelope, payload)

    def entry(self, lineno: int, envelope: dict, payload: str) -> None:
        self.entries += 1
        name = entry_name(envelope)
        expected = envelope.get("has_payload")
        if isinstance(expected, str) and hashlib.md5(payload.encode("utf-8", "surrogatepass")).hexdigest() != expected:
            self.warn(lineno, f"{name}: payload does not match its MD5 (cut or altered)")
        if name == "str":
            self._intern(lineno, envelope.get("str"))
            return
        cid = compile_id_of(envelope)
        builder = self.compiles.get(cid[0]) if cid else None
        if builder is None:
            builder = CompileBuilder(cid, self.rank, lineno)
            self.compiles[cid[0] if cid else ""] = builder
        handler = HANDLERS.get(name)
        if handler is None and CACHE_ENTRY.match(name):
            handler = _cache
        if handler is not None:
            try:
                handler(self, builder, lineno, envelope, payload, name)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                self.warn(lineno, f"{name}: not understood ({type(exc).__name__}: {exc}); entry skipped")
        builder.artifacts.append((name, lineno))

    def _intern(self, lineno: int, value) -> None:
        if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            self.strings[value[1]] = str(value[0])
        else:
            self.warn(lineno, "str: expected [text, index]; ignored")

    def frames(self, stack) -> tuple[StackFrame, ...]:
        """The frames of a logged stack; file names are indices into the `str` table."""
        out = []
        for f in stack or ():
            fn = f.get("filename")
            file = self.strings.get(fn, f"<string {fn}>") if isinstance(fn, int) else str(fn)
            out.append(StackFrame(file, int(f.get("line") or 0), str(f.get("name", "")), str(f.get("loc") or "")))
        return tuple(out)

    def finish(self) -> TraceLog:
        if self.orphans:
            self.warn(0, f"{self.orphans} payload line(s) after an entry that could not be read; skipped")
        phases = pair_phases(self.events)
        attempts = {(b.frame_id, b.frame_compile_id, b.attempt) for b in self.compiles.values()}
        compiles = tuple(
            b.build(phases, (b.frame_id, b.frame_compile_id, b.attempt + 1) in attempts)
            for key, b in self.compiles.items() if key or b.has_data()
        )
        return TraceLog(self.path, self.rank, compiles, self.entries, tuple(self.warnings))


# --------------------------------------------------------------------------- handlers


def _start(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.stack = reader.frames(env[name].get("stack"))


def _stack(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    if not b.stack and isinstance(env.get("stack"), list):
        b.stack = reader.frames(env["stack"])


def _graph(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.add_graph_payload(name, payload, lineno)


def _cpp_guards(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.guards = tuple(line for line in payload.split("\n") if line.strip())


def _guards_json(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    if not b.guards:  # older torch: a JSON list of guards, each with its code_list
        b.guards = tuple(code for g in json.loads(payload) for code in (g.get("code_list") or [g.get("guard", "")]))


def _metrics(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    metrics = env[name]
    if not isinstance(metrics, dict):
        raise TypeError("metrics are not an object")
    key = "bwd" if name.startswith("bwd_") else name
    b.metrics[key] = metrics


def _recompile(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    reasons = json.loads(payload)
    b.recompile_reasons.extend(str(r) for r in (reasons if isinstance(reasons, list) else [reasons]))


def _graph_break(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.graph_break_reasons.append(payload)


def _error(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.errors.append(payload)


def _cache(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.cache.append(name)


def _chromium(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    try:
        event = json.loads(payload)
    except ValueError as exc:
        reader.warn(lineno, f"chromium_event: payload is not valid JSON ({exc}); event skipped")
        return
    if isinstance(event, dict):
        reader.events.append(event)


HANDLERS = {
    "dynamo_start": _start,
    "exported_program": _stack,
    "dynamo_cpp_guards_str": _cpp_guards,
    "dynamo_guards": _guards_json,
    "compilation_metrics": _metrics,
    "bwd_compilation_metrics": _metrics,
    "recompile_reasons": _recompile,
    "dynamo_graph_break_reason": _graph_break,
    "dynamo_error": _error,
    "chromium_event": _chromium,
    **{name: _graph for name in GRAPH_ENTRIES},
}
