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
import hashlib
import mmap
import os
import re

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.text import decode

LAZY_FILE_BYTES = 32 << 20  # a log bigger than this is mapped and indexed, its graph payloads left in it
LAZY_PAYLOAD_BYTES = 4096  # a graph payload bigger than this stays in the file until its graph is opened
RELEASE_BYTES = 64 << 20  # the walk gives back the pages behind it in steps of this size
# a payload line's start, a blank line before it dropped (the log's stutter, skipped as tlparse does)
LINE_START = re.compile(rb"\n\n?\t")


class MappedLog(mmap.mmap):
    """A plain log on disk, mapped read-only: bytes-like for the reader, with its `path`."""

    path: str


def map_log(path: str) -> MappedLog:
    """Map a log (non-empty) read-only."""
    with open(path, "rb") as fh:
        mapped = MappedLog(fh.fileno(), 0, access=mmap.ACCESS_READ)
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
    if isinstance(buf, mmap.mmap) and upto > 0:
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


def payload_bytes(raw: bytes) -> bytes:
    """A payload's bytes from its lines as logged: the leading tab of each line dropped."""
    if raw[:1] == b"\n":
        raw = raw[1:]
    return LINE_START.sub(b"\n", raw)[1:]


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
    intact = len(raw) == span.stop - span.start and (span.md5 is None or hashlib.md5(data).hexdigest() == span.md5)
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
