"""Parse `fx_graph_readable.py` (AOT graph) and `fx_graph_transformed.py` (post-grad graph).

The files are what `GraphModule.print_readable()` writes: one `class` per graph (nested classes
for sub-graphs), a `def forward(self, <inputs>)`, one statement per node, `# File:` comments
carrying the user's source line. We read them line by line; nothing is imported or executed.
The usual node statement (`name: "ann" = callee(args);  x = None`, or `= parent[i]`) is read
with one pattern, `NODE_LINE`; every other line goes through `_State.feed`. A node's constant
arguments are taken at once where a comparison tells them (most nodes), else split out on first access.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compile_viz.artifacts.model import FxGraph, FxNode, ParseWarning, SourceLocation
from compile_viz.artifacts.text import REF, names_in, parse_annotation, read_artifact, split_top_level

CLASS_LINE = re.compile(r"^(\s*)class (\S+?)\((?:torch\.nn\.Module|torch\.fx\.GraphModule|\w[\w.]*)\):\s*$")
FORWARD_LINE = re.compile(r"^(\s*)def forward\(self(?:, )?(.*)\):\s*$")
FILE_COMMENT = re.compile(r"^# File: (.*?):(\d+) in (.*?)(?:, code: (.*))?$")
NO_STACK_COMMENT = "# No stacktrace found"
# Annotations are quoted (`x: "f32[4, 4]" = ...`) since torch 2.1; torch 2.0 wrote them bare
# (`x: f32[4, 4] = ...`, `s: Sym(s0) = ...`). Both read into the same group.
_ANN = r'(?:: (?:"([^"]*)"|(\w+\[[^\]=]*\](?:\[[^\]=]*\])?|Sym\([^)=]*\))))?'
STATEMENT = re.compile(rf"^(\w+){_ANN} = (.*)$")
CLEANUP_TAIL = re.compile(r";\s+(?:\w+ = )+None\s*$")
CALL_EXPR = re.compile(r"^([\w.]+)\((.*)\)$", re.S)
GETITEM_EXPR = re.compile(r"^(\w+)\[(.+)\]$")
GET_ATTR_EXPR = re.compile(r"^self\.([\w.]+)$")
GETATTR_CALL = re.compile(r'getattr\(([\w.]+), "(\w+)"\)')
RETURN_LINE = re.compile(r"^return\b ?(.*)$")
# AOTInductor's graphs (torch.export, then Inductor): `def forward(self):` declares its inputs in the body,
# `arg2_1: "f32[8, 64]";`, then unflattens them: `arg2_1, = fx_pytree.tree_flatten_spec([], self._in_spec)`
DECLARED_INPUT = re.compile(r'(\w+): "([^"\\]*)";')
DECLARED_INPUTS = re.compile(rf"^(?:{DECLARED_INPUT.pattern}\s*)+$")
FLATTEN_INPUTS = re.compile(r"^[\w, ]+ = fx_pytree\.tree_flatten_spec\(")
PARAM = re.compile(r'(\w+)(?:: "([^"\\]*)")?')
PARAMS = re.compile(rf"{PARAM.pattern}(?:, {PARAM.pattern})*")
# PARAMS without its groups, to tell the shape only: a repeat holding no group keeps no marks per turn
PARAMS_SHAPE = re.compile(r'\w+(?:: "[^"\\]*")?(?:, \w+(?:: "[^"\\]*")?)*')
# One indented node statement whose right-hand side is a call or a getitem, read exactly as
# STATEMENT, CLEANUP_TAIL and _classify read it; lines that `feed` would treat otherwise (a
# name starting with "return", "class ") and any other shape are left to `feed`.
NODE_LINE = re.compile(
    rf"[ \t]+(?!return|class )(\w+){_ANN} = (?:([\w.]+)\((.*)\)|(\w+)\[(.+)\])(?:;  (?:\w+ = )+None)?$"
)
# NODE_LINE, with each closing bracket inside its group (`(.*\))`, not `(.*)\)`): the same lines
# match, and the match backs off to the last ")" by a fast scan, not one step of the tail per character.
NODE_FAST = re.compile(
    rf"[ \t]+(?!return|class )(\w+){_ANN} = (?:([\w.]+)\((.*\))|(\w+)\[(.+\]))(?:;  (?:\w+ = )+None)?$"
)
# The ASCII twins of NODE_FAST and text.REF, for ASCII texts: there `\w` matches what it matches
# without re.ASCII, and `\s` is spelled out (Unicode counts \x1c-\x1f as space, re.ASCII does not).
# NODE_FAST_ASCII reads the same lines as NODE_FAST with a quarter less work per line: `\w`
# spelled as ranges (a set is tested against a bitmap, where `\w` runs the whole matcher per
# character); each optional group an alternative with an empty last branch (`(?:x|)` for `(?:x)?`,
# which a repeat with its own bookkeeping reads); possessive repeats (`++`) where giving back cannot
# help: indentation and the name end before a character they cannot hold, and the units of the
# cleanup tail (`x = y = ` before `None`) cannot end where `None` ends the line.
_W = "[0-9A-Za-z_]"
NODE_FAST_ASCII = re.compile(
    rf"[ \t]++(?!return|class )({_W}++)"
    rf'(?:: "([^"]*)"|: ({_W}+\[[^\]=]*\](?:\[[^\]=]*\]|)|Sym\([^)=]*\))|) = '
    rf"(?:([0-9A-Za-z_.]+)\((.*\))|({_W}+)\[(.+\]))(?:;  (?:{_W}++ = )++None|)$",
    re.ASCII,
)
# PARAMS_SHAPE and PARAM for an ASCII signature, in the manner of NODE_FAST_ASCII; each param of a
# text of that shape follows ", ", so that with ", " put in front each match starts where the last ended.
PARAMS_SHAPE_ASCII = re.compile(rf'{_W}++(?:: "[^"\\]*+"|)(?:, {_W}++(?:: "[^"\\]*+"|))*+', re.ASCII)
PARAM_AFTER_COMMA_ASCII = re.compile(rf', ({_W}++)(?:: "([^"\\]*+)"|)', re.ASCII)
REF_ASCII = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?!\w|[\t-\r\x1c-\x1f ]*=(?!=))", re.ASCII)
# the characters that cannot start an identifier: a piece made of them holds no node name
_NOT_NAME_START = "".join(chr(c) for c in range(128) if not (chr(c).isalpha() or chr(c) == "_"))


def parse_fx_graph(data: bytes | str, *, path: str) -> FxGraph:
    """Return the graph of an FX `print_readable` file; never raises on content."""
    text, warnings = read_artifact(data, path)
    if not text or text.isspace():
        return FxGraph(path, "", (), (), (), (), (), tuple(warnings))
    state = _State(path, warnings)
    state.run(text)
    return state.finish()


class _State:
    """Line-by-line builder; `graph` is "" for the top-level forward, else a sub-graph's class."""

    def __init__(self, path: str, warnings: list[ParseWarning]) -> None:
        self.path = path
        self.warnings = warnings
        self.class_name = ""
        self.classes: list[tuple[int, str]] = []  # (indent, name) stack
        self.graph: str | None = None  # None until the first forward
        # graph -> names defined so far, each mapped to itself: a node's args are those strings, not copies
        self.known: dict[str, dict[str, str]] = {}
        self.nodes: list[FxNode] = []
        self.sub_nodes: list[FxNode] = []
        self.subgraphs: list[str] = []
        self.inputs: list[str] = []
        self.outputs: list[str | None] = []
        self.source: SourceLocation | None = None
        self.saw_return = False

    def run(self, text: str) -> None:
        """Read every line of `text` into the graph; returns nothing (see `finish`)."""
        # An ASCII text (nearly all) is read with the ASCII twins of the patterns: the same matches
        # there, without a Unicode table lookup per `\w`.
        ascii_text = text.isascii()
        match = (NODE_FAST_ASCII if ascii_text else NODE_FAST).match
        findall = (REF_ASCII if ascii_text else REF).findall
        seen, comment_lines = _SEEN_LINES, _COMMENT_LINES
        # self.graph, its known names (and their lookups), its node list, self.source
        graph = known = contains = known_get = into = source = None
        new = object.__new__
        for lineno, raw in enumerate(_lines(text), 1):
            if not raw:  # a third of the lines that are not nodes; feed() passes them over too
                continue
            parts = seen.get(raw) if graph is not None else None
            # a line read before stands for the same node where the names it uses are known here
            # and the identifiers it holds that are not nodes (`True`) are not: its args are then the same
            if parts is not None and (not all(map(contains, parts[5])) or parts[6] and any(map(contains, parts[6]))):
                parts = None
            if parts is None:
                if graph is not None and (loc := comment_lines.get(raw)) is not None:
                    source = self.source = loc  # a `# File:` line seen before: the backward repeats them
                    continue
                m = match(raw)
                if m is None or graph is None:
                    if graph is not None and (stripped := raw.lstrip()).startswith("# File: "):
                        # what feed() does with the usual comment (a sixth of the lines), without the call
                        if (loc := _source_location(stripped.rstrip())) is not None:
                            _remember(comment_lines, raw, loc)
                        source = self.source = loc or source
                        continue
                    self.feed(lineno, raw)
                    source = self.source
                    if self.graph is not None and self.graph != graph:
                        graph = self.graph
                        known = self.known.setdefault(graph, {})
                        contains, known_get = known.__contains__, known.get
                        into = self.nodes if graph == "" else self.sub_nodes
                    continue
                parts = _node_parts(m, findall, ascii_text, known_get)
                if len(seen) >= _SEEN_LINES_MAX:  # bounded: the lines of the last graphs read are kept
                    seen.clear()
                seen[raw] = parts
            name, target, dtype, shape, stride, args, _, key, constants = parts
            # deferred(FxNode, ...) without the call, each field stored into the node's own attribute
            # dict, not set as a dict built from a literal: an attribute dict shares its keys with the
            # class's other instances and holds the values alone, well under half the memory (whose
            # pages a fresh process pays for), and its fields keep the order they are stored in
            node = new(FxNode)
            d = node.__dict__
            d["name"] = name
            d["op"] = "call_function"
            d["target"] = target
            d["dtype"] = dtype
            d["shape"] = shape
            d["stride"] = stride
            d["args"] = args
            d["source"] = source
            d["line"] = lineno
            d["subgraph"] = graph
            d[key] = constants
            into.append(node)
            known[name] = name

    def feed(self, lineno: int, raw: str) -> None:
        stripped = raw.strip()
        if not stripped:
            return
        if stripped.startswith("#"):
            self._comment(stripped)
            return
        if stripped.startswith("class "):
            self._class(lineno, raw)
            return
        if stripped.startswith("def forward"):
            self._forward(lineno, raw)
            return
        if self.graph is None:
            self.warnings.append(ParseWarning(self.path, lineno, f"not understood before forward(): {stripped[:120]}"))
            return
        if stripped.startswith("return") and RETURN_LINE.match(stripped):
            self._return(lineno, stripped)
            return
        self._statement(lineno, stripped)

    def _comment(self, stripped: str) -> None:
        if stripped.startswith("# File: "):
            source = _source_location(stripped)
            if source is not None:
                self.source = source
        elif stripped.startswith(NO_STACK_COMMENT):
            self.source = None

    def _class(self, lineno: int, raw: str) -> None:
        m = CLASS_LINE.match(raw)
        if not m:
            self.warnings.append(ParseWarning(self.path, lineno, f"class line not understood: {raw.strip()[:120]}"))
            return
        indent = len(m.group(1))
        while self.classes and self.classes[-1][0] >= indent:
            self.classes.pop()
        self.classes.append((indent, m.group(2)))
        if not self.class_name:
            self.class_name = m.group(2)

    def _forward(self, lineno: int, raw: str) -> None:
        m = FORWARD_LINE.match(raw)
        if not m:
            self.warnings.append(ParseWarning(self.path, lineno, f"forward() signature not understood: {raw.strip()[:120]}"))
            return
        indent = len(m.group(1))
        while self.classes and self.classes[-1][0] >= indent:
            self.classes.pop()
        owner = self.classes[-1][1] if self.classes else ""
        self.graph = "" if owner in ("", self.class_name) else owner
        if self.graph and self.graph not in self.subgraphs:
            self.subgraphs.append(self.graph)
        self.source = None
        params = m.group(2)
        if params.isascii() and PARAMS_SHAPE_ASCII.fullmatch(params):  # a backward's inputs: a thousand
            pieces = PARAM_AFTER_COMMA_ASCII.findall(", " + params)
        elif PARAMS_SHAPE.fullmatch(params):  # `name: "ann"` pieces with no quote or backslash inside
            pieces = PARAM.findall(params)
        else:
            pieces = []
            for param in split_top_level(params):
                name, _, ann = param.partition(":")
                pieces.append((name.strip().split("=")[0].strip(), ann.strip().strip('"')))
        # what _add(_fx_node(...)) does, inline: a graph's inputs are a fifth of its nodes
        graph = self.graph
        into, known = self.nodes if graph == "" else self.sub_nodes, self.known.setdefault(graph, {})
        new, annotations = object.__new__, _ANNOTATIONS
        for name, ann in pieces:
            if not name or name.startswith("*"):
                continue
            dtype, shape, stride = annotations.get(ann) or _annotation(ann)
            node = new(FxNode)
            d = node.__dict__  # as in run(), in the order of FxNode's fields
            d["name"] = name
            d["op"] = "placeholder"
            d["target"] = ""
            d["dtype"] = dtype
            d["shape"] = shape
            d["stride"] = stride
            d["args"] = ()
            d["constants"] = ()
            d["source"] = None
            d["line"] = lineno
            d["subgraph"] = graph
            into.append(node)
            known[name] = name
        if graph == "":
            self.inputs.extend([name for name, _ in pieces if name and not name.startswith("*")])

    def _return(self, lineno: int, stripped: str) -> None:
        expr = RETURN_LINE.match(stripped).group(1).strip()
        known = self.known.setdefault(self.graph, {})
        used = names_in(expr, known)
        node = FxNode("output", "output", "", None, None, None, tuple(used), (), self.source, lineno, self.graph)
        self._add(node, register=False)
        if self.graph == "":
            inner = expr[1:-1] if expr[:1] in "([" and expr[-1:] in ")]" else expr
            self.outputs = [None if p == "None" else p for p in split_top_level(inner)]
            self.saw_return = True

    def _statement(self, lineno: int, stripped: str) -> None:
        m = STATEMENT.match(stripped)
        if not m and DECLARED_INPUTS.match(stripped):
            for name, ann in DECLARED_INPUT.findall(stripped):
                dtype, shape, stride = _annotation(ann)
                self._add(FxNode(name, "placeholder", "", dtype, shape, stride, (), (), None, lineno, self.graph))
                if self.graph == "":
                    self.inputs.append(name)
            return
        if not m and FLATTEN_INPUTS.match(stripped):
            return
        if not m:
            self.warnings.append(ParseWarning(self.path, lineno, f"statement not understood: {stripped[:120]}"))
            return
        name, ann, expr = m.group(1), m.group(2) or m.group(3), m.group(4)
        tail = CLEANUP_TAIL.search(expr)
        if tail:
            expr = expr[: tail.start()]
        dtype, shape, stride = parse_annotation(ann) if ann else (None, None, None)
        op, target, arg_text = _classify(expr)
        known = self.known.setdefault(self.graph, {})
        args = tuple(names_in(arg_text, known, REF))
        constants = tuple(p for p in split_top_level(arg_text) if not names_in(p, known, REF)) if op != "get_attr" else ()
        self._add(FxNode(name, op, target, dtype, shape, stride, args, constants, self.source, lineno, self.graph))

    def _add(self, node: FxNode, register: bool = True) -> None:
        (self.nodes if node.subgraph == "" else self.sub_nodes).append(node)
        if register:
            self.known.setdefault(node.subgraph, {})[node.name] = node.name

    def finish(self) -> FxGraph:
        if self.graph is None:
            self.warnings.append(ParseWarning(self.path, 0, "no forward() found: file is cut or not an FX graph"))
        elif not self.saw_return:
            self.warnings.append(ParseWarning(self.path, 0, "no return statement: file looks cut short"))
        return FxGraph(
            self.path,
            self.class_name,
            tuple(self.nodes),
            tuple(self.inputs),
            tuple(self.outputs),
            tuple(self.subgraphs),
            tuple(self.sub_nodes),
            tuple(self.warnings),
        )


# A node line's reading (_node_parts), which the line alone decides, not the names known before it:
# the post-grad graph repeats most of its AOT graph's lines (gpt2_deep: 4 in 5), and both are read in
# one process (one job a graph), so the second reads 4 lines in 5 from here. Emptied when full.
_SEEN_LINES: dict[str, tuple] = {}
_SEEN_LINES_MAX = 1 << 14
# `# File:` lines read before, each with its SourceLocation: a backward graph repeats each one per layer.
_COMMENT_LINES: dict[str, SourceLocation] = {}
# A node's target, by its callee as written: the same few dozen targets, one string each.
_TARGETS: dict[str, str] = {}
# The text after a node's first argument, with the constants it holds where it holds no letter or `_`
# (`[8, 64], 1`), else False: a few dozen tails recur.
_TAILS: dict[str, tuple[str, ...] | bool] = {}


def _remember(memo: dict, key: str, value):
    """memo[key] = value, the memo emptied first when full (bounded as _SEEN_LINES: what the last
    graphs read hold is kept); returns value."""
    if len(memo) >= _SEEN_LINES_MAX:
        memo.clear()
    memo[key] = value
    return value


_NO_ANNOTATION = (None, None, None)


def _node_parts(m: re.Match, findall, ascii_text: bool, known_get) -> tuple:
    """Return what a NODE_FAST match tells, read where `known_get` gives the names known before it:
    (name, target, dtype, shape, stride, args, the other identifiers in its argument text (`True`),
    then its constants field as `_constants_field` gives it). `findall` is REF's (or its ASCII twin's,
    for an ASCII text)."""
    name, ann, bare, callee, arg_text, parent, index = m.groups()
    if callee is not None:  # the groups end with the closing bracket: see NODE_FAST
        target = _TARGETS.get(callee)
        if target is None:
            target = _remember(_TARGETS, callee, callee[10:] if callee.startswith("torch.ops.") else callee)
        arg_text = arg_text[:-1]
    else:
        target, arg_text = "operator.getitem", f"{parent}, {index[:-1]}"
    ann = ann or bare
    ann_parts = _ANNOTATIONS.get(ann) if ann else _NO_ANNOTATION
    dtype, shape, stride = ann_parts if ann_parts is not None else _annotation(ann)
    if ascii_text:
        # the usual arguments (gpt2_deep: 9 nodes in 10), `f(a, b)` and `f(a, <no letter or _>)` with
        # a and b known here, read without the pieces below: what they find there (see _constants_field)
        first, _, rest = arg_text.partition(", ")
        a = known_get(first)
        if a is not None and first.isidentifier():
            if rest.isidentifier():
                b = known_get(rest)
                if b is not None and b != a:
                    return (name, target, dtype, shape, stride, (a, b), (), "constants", ())
            else:
                constants = _TAILS.get(rest)
                if constants is None:
                    constants = _remember(_TAILS, rest, False if rest.lstrip(_NOT_NAME_START) else _split_constants(rest))
                if constants is not False:
                    return (name, target, dtype, shape, stride, (a,), (), "constants", constants)
    # REF.findall(arg_text) without REF where the text is ASCII and each top-level ", " piece is a
    # bare name or holds no letter or `_` (`mul(a, 2)`, `view(x, [8, 64])`): there a bare piece is
    # one identifier with no `.`, quote or `=` beside it, and a piece without a letter or `_` holds none.
    refs = None
    if ascii_text:
        refs = []
        for piece in arg_text.split(", "):
            if piece.isidentifier():
                refs.append(piece)
            elif piece.lstrip(_NOT_NAME_START):
                refs = None
                break
    if refs is None:
        refs = findall(arg_text)
    refs = dict.fromkeys(refs) if len(refs) > 1 else refs
    # the known names' own strings, so that the pieces of arg_text found here are let go
    args = tuple(map(known_get, refs))
    others = ()
    if not all(args):  # an identifier that names no node known here (`True`)
        others = tuple([r for r, a in zip(refs, args, strict=True) if a is None])
        args = tuple([a for a in args if a is not None])
    return (name, target, dtype, shape, stride, args, others, *_constants_field(arg_text, args))


def _constants_field(arg_text: str, args: tuple[str, ...]) -> tuple[str, object]:
    """Return ("constants", the node's constants) where a comparison tells them (two nodes in three:
    `mul(a, b)`, or `sum(a, [1], True)` whose tail recurs), else ("_fill", how to find them on first
    access: _constants)."""
    if arg_text == ", ".join(args):
        return "constants", ()
    if len(args) == 1 and arg_text.startswith(args[0] + ", ") and args[0] not in (rest := arg_text[len(args[0]) + 2:]):
        return "constants", _split_constants(rest)
    return "_fill", (_constants, (arg_text, args))


def _classify(expr: str) -> tuple[str, str, str]:
    """Return (op, target, argument text) of a node's right-hand side."""
    if expr.startswith("getattr(self"):  # an attribute named by a number: getattr(self.h, "0").attn.weight
        flat = expr
        while m := GETATTR_CALL.search(flat):
            flat = f"{flat[:m.start()]}{m.group(1)}.{m.group(2)}{flat[m.end():]}"
        if m := GET_ATTR_EXPR.match(flat):
            return "get_attr", m.group(1), ""
    m = CALL_EXPR.match(expr)
    if m:
        callee = m.group(1)
        if callee.startswith("torch.ops."):
            callee = callee[len("torch.ops.") :]
        return "call_function", callee, m.group(2)
    m = GETITEM_EXPR.match(expr)
    if m:
        return "call_function", "operator.getitem", f"{m.group(1)}, {m.group(2)}"
    m = GET_ATTR_EXPR.match(expr)
    if m:
        return "get_attr", m.group(1), ""
    # arithmetic on symbolic sizes (`2 * s0`) and other expressions: keep the text as target
    return "call_function", "expr", expr


# An annotation's reading, by its text: a graph holds a few hundred different ones. A dict, not
# lru_cache: _node_parts looks each node's up itself, without a call.
_ANNOTATIONS: dict[str, tuple] = {}


def _annotation(ann: str) -> tuple[str | None, tuple[str, ...] | None, tuple[str, ...] | None]:
    got = _ANNOTATIONS.get(ann)
    if got is None:
        got = _remember(_ANNOTATIONS, ann, parse_annotation(ann))
    return got


def _constants(field: str, arg_text: str, args: tuple[str, ...]) -> dict:
    """A node's arguments that use no other node, as text (filled on first access; `_State.run`
    takes the usual shapes at once: only other nodes, each once, as `mul(a, b)`: nothing; the
    node first, then only constants, as `sum(x, [1], True)`: the first comma is at the top level,
    so the rest splits as the whole would).

    The same as testing each argument against the names known at the node's line: the only
    known names in its text are `args`.
    """
    used = set(args)
    findall = REF.findall
    return {"constants": tuple([
        p for p in split_top_level(arg_text)
        # a bare name is its own only identifier: no pattern needed for the usual pieces
        if (p not in used if p.isascii() and p.isidentifier() else used.isdisjoint(findall(p)))
    ])}


@lru_cache(maxsize=4096)
def _split_constants(rest: str) -> tuple[str, ...]:
    """The same few constant tails recur (gpt_deep: 12,000 nodes, 37 tails)."""
    return tuple(split_top_level(rest))


@lru_cache(maxsize=4096)
def _source_location(comment: str) -> SourceLocation | None:
    """`# File: path:line in fn, code: ...` -> SourceLocation; a backward graph repeats them."""
    m = FILE_COMMENT.match(comment)
    return SourceLocation(m.group(1), int(m.group(2)), m.group(3), m.group(4) or "") if m else None


def _lines(text: str) -> list[str]:
    """Return text.splitlines(); split on "\n" (a fast memchr) where no other line break is there."""
    if ("\r" in text or "\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text
            or not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text)):
        return text.splitlines()
    lines = text.split("\n")
    if not lines[-1]:  # the empty piece after a last newline, which splitlines() does not give
        lines.pop()
    return lines

