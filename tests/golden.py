"""Golden dumps: every field of a parse and of its links, as JSON, for one capture.

The dump walks the frozen dataclasses generically (every field, deferred ones read), so a field
added later is in the next refresh without a change here. Long texts (a kernel's source, a
launch's argument list) are kept as a length and a SHA-256: a change to them still shows, and
the goldens stay small. The `compile-viz parse --json` output of the capture is kept as the
SHA-256 of its values (in one fixed layout) too, so that a refactor can show it leaves that output
value for value as it was.

Refresh: `pytest tests/test_goldens.py --update-goldens`, then read the diff before committing.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

GOLDENS = Path(__file__).resolve().parent / "goldens"
LONG_TEXT = 160


def _text(s: str):
    if len(s) <= LONG_TEXT:
        return s
    return {"len": len(s), "sha256": hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()}


def dump(obj):
    """A JSON-ready copy of `obj`: dataclasses as {field: value}, tuples as lists."""
    if obj is None or isinstance(obj, (bool, int, float)):
        return obj
    if isinstance(obj, str):
        return _text(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: dump(getattr(obj, f.name)) for f in dataclasses.fields(obj) if not f.name.startswith("_")}
    if isinstance(obj, dict):
        return {str(k) if not isinstance(k, tuple) else "|".join(map(str, k)): dump(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [dump(x) for x in items]
    return repr(obj)


def parse_json_sha(source: Path) -> str:
    """SHA-256 of the JSON values `compile-viz parse --json SOURCE` prints, laid out with indent=1
    (the layout it printed until it became compact, so the SHAs kept from then still hold)."""
    from compile_viz.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        main(["parse", "--json", str(source)])
    text = json.dumps(json.loads(out.getvalue()), indent=1) + "\n"
    return hashlib.sha256(text.replace(str(source), "<SOURCE>").encode()).hexdigest()


def golden_of(source: Path) -> dict:
    """The golden dump of one capture (a folder or a zip)."""
    from compile_viz.artifacts import parse_path
    from compile_viz.cli.parse_json import links_json
    from compile_viz.linking import build_index

    parsed = parse_path(str(source))
    graphs = []
    for g in parsed.graphs:
        graphs.append({"parse": dump(g), "links": dump(links_json(build_index(g)))})
    return {
        "graphs": graphs,
        "graph_breaks": dump(parsed.graph_breaks),
        "parse_json_sha256": parse_json_sha(source),
    }


def golden_path(source: Path) -> Path:
    return GOLDENS / f"{source.parent.name}__{source.name.removesuffix('.zip')}.json.gz"


def write_golden(source: Path, data: dict) -> None:
    GOLDENS.mkdir(exist_ok=True)
    text = json.dumps(data, indent=0, sort_keys=True)
    with gzip.GzipFile(golden_path(source), "wb", mtime=0) as fh:  # mtime 0: same bytes for the same dump
        fh.write(text.encode())


def read_golden(source: Path) -> dict | None:
    path = golden_path(source)
    if not path.exists():
        return None
    return json.loads(gzip.decompress(path.read_bytes()))


def first_difference(a, b, path: str = "$") -> str | None:
    """Where two dumps first differ, as a path and the two values; None when equal."""
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'the golden' if k in a else 'the parse'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):  # lengths compared after
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{path}: {len(a)} items != {len(b)} items"
    return None if a == b else f"{path}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"
