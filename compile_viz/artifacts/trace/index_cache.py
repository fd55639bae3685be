"""The index of a big TORCH_TRACE log, kept between processes: once a log is read (trace/read.py,
graph payloads left in the file), its TraceLog is written as JSON under the user's cache folder
($XDG_CACHE_HOME or ~/.cache, then compile_viz/trace-index/), keyed by the log's absolute path and
checked against its size and modification time. Opening the run again reads that JSON instead of
the log: the Viewer's first view of a graph then costs the graph, not the whole log. The key is
the file itself (device, inode, size, modification time), not its name: a run imported as a hard
link to the user's log (trace_import) finds the index the import made, and payloads are read from
wherever the log is opened from.

The JSON names only the classes of trace/model.py (and ParseWarning, StackFrame, PayloadSpan): a
file that names another, or does not match, is ignored and the log is read again. What a mapped
log left in its file stays there: a graph payload and a compile's guards (PayloadLines) are kept as
their byte spans, a big compilation metrics object (LoggedJSON) as the span of its entry's JSON,
read and parsed again when the index is loaded; so a 535 MB log's index is kilobytes, not the
93 MB of its guards and metrics. Stdlib only.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile

from compile_viz.artifacts.model import ParseWarning, StackFrame
from compile_viz.artifacts.trace.index import (
    HeldPayload,
    LoggedJSON,
    PayloadLines,
    PayloadSpan,
    read_logged_json,
)
from compile_viz.artifacts.trace.model import CompileRecord, Payload, Phase, TraceGraph, TraceLog

SCHEMA = 3  # 2: guards and big metrics kept as spans of the log; 3: TUPLES
KEPT = 64  # indexes kept in the cache folder, the most recent
CLASSES = {c.__name__: c for c in (TraceLog, CompileRecord, TraceGraph, Payload, PayloadSpan, Phase, StackFrame,
                                   ParseWarning)}
# tags no key of a logged metrics dict starts with; DICT: a dict whose values are tagged one by one;
# TUPLES: a tuple of tuples of plain values (a compile's entries: (name, line), 2,000 a compile)
CLS, TUPLE, RAW, DICT, TUPLES = "\0c", "\0t", "\0j", "\0d", "\0T"


def cache_dir() -> str:
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "compile_viz",
                        "trace-index")


def _key(path: str) -> tuple[str, dict] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    fields = {"schema": SCHEMA, "dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    name = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32] + ".json"
    return os.path.join(cache_dir(), name), fields


def load(path: str, name: str) -> TraceLog | None:
    """The cached TraceLog of the log at `path`, named `name`, or None when there is none that
    matches the file as it is now."""
    key = _key(path)
    if key is None:
        return None
    try:
        with open(key[0], encoding="utf-8") as fh:
            data = json.load(fh, object_hook=functools.partial(_decode, path=os.path.abspath(path)))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    log = data.get("log") if isinstance(data, dict) else None
    if data.get("key") != key[1] or not isinstance(log, TraceLog):
        return None
    if log.path != name:  # the same file under another name (the run it was imported into)
        log = dataclasses.replace(log, path=name, warnings=tuple(
            dataclasses.replace(w, file=name) if w.file == log.path else w for w in log.warnings))
    return log


def save(path: str, log: TraceLog) -> None:
    """Keep the TraceLog of the log at `path`; nothing when the cache folder cannot be written."""
    key = _key(path)
    if key is None:
        return
    try:
        os.makedirs(cache_dir(), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir(), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            # one write of the C encoder's text: json.dump runs the pure-Python encoder (a 535 MB
            # log's index: ~2 s of a 2-core machine's import)
            fh.write(_ENCODE({"key": key[1], "log": _encode(log)}))
        os.replace(tmp, key[0])
        _prune()
    except (OSError, TypeError, ValueError):
        pass


def _prune() -> None:
    """Keep the KEPT most recently written indexes (about 10 MB each for a 500 MB log)."""
    entries = sorted(os.scandir(cache_dir()), key=lambda e: e.stat().st_mtime_ns, reverse=True)
    for e in entries[KEPT:]:
        os.unlink(e.path)


_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_PLAIN = (str, int, float, bool, type(None))
_FIELDS = {c: tuple(f.name for f in dataclasses.fields(c)) for c in CLASSES.values()}  # in __init__'s order


def _encode(x):
    t = type(x)
    if t in _PLAIN:  # most of an index: names, line numbers, guards
        return x
    if t is PayloadSpan:  # read from wherever the log is opened from
        return {CLS: "PayloadSpan", "v": ["", x.start, x.stop, x.md5]}
    if t is PayloadLines:
        if type(x.span) is HeldPayload:  # a log read whole (its line ends made plain): the lines
            return {TUPLE: list(x.lines)}
        return {CLS: "PayloadLines", "v": ["", x.span.start, x.span.stop, x.span.md5]}
    if t is LoggedJSON:
        return {CLS: "LoggedJSON", "v": ["", x.span.start, x.span.stop, x.key]}
    if t is tuple:
        if x and all(type(v) is tuple and all(type(e) in _PLAIN for e in v) for v in x):
            return {TUPLES: x}  # the C encoder writes each inner tuple as a list
        return {TUPLE: [v if type(v) in _PLAIN else _encode(v) for v in x]}
    if t is Payload and type(x.span) is HeldPayload:  # a log read whole (its line ends made plain): its text
        x = dataclasses.replace(x, body=x.text, span=None)
    names = _FIELDS.get(t)
    if names is not None:
        return {CLS: t.__name__, "v": [_encode(getattr(x, name)) for name in names]}
    if dataclasses.is_dataclass(x):
        return {CLS: t.__name__, "v": [_encode(getattr(x, f.name)) for f in dataclasses.fields(x)]}
    if isinstance(x, tuple):
        return {TUPLE: [_encode(v) for v in x]}
    if isinstance(x, dict):  # compilation metrics, as logged: JSON already, or where they lie in the log
        if any(type(v) is LoggedJSON for v in x.values()):
            return {DICT: [[k, _encode(v) if type(v) is LoggedJSON else {RAW: v}] for k, v in x.items()]}
        return {RAW: x}
    return x


def _decode(d: dict, path: str):
    if CLS in d:
        if d[CLS] == "PayloadSpan":
            return PayloadSpan(path, *d["v"][1:])
        if d[CLS] == "PayloadLines":
            return PayloadLines(PayloadSpan(path, *d["v"][1:]))
        if d[CLS] == "LoggedJSON":
            _, start, stop, key = d["v"]
            logged = read_logged_json(PayloadSpan(path, start, stop, None), key)
            if logged is None:
                raise ValueError("the log no longer holds the metrics the index points to")
            return logged
        return CLASSES[d[CLS]](*d["v"])
    if TUPLE in d:
        return tuple(d[TUPLE])
    if TUPLES in d:
        return tuple(map(tuple, d[TUPLES]))
    if RAW in d:
        return d[RAW]
    if DICT in d:
        return dict(d[DICT])
    return d
