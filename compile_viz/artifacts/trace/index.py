"""Big TORCH_TRACE logs, read in proportion to what is shown.

A recorded job of many layers, ranks and recompiles writes hundreds of MB per rank, nearly all of
it graph payloads (FX graphs, output code, provenance). A log bigger than LAZY_FILE_BYTES on disk
is mapped (`map_log`), not read: the reader (read.py) walks its entries once, keeps each compile
id's metadata and small payloads, and leaves every graph payload of more than LAZY_PAYLOAD_BYTES in
the file as a `PayloadSpan` (byte offsets). A graph's payloads are read, and their MD5 checked,
when that graph is opened (`Payload.text`). The pages the walk has passed are given back as it
goes, so a log of any size costs a window of it in memory, not its size.
"""

from __future__ import annotations

import functools
import json
import mmap
import os
import re
from collections.abc import Sequence

try:  # CPython's own MD5: 0.5 ms to import against OpenSSL's 3.5 ms (hashlib), 12% slower a MB
    from _md5 import md5
except ImportError:  # a build without it
    from hashlib import md5

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.text import decode

LAZY_FILE_BYTES = 32 << 20  # a log bigger than this is mapped and indexed, its graph payloads left in it
LAZY_PAYLOAD_BYTES = 4096  # a graph payload bigger than this stays in the file until its graph is opened
RELEASE_BYTES = 64 << 20  # the walk gives back the pages behind it in steps of this size
# a payload line's start, a blank line before it dropped (the log's stutter, skipped as tlparse does)
LINE_START = re.compile(rb"\n\n?\t")


COUNT_CHUNK = 16 << 20  # a mapped log's count() of one byte reads this much at a time


class LogMap(mmap.mmap):
    """A plain log on disk, mapped read-only, with its `path`. Every reader of log bytes takes it
    as it takes bytes (`LogBytes`): besides len, indexing, slicing (which gives bytes), find, rfind
    and compiled regexes with pos/endpos, which an mmap has, it answers the bytes methods that
    search without copying the log (count, startswith, endswith, index, rindex) as bytes does. A
    method that makes a new whole (split, replace, decode) is not here: slice what you need first.

    Mapped rather than read, a log is never copied whole into fresh memory (a 30 MB log: 20 ms of
    page faults before its first entry is read); a small one is still walked as one read into
    memory is (its payloads held where they lie). A big one is a MappedLog."""

    path: str

    def count(self, sub, start=None, end=None) -> int:
        """The number of non-overlapping occurrences of `sub` in [start:end], as bytes.count."""
        s, e = _span(len(self), start, end)
        sub = _needle(sub)
        if not sub:
            return e - s + 1 if s <= e and s <= len(self) else 0
        n = 0
        if len(sub) == 1:  # a newline: counted a chunk at a time (no copy of the log, no call per line)
            for a in range(s, e, COUNT_CHUNK):
                n += self[a:min(a + COUNT_CHUNK, e)].count(sub)
            return n
        while (at := self.find(sub, s, e)) >= 0:
            n, s = n + 1, at + len(sub)
        return n

    def startswith(self, prefix, start=None, end=None) -> bool:
        """Whether [start:end] starts with `prefix` (or one of a tuple of them), as bytes.startswith."""
        return self._tail(prefix, start, end, at_end=False)

    def endswith(self, suffix, start=None, end=None) -> bool:
        """Whether [start:end] ends with `suffix` (or one of a tuple of them), as bytes.endswith."""
        return self._tail(suffix, start, end, at_end=True)

    def index(self, sub, start=None, end=None) -> int:
        """find(), raising ValueError when `sub` is not there, as bytes.index."""
        return self._search(self.find, sub, start, end)

    def rindex(self, sub, start=None, end=None) -> int:
        """rfind(), raising ValueError when `sub` is not there, as bytes.rindex."""
        return self._search(self.rfind, sub, start, end)

    def _search(self, find, sub, start, end) -> int:
        s, e = _span(len(self), start, end)
        at = find(_needle(sub), s, e) if s <= len(self) else -1
        if at < 0:
            raise ValueError("subsection not found")
        return at

    def _tail(self, which, start, end, *, at_end: bool) -> bool:
        s, e = _span(len(self), start, end)
        if s > len(self):
            return False
        for w in which if isinstance(which, tuple) else (which,):
            if e - s >= len(w) and self[e - len(w) if at_end else s:e if at_end else s + len(w)] == w:
                return True
        return False


class MappedLog(LogMap):
    """A big log (more than LAZY_FILE_BYTES), mapped: walked once into an index kept on disk, its
    graph payloads left in its file (PayloadSpan) until their graph is opened."""


LogBytes = bytes | LogMap  # what every reader of a log's bytes takes


def _span(size: int, start, end) -> tuple[int, int]:
    """[start:end] of a buffer of `size` bytes as bytes' methods read them: negatives from the end,
    then clipped to the buffer (a start past its end is kept, to say "nothing there")."""
    s = 0 if start is None else start + size if start < 0 else start
    e = size if end is None else end + size if end < 0 else end
    return max(s, 0), max(min(e, size), 0)


def _needle(sub) -> bytes:
    """What bytes' methods search for: bytes, or one byte given as an int."""
    return bytes([sub]) if isinstance(sub, int) else bytes(sub)


def map_log(path: str, kind: type[LogMap] | None = None) -> LogMap:
    """Map a log (non-empty) read-only: a MappedLog (big: indexed), or a LogMap when `kind` says."""
    with open(path, "rb") as fh:
        mapped = (kind or MappedLog)(fh.fileno(), 0, access=mmap.ACCESS_READ)
    mapped.path = os.path.abspath(path)
    return mapped


def wants_map(path: str) -> bool:
    """Whether the log at `path` is big enough to be mapped and indexed rather than read."""
    try:
        return os.path.getsize(path) > LAZY_FILE_BYTES
    except OSError:
        return False


def release(buf, upto: int) -> None:
    """Give back the pages of a mapped log before `upto` (they are read again if touched)."""
    if isinstance(buf, MappedLog) and upto > 0:  # a small log's pages stay: its held payloads are read from them
        try:
            buf.madvise(mmap.MADV_DONTNEED, 0, upto - upto % mmap.PAGESIZE)
        except (OSError, ValueError, AttributeError):
            pass


@frozen(slots=True)
class PayloadSpan:
    """Where a payload lies in a log on disk: the bytes of its tab-indented lines."""

    path: str
    start: int  # the first byte of its first line (the tab, or a blank line before it)
    stop: int  # the newline that ends it
    md5: str | None  # what its entry says the payload's MD5 is (has_payload), when it says

    def read(self) -> tuple[str, bool]:
        return read_span(self)

    def text(self) -> str:
        return read_span(self)[0]

    def intact(self) -> bool:
        return read_span(self)[1]

    def head(self, size: int) -> str:
        return read_span_head(self, size)


def payload_bytes(raw: bytes) -> bytes:
    """A payload's bytes from its lines as logged: the leading tab of each line dropped."""
    if raw[:1] == b"\n":
        raw = raw[1:]
    if b"\n\n" in raw:  # a blank line the log stuttered: the regex drops it too
        return LINE_START.sub(b"\n", raw)[1:]
    return raw.replace(b"\n\t", b"\n")[1:]  # one C pass, 4x the regex's speed


def payload_view(raw: bytes) -> bytes | memoryview:
    """payload_bytes(raw), as a view past the first line's tab where it can be: not copied once
    more by the slice (a 48-layer backward's payloads: 6.4 MB, ~1,600 fresh pages)."""
    if raw[:1] != b"\n" and b"\n\n" not in raw:
        return memoryview(raw.replace(b"\n\t", b"\n"))[1:]
    return payload_bytes(raw)


class HeldPayload:
    """A graph payload of a log read into memory (or mapped and walked whole), kept where it lies
    in the log's bytes and turned into text, its MD5 checked, when its graph is parsed: in whichever
    process parses that graph (`parse --json` shares graphs out between processes), not in the one
    that read the log. Answers `read()` and `head(size)` as a PayloadSpan does."""

    __slots__ = ("buf", "start", "stop", "md5", "replaced", "_text", "_intact")

    def __init__(self, buf: LogBytes, start: int, stop: int, md5: str | None) -> None:
        self.buf, self.start, self.stop, self.md5 = buf, start, stop, md5
        self.replaced = False  # bytes that are not UTF-8 were replaced (known once read)
        self._text: str | None = None
        self._intact: bool | None = None if md5 is not None else True

    @property
    def raw(self) -> bytes:
        """Its lines as logged."""
        return self.buf[self.start:self.stop]

    def read(self) -> tuple[str, bool]:
        """(text, intact): intact is False when its MD5 differs from the one its entry gave. Both
        from one making of its bytes."""
        if self._text is None or self._intact is None:
            data = payload_view(self.raw)
            if self._text is None:
                self._text, self.replaced = decode(data)
            if self._intact is None:
                self._intact = md5(data).hexdigest() == self.md5
        return self._text, self._intact

    def text(self) -> str:
        """Its text, its MD5 not checked yet (`intact`): a forked process that parses its graph
        may leave the check to a process with less to do (cli/parse.py)."""
        if self._text is None:
            self._text, self.replaced = decode(payload_view(self.raw))
        return self._text

    def intact(self) -> bool:
        """False when its MD5 differs from the one its entry gave. Its bytes are made again for it,
        not kept from text(): the process that parses its graph frees them for what it makes next."""
        if self._intact is None:
            self._intact = md5(payload_view(self.raw)).hexdigest() == self.md5
        return self._intact

    def head(self, size: int) -> str:
        """Its first `size` characters or so, without turning the rest into text."""
        if self._text is not None:
            return self._text[:size]
        return decode(payload_bytes(self.buf[self.start:min(self.stop, self.start + 2 * size + 64)]))[0][:size]

    def __reduce__(self):  # pickled as its own bytes, not the log's
        raw = self.raw
        return HeldPayload, (raw, 0, len(raw), self.md5)

    def __eq__(self, other) -> bool:  # the same payload as logged, as PayloadSpans compare by place
        return isinstance(other, HeldPayload) and self.md5 == other.md5 and self.raw == other.raw

    def __hash__(self) -> int:
        return hash((self.raw, self.md5))


@functools.lru_cache(maxsize=32)
def read_span(span: PayloadSpan) -> tuple[str, bool]:
    """(text, intact) of a payload left in its log: intact is False when its MD5 differs from the
    one its entry gave, or the file changed under it. The last few are kept: a graph's parse reads
    each of its payloads more than once."""
    try:
        with open(span.path, "rb") as fh:
            fh.seek(span.start)
            raw = fh.read(span.stop - span.start)
    except OSError:
        return "", False
    data = payload_bytes(raw)
    text, _ = decode(data)
    intact = len(raw) == span.stop - span.start and (span.md5 is None or md5(data).hexdigest() == span.md5)
    return text, intact


def read_span_head(span: PayloadSpan, size: int) -> str:
    """The payload's first `size` characters or so (an output code's `# AOT ID:` line), without
    reading the rest of it."""
    try:
        with open(span.path, "rb") as fh:
            fh.seek(span.start)
            raw = fh.read(min(span.stop - span.start, 2 * size + 64))
    except OSError:
        return ""
    return decode(payload_bytes(raw))[0][:size]


class PayloadLines(Sequence):
    """The non-blank lines of a payload left in its log (a compile's guards: 2.6 MB a compile of a
    48-layer model), read from the file when first asked for, or of one held in memory (HeldPayload:
    read when first asked for, by `parse --json` while another process parses a graph). It reads
    as the tuple of those lines and is equal to it; pickled (and kept in the index) as its span."""

    __slots__ = ("span", "_lines")

    def __init__(self, span: PayloadSpan | HeldPayload) -> None:
        self.span = span
        self._lines: tuple[str, ...] | None = None

    @property
    def lines(self) -> tuple[str, ...]:
        if self._lines is None:
            # no MD5: shown, not checked; the blank lines dropped by a filter in C (8,700 lines a compile at 48 layers)
            self._lines = tuple(filter(str.strip, self.span.text().split("\n")))
        return self._lines

    def __bool__(self) -> bool:  # without reading it: a logged payload is never empty
        return bool(self._lines) if self._lines is not None else self.span.stop > self.span.start

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, i):
        return self.lines[i]

    def __iter__(self):
        return iter(self.lines)

    def __contains__(self, x) -> bool:
        return x in self.lines

    def __eq__(self, other) -> bool:
        if isinstance(other, PayloadLines):
            other = other.lines
        return self.lines == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.lines)

    def __repr__(self) -> str:
        return repr(self.lines)

    def __reduce__(self):
        return PayloadLines, (self.span,)


class LoggedJSON(dict):
    """A JSON object as an entry logged it (a compile's metrics: 2.5 MB a compile of a 48-layer
    model, most of it `inductor_provenance`), with where that entry's JSON lies in its log
    (`span`, its MD5 None) and the envelope's key that holds it: the index keeps that place, and
    reads the object from the log again when loaded, instead of writing it out."""

    __slots__ = ("span", "key")

    def __init__(self, value: dict, span: PayloadSpan, key: str) -> None:
        super().__init__(value)
        self.span = span
        self.key = key

    def __reduce__(self):
        return LoggedJSON, (dict(self), self.span, self.key)


def read_logged_json(span: PayloadSpan, key: str) -> LoggedJSON | None:
    """The object under `key` of the envelope JSON at `span` of its log, or None when the file no
    longer holds it there."""

    try:
        with open(span.path, "rb") as fh:
            fh.seek(span.start)
            raw = fh.read(span.stop - span.start)
        value = json.loads(decode(raw)[0])[key]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return LoggedJSON(value, span, key) if isinstance(value, dict) else None
