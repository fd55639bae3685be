"""Small text helpers shared by the parsers: decoding, splitting argument lists, annotations."""

from __future__ import annotations

import re

IDENT = re.compile(r"[A-Za-z_]\w*")
# an identifier that can name an FX node in a call's arguments: not an attribute (`torch.int32`),
# not a keyword's name (`index=0` in `device(type='cuda', index=0)`, beside a node named `index`)
REF = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?!\w|\s*=(?!=))")
# "f32[100, 100]" / "f32[100, 100][100, 1]cuda:0" / "i64[]" / "Sym(s77)"
TENSOR_ANNOTATION = re.compile(r"^(\w+)\[([^\]]*)\](?:\[([^\]]*)\])?(.*)$")
SYM_ANNOTATION = re.compile(r"^Sym\((.*)\)$")
# the glog prefix of a TORCH_TRACE line (`V1123 04:51:28.049000 1614 torch/_dynamo/utils.py:2126] `)
GLOG_PREFIX = re.compile(r"[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^\]]*:\d+\] ")


def decode(data: bytes | memoryview | str) -> tuple[str, bool]:
    """Return the text and whether bytes had to be replaced because they were not UTF-8. `data`
    may be a view of bytes (str() decodes any bytes-like object, without copying it first)."""
    if isinstance(data, str):
        return data, False
    try:
        return str(data, "utf-8"), False
    except UnicodeDecodeError:
        return str(data, "utf-8", "replace"), True


def read_artifact(data: bytes | str, path: str, *, text_checks: bool = True) -> tuple[str, list]:
    """Return an artifact's text and the warnings about the file as a whole: bytes that are not
    UTF-8 and, for the line-oriented files (`text_checks`), an empty file or a last line cut short."""
    from compile_viz.artifacts.model import ParseWarning

    text, replaced = decode(data)
    warnings = []
    if replaced:
        warnings.append(ParseWarning(path, 0, "file is not valid UTF-8; bad bytes were replaced"))
    if not text_checks:
        return text, warnings
    if not text or text.isspace():  # not text.strip(), without copying the file
        warnings.append(ParseWarning(path, 0, "file is empty"))
    elif cut := cut_warning(text):
        warnings.append(ParseWarning(path, text.count("\n") + 1, cut))
    return text, warnings


def read_json_object(data: bytes | str, path: str, what: str) -> tuple[dict, list]:
    """The JSON object a file holds and the warnings about it; {} when it holds none (not JSON, or
    not an object), with a warning that `what` ("mappings") is ignored."""
    import json

    from compile_viz.artifacts.model import ParseWarning

    text, warnings = read_artifact(data, path, text_checks=False)
    try:
        doc = json.loads(text) if text and not text.isspace() else {}
    except ValueError as exc:
        warnings.append(ParseWarning(path, getattr(exc, "lineno", 0), f"not valid JSON ({exc.msg}); {what} ignored"))
        doc = {}
    if not isinstance(doc, dict):
        warnings.append(ParseWarning(path, 0, f"top level is not a JSON object; {what} ignored"))
        doc = {}
    return doc, warnings


def cut_warning(text: str) -> str:
    """Inductor ends every text artifact with a newline; one that does not was cut short.

    Torch 2.0 to 2.7 end the FX dumps with the indentation of an empty last line instead
    (`print_readable` writes "\n        "): a last line of only spaces is a whole file too.
    """
    if not text or text.endswith("\n"):
        return ""
    last = text.rfind("\n") + 1
    if last and text[last:].isspace():
        return ""
    return "file does not end with a newline: it looks cut short"


SPECIAL = re.compile(r"[()\[\]{}'\",\\]")


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on commas outside brackets and quotes; pieces are stripped, empty ones dropped."""
    if sep not in text:
        t = text.strip()
        return [t] if t else []
    if not _HAS_NESTING.search(text):
        return [p for p in (x.strip() for x in text.split(sep)) if p]
    if sep == ",":
        # brackets one or two deep and no quotes (`x, [8, 256], 1`): the pieces a pattern finds are the
        # ones the scanner below finds exactly when, with the commas between them, they are the
        # whole text (a bracket the pattern cannot pair leaves a gap, and the scanner is used)
        pieces = _FLAT_PIECE.findall(text)
        if ",".join(pieces) == text:
            return [p for p in (x.strip() for x in pieces) if p]
    return _split_scan(text, sep)


def _split_scan(text: str, sep: str) -> list[str]:
    """split_top_level by walking the special characters: quotes, brackets at any depth."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    skip_to = -1
    for m in SPECIAL.finditer(text):
        i = m.start()
        if i < skip_to:
            continue
        c = text[i]
        if quote:
            if c == "\\":
                skip_to = i + 2
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


_HAS_NESTING = re.compile(r"[()\[\]{}'\"]")
_INNER = r"[^()\[\]{}'\"\\]*"
# brackets two deep too: a launch's `reinterpret_tensor(buf6, (64, 128), (128, 1), 0)` argument
# (1 launch in 2 of a GPT-2 backward), which the scanner walks character class by class
_INNER2 = rf"(?:[^()\[\]{{}}'\"\\]|\({_INNER}\)|\[{_INNER}\]|\{{{_INNER}\}})*"
_FLAT_PIECE = re.compile(rf"(?:[^,()\[\]{{}}'\"\\]|\({_INNER2}\)|\[{_INNER2}\]|\{{{_INNER2}\}})+")


def matching_paren(text: str, open_at: int) -> int:
    """Return the index of the bracket closing the one at `open_at`, or -1 if the text ends first."""
    depth = 0
    quote = ""
    i = open_at
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def parse_dims(text: str) -> tuple[str, ...]:
    """`"100, s0, 2*s0"` -> ("100", "s0", "2*s0"); symbolic sizes stay text."""
    return tuple(split_top_level(text))


def parse_annotation(ann: str) -> tuple[str | None, tuple[str, ...] | None, tuple[str, ...] | None]:
    """Return (dtype, shape, stride) of an FX type annotation; (None, None, None) if unknown."""
    m = TENSOR_ANNOTATION.match(ann)
    if m:
        stride = parse_dims(m.group(3)) if m.group(3) is not None else None
        return m.group(1), parse_dims(m.group(2)), stride
    m = SYM_ANNOTATION.match(ann)
    if m:
        return "Sym", (m.group(1),), None
    return None, None, None


def names_in(text: str, known: dict[str, object] | set[str], pattern: re.Pattern = IDENT) -> list[str]:
    """Identifiers in `text` (those `pattern` finds) that are keys of `known`, in order of first appearance."""
    seen: dict[str, None] = {}  # a list made this quadratic: a backward graph returns ~1,000 names
    for ident in pattern.findall(text):
        if ident in known:
            seen[ident] = None
    return list(seen)
