"""Read a TORCH_TRACE log (what `TORCH_TRACE=dir` writes, what tlparse reads) into a TraceLog.

Each entry is one line, a glog prefix then a JSON envelope (`V1123 04:51:28.049000 1614
torch/_dynamo/utils.py:2126] {"chromium_event": {}, "frame_id": 0, ..., "has_payload": MD5}`),
followed by its payload, one tab-indented line per payload line. The envelope's one key besides
the compile id names the entry (`artifact` entries are named by `artifact.name`). As tlparse
does, an entry is first claimed by its name (`HANDLERS`), then read; a name nobody claims is
only listed. A line we cannot read becomes a warning with its line number, and reading goes on.
"""

from __future__ import annotations

import functools
import json
import json.scanner
import re
from dataclasses import replace

from compile_viz.artifacts.model import ParseWarning
from compile_viz.artifacts.text import GLOG_PREFIX, decode
from compile_viz.artifacts.trace.build import CompileBuilder, compile_id_of, pair_phases
from compile_viz.artifacts.trace.index import (
    LAZY_PAYLOAD_BYTES,
    RELEASE_BYTES,
    HeldPayload,
    LogBytes,
    LoggedJSON,
    MappedLog,
    PayloadLines,
    PayloadSpan,
    md5,
    payload_bytes,
    release,
)
from compile_viz.artifacts.trace.model import StackFrame, TraceLog

RANK_IN_NAME = re.compile(r"rank_(\d+)")
ID_KEYS = frozenset({"compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload", "rank"})
GRAPH_ENTRIES = frozenset({
    "dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph", "aot_joint_graph",
    "after_joint_graph", "inductor_post_grad_graph", "inductor_output_code", "inductor_provenance_tracking_node_mappings",
    "inductor_provenance_tracking_kernel_stack_traces",
})
# the "\n" that ends a payload: the next line starts with no tab, nor is a blank line before one
PAYLOAD_END = re.compile(rb"\n(?!\t|\n\t)")
GLOG_PREFIX_BYTES = re.compile(GLOG_PREFIX.pattern.encode())
TAB = ord("\t")
NEWLINE = re.compile(b"\n")
# payloads a mapped log leaves in its file when big: the graphs', and the guards (read when shown)
LEFT_IN_FILE = GRAPH_ENTRIES | {"dynamo_cpp_guards_str"}
REASON_START = re.compile(r"\n(?=\d+/\d+: )")
SKIM_BYTES = 1 << 20
SPLIT_BYTES = 64 << 20  # a mapped log bigger than this may be walked in two parts side by side
DYNAMO_START = b'{"dynamo_start": '  # where the second part starts: a frame's compile, after the middle


class _Skimmed:
    """An envelope's content left unread (skim); pickled as this module's one SKIMMED."""

    def __reduce__(self):
        return "SKIMMED"


SKIMMED = _Skimmed()
READ_WHOLE = frozenset({"dynamo_start", "compilation_metrics", "exported_program", "artifact", "str"})
FIRST_KEY = re.compile(rb'\{"(\w+)"')
ID_FIELD = re.compile(rb'"(frame_id|frame_compile_id|attempt|compiled_autograd_id|has_payload|rank)": '
                      rb'("[0-9a-f]*"|-?\d+|null)')
CACHE_ENTRY = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")


def rank_of(path: str) -> int | None:
    """The rank a per-rank log's name carries (`..._rank_3.log`), or None."""
    m = RANK_IN_NAME.search(path.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


def parse_trace(data: LogBytes | str, *, path: str, rank: int | None = None, processes: int = 1) -> TraceLog:
    """Return every compile id of a TORCH_TRACE log; never raises on content. A mapped log
    (index.MappedLog) leaves its big graph payloads in its file, to be read when asked for; one of
    more than SPLIT_BYTES is walked by `processes` (2 at most) processes, a part each."""
    source = data.path if isinstance(data, MappedLog) else None
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    rank = rank if rank is not None else rank_of(path)
    reader = _Reader(path, rank, source)
    cut = _cut(data) if processes > 1 and source is not None and len(data) > SPLIT_BYTES else None
    if cut is None or not reader.run_parts(data, cut):
        reader = _Reader(path, rank, source) if cut is not None else reader
        if data.find(b"\r") >= 0:  # logs copied through Windows tools; tlparse reads them too
            data, reader.source = bytes(data).replace(b"\r\n", b"\n"), None  # offsets moved: nothing left in the file
        reader.walk(data, 0, len(data), 1)
    release(data, len(data))
    return reader.finish()


def skim(buf, start: int, end: int) -> dict | None:
    """A metadata line (its JSON at buf[start:end]) of more than SKIM_BYTES whose content nothing
    here reads (a backward's compilation metrics carry every kernel's stack traces: 10 MB a line in
    a 48-layer job) is not parsed: its name and compile id are read from its two ends. None for any
    other line."""
    m = FIRST_KEY.match(buf, start, end)
    if m is None or m.group(1).decode() in READ_WHOLE:
        return None
    envelope: dict = {m.group(1).decode(): SKIMMED}
    for key, value in ID_FIELD.findall(buf, max(start, end - 512), end):
        envelope[key.decode()] = json.loads(value)  # the last of each: the envelope's own, after the content
    return envelope


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
    def __init__(self, path: str, rank: int | None, source: str | None = None) -> None:
        self.path = path
        self.rank = rank
        self.source = source  # the file graph payloads may be left in (a mapped log)
        self.replaced = False  # bytes that are not UTF-8 were replaced
        self.warnings: list[ParseWarning] = []
        self.strings: dict[int, str] = {}  # the `str` intern table: index -> file name
        self.compiles: dict[str, CompileBuilder] = {}
        self.entries = 0
        self.orphans = 0
        self.events: list[dict] = []  # chromium events, paired into phases at the end
        self.json_at = (0, 0)  # where the JSON of the entry being read lies (a mapped log's)
        self.missed: set[int] = set()  # files a stack named that this reader's `str` entries had not interned

    def warn(self, line: int, text: str) -> None:
        self.warnings.append(ParseWarning(self.path, line, text))

    def run_parts(self, buf, cut: int) -> bool:
        """Read a big mapped log cut in two at `cut` (where a frame's compile starts, near its
        middle): the second part by a forked copy of this process while this one reads the first.
        What the second part held is then taken in (`merge`), or, where it depended on the first
        (a compile read for more than entry names on both sides), read again here. False, having
        read nothing that counts, where a part holds a carriage return (the log is read whole
        then, its line ends made plain)."""
        from compile_viz.artifacts.forking import map_forked

        first, second = map_forked(functools.partial(self.part, buf), [(0, cut), (cut, len(buf))], 2)
        if first is None or second is None:
            return False
        if not self.merge(second[1], first - 1):
            self.walk(buf, cut, len(buf), first)
        return True

    def part(self, buf, span: tuple[int, int]):
        """The first part read by this reader (the number of the line after it), or the second by
        a reader of its own, its lines numbered from 1 ((that number, the reader)); None for a part
        that holds a carriage return."""
        if buf.find(b"\r", *span) >= 0:
            return None
        if span[0] == 0:
            return self.walk(buf, *span, 1)
        other = _Reader(self.path, self.rank, self.source)
        return other.walk(buf, *span, 1), other

    def walk(self, buf, p: int, stop_at: int, lineno: int) -> int:
        """Read the entries of buf[p:stop_at] (whole entries), the first on line `lineno`; return
        the number of the line after them. Payload lines are found with one regex over the
        buffer, not one by one: they are 98% of a log's lines."""
        size, released = len(buf), p  # p: start of the line numbered `lineno`
        match = GLOG_PREFIX_BYTES.match
        newlines = _newlines(buf)
        while p < stop_at:
            if p - released > RELEASE_BYTES:
                release(buf, p)
                released = p
            eol = buf.find(b"\n", p)
            eol = size if eol < 0 else eol
            start, p, lineno, at = p, eol + 1, lineno + 1, lineno
            if start == eol:
                continue  # a blank line is never an entry (a blank payload line is a lone tab)
            if buf[start] == TAB:
                self.orphans += 1
                continue
            m = match(buf, start, eol)  # the line is not copied: a metadata line can weigh 10 MB
            if m is None:
                shown = bytes(buf[start:min(eol, start + 320)]).decode("utf-8", "replace")[:80]
                self.warn(at, f"no glog prefix; line skipped: {shown}")
                continue
            try:
                envelope = skim(buf, m.end(), eol) if eol - m.end() > SKIM_BYTES else None
                if envelope is None:
                    envelope = _json(self.decode(buf[m.end():eol]))
            except ValueError as exc:
                self.warn(at, f"metadata is not valid JSON ({exc}); entry skipped")
                continue
            # the payload: the lines after it that start with a tab, and a blank line between two
            # of them (a stutter of the log, skipped as tlparse does)
            payload: str | PayloadSpan = ""
            head = buf[p:p + 2]
            if head[:1] == b"\t" or head == b"\n\t":
                end = PAYLOAD_END.search(buf, p)
                stop = size if end is None else end.start()
                name = entry_name(envelope) if isinstance(envelope, dict) else ""
                if name in LEFT_IN_FILE and stop - p > LAZY_PAYLOAD_BYTES:  # (all of them are HANDLERS')
                    # a graph payload (or the guards), made text and checked by its graph's parse (or
                    # when shown), in the process that parses that graph: left in a big log's file, or
                    # held where it lies in the log's bytes
                    expected = envelope.get("has_payload")
                    expected = expected if isinstance(expected, str) else None
                    payload = (PayloadSpan(self.source, p, stop, expected) if self.source is not None
                               else HeldPayload(buf, p, stop, expected))
                    lineno += newlines(p, stop + 1)
                elif name not in HANDLERS:
                    # an entry nothing here reads (before_post_grad_graph, fx_graph_runnable, side
                    # effects: a quarter of a log's bytes): its payload is neither unescaped, checked
                    # nor decoded, as a graph payload left in the file is not until it is opened
                    lineno += newlines(p, stop + 1)
                else:
                    raw = buf[p:stop + 1]
                    payload = self.payload(raw[:-1] if stop < size else raw, envelope, at)
                    lineno += raw.count(b"\n")
                p = stop + 1
            if not isinstance(envelope, dict):
                self.warn(at, "metadata is not a JSON object; entry skipped")
                continue
            self.json_at = (m.end(), eol)
            self.entry(at, envelope, payload)
        return lineno

    def merge(self, other: _Reader, before: int) -> bool:
        """Take in the reader of the log's next part, whose lines are numbered from 1 (`before`:
        the lines ahead of it), as if this reader had read on; False, taking nothing, where a
        compile id was read for more than its entries' names on both sides. A file its stacks named
        before its own `str` entries did is named from this reader's."""
        both = [key for key in other.compiles if key in self.compiles]
        if any(self.compiles[key].has_more_than_names() and other.compiles[key].has_more_than_names() for key in both):
            return False
        named = {f"<string {n}>": self.strings[n] for n in other.missed if n in self.strings}
        self.warnings.extend(replace(w, line=w.line + before) for w in other.warnings)
        self.strings.update(other.strings)
        for key, b in other.compiles.items():
            b.renumber(before)
            if named and b.stack:
                b.stack = tuple(replace(f, file=named[f.file]) if f.file in named else f for f in b.stack)
            mine = self.compiles.get(key)
            if mine is None:
                self.compiles[key] = b
                continue
            if mine.has_more_than_names() or not b.has_more_than_names():  # b: names (and cache outcomes) only
                mine.artifacts.extend(b.artifacts)
                mine.cache.extend(b.cache)
            else:  # mine: names only, read before the compile's data
                b.first_line = mine.first_line
                b.artifacts[:0], b.cache[:0] = mine.artifacts, mine.cache
                self.compiles[key] = b
        self.entries += other.entries
        self.orphans += other.orphans
        self.events.extend(other.events)
        self.replaced = self.replaced or other.replaced
        return True

    def decode(self, data: bytes) -> str:
        text, replaced = decode(data)
        self.replaced = self.replaced or replaced
        return text

    def payload(self, raw: bytes, envelope, lineno: int) -> str:
        """A payload read now: its text, its MD5 checked against the entry's."""
        data = payload_bytes(raw)
        expected = envelope.get("has_payload") if isinstance(envelope, dict) else None
        if isinstance(expected, str) and md5(data).hexdigest() != expected:
            self.warn(lineno, f"{entry_name(envelope)}: payload does not match its MD5 (cut or altered)")
        return self.decode(data)

    def entry(self, lineno: int, envelope: dict, payload: str) -> None:
        self.entries += 1
        name = entry_name(envelope)
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
        if handler is not None and envelope.get(name) is not SKIMMED:
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
            if isinstance(fn, int) and fn not in self.strings:
                self.missed.add(fn)
            file = self.strings.get(fn, f"<string {fn}>") if isinstance(fn, int) else str(fn)
            out.append(StackFrame(file, int(f.get("line") or 0), str(f.get("name", "")), str(f.get("loc") or "")))
        return tuple(out)

    def finish(self) -> TraceLog:
        if self.replaced:
            self.warnings.insert(0, ParseWarning(self.path, 0, "file is not valid UTF-8; bad bytes were replaced"))
        if self.orphans:
            self.warn(0, f"{self.orphans} payload line(s) after an entry that could not be read; skipped")
        phases = pair_phases(self.events)
        attempts = {(b.frame_id, b.frame_compile_id, b.attempt) for b in self.compiles.values()}
        compiles = tuple(
            b.build(phases, (b.frame_id, b.frame_compile_id, b.attempt + 1) in attempts)
            for key, b in self.compiles.items() if key or b.has_data()
        )
        return TraceLog(self.path, self.rank, compiles, self.entries, tuple(self.warnings))


_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # json.loads' own scanner, called without its wrappers


def _json(text: str):
    """json.loads(text), a microsecond sooner an envelope (35,000 in a 535 MB log): its scanner
    called at once, json.loads itself where the text is anything but one value alone (its error)."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def _newlines(buf):
    """A function counting the newlines of buf[start:end] where they lie: bytes.count, or, in a big
    mapped log, a regex (its count() copies the range a chunk at a time: 0.5 GB for a 535 MB log)."""
    if isinstance(buf, MappedLog):
        findall = NEWLINE.findall
        return lambda start, end: len(findall(buf, start, end))
    return lambda start, end: buf.count(b"\n", start, end)


def _cut(buf) -> int | None:
    """Where the second part of a big log starts: the line of the `dynamo_start` entry nearest its
    middle (None: none but at its start)."""
    middle = len(buf) // 2
    after, before = _entry_line(buf, buf.find, middle), _entry_line(buf, buf.rfind, middle)
    found = [at for at in (after, before) if at]
    return min(found, key=lambda at: abs(at - middle)) if found else None


def _entry_line(buf, find, middle: int) -> int | None:
    """The start of the line of the first `dynamo_start` entry `find` finds from `middle` on (or
    back), or None."""
    lo, hi = (middle, len(buf)) if find == buf.find else (0, middle)
    while (at := find(DYNAMO_START, lo, hi)) >= 0:
        start = buf.rfind(b"\n", 0, at) + 1
        if GLOG_PREFIX_BYTES.fullmatch(buf, start, at):  # an entry's line, not a payload's text
            return start
        lo, hi = (at + 1, hi) if find == buf.find else (lo, at)
    return None


# --------------------------------------------------------------------------- handlers


def _start(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.stack = reader.frames(env[name].get("stack"))


def _stack(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    if not b.stack and isinstance(env.get("stack"), list):
        b.stack = reader.frames(env["stack"])


def _graph(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    b.add_graph_payload(name, payload, lineno)


def _cpp_guards(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    if isinstance(payload, (PayloadSpan, HeldPayload)):  # read when they are shown
        b.guards = PayloadLines(payload)
    else:
        b.guards = tuple(line for line in payload.split("\n") if line.strip())


def _guards_json(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    if not b.guards:  # older torch: a JSON list of guards, each with its code_list
        b.guards = tuple(code for g in json.loads(payload) for code in (g.get("code_list") or [g.get("guard", "")]))


def _metrics(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    metrics = env[name]
    if not isinstance(metrics, dict):
        raise TypeError("metrics are not an object")
    key = "bwd" if name.startswith("bwd_") else name
    start, stop = reader.json_at
    if reader.source is not None and stop - start > LAZY_PAYLOAD_BYTES:  # the index keeps its place in the log
        metrics = LoggedJSON(metrics, PayloadSpan(reader.source, start, stop, None), name)
    b.metrics[key] = metrics


def _recompile(reader: _Reader, b: CompileBuilder, lineno: int, env: dict, payload: str, name: str) -> None:
    try:
        reasons = json.loads(payload)
    except ValueError:  # torch 2.11 logs them as text, though it says "encoding": "json": each
        # reason starts with the compile id it failed ("0/0: ..."), its user stack on the lines after
        reasons = [r.strip("\n") for r in REASON_START.split(payload) if r.strip()]
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
