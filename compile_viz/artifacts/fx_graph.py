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
# One indented node statement whose right-hand side is a call or a getitem, read exactly as
# STATEMENT, CLEANUP_TAIL and _classify read it; lines that `feed` would treat otherwise (a
# name starting with "return", "class ") and any other shape are left to `feed`.
NODE_LINE = re.compile(
    rf"[ \t]+(?!return|class )(\w+){_ANN} = (?:([\w.]+)\((.*)\)|(\w+)\[(.+)\])(?:;  (?:\w+ = )+None)?$"
)


def parse_fx_graph(data: bytes | str, *, path: str) -> FxGraph:
    """Return the graph of an FX `print_readable` file; never raises on content."""
    text, warnings = read_artifact(data, path)
    if not text or text.isspace():
        return FxGraph(path, "", (), (), (), (), (), tuple(warnings))
    state = _State(path, warnings)
    state.run(text.splitlines())
    return state.finish()


class _State:
    """Line-by-line builder; `graph` is "" for the top-level forward, else a sub-graph's class."""

    def __init__(self, path: str, warnings: list[ParseWarning]) -> None:
        self.path = path
        self.warnings = warnings
        self.class_name = ""
        self.classes: list[tuple[int, str]] = []  # (indent, name) stack
        self.graph: str | None = None  # None until the first forward
        self.known: dict[str, dict[str, None]] = {}  # graph -> names defined so far
        self.nodes: list[FxNode] = []
        self.sub_nodes: list[FxNode] = []
        self.subgraphs: list[str] = []
        self.inputs: list[str] = []
        self.outputs: list[str | None] = []
        self.source: SourceLocation | None = None
        self.saw_return = False

    def run(self, lines: list[str]) -> None:
        match = NODE_LINE.match
        findall = REF.findall
        graph = known = into = None  # self.graph, its known names and node list, kept in step
        new, set_dict = object.__new__, object.__setattr__
        for lineno, raw in enumerate(lines, 1):
            m = match(raw)
            if m is None or graph is None:
                self.feed(lineno, raw)
                if self.graph is not None:
                    graph = self.graph
                    known = self.known.setdefault(graph, {})
                    into = self.nodes if graph == "" else self.sub_nodes
                continue
            name, ann, bare, callee, arg_text, parent, index = m.groups()
            ann = ann or bare
            if callee is not None:
                target = callee[10:] if callee.startswith("torch.ops.") else callee
            else:
                target, arg_text = "operator.getitem", f"{parent}, {index}"
            dtype, shape, stride = _annotation(ann) if ann else (None, None, None)
            args = tuple(dict.fromkeys([i for i in findall(arg_text) if i in known]))
            node = new(FxNode)  # deferred(FxNode, ...) without the call
            values = {
                "name": name,
                "op": "call_function",
                "target": target,
                "dtype": dtype,
                "shape": shape,
                "stride": stride,
                "args": args,
                "source": self.source,
                "line": lineno,
                "subgraph": graph,
            }
            # the constants now where a comparison tells them (two nodes in three: `mul(a, b)`, or
            # `sum(a, [1], True)` whose tail recurs), else on first access (_constants)
            if arg_text == ", ".join(args):
                values["constants"] = ()
            elif len(args) == 1 and arg_text.startswith(args[0] + ", ") and args[0] not in (rest := arg_text[len(args[0]) + 2:]):
                values["constants"] = _split_constants(rest)
            else:
                values["_fill"] = (_constants, (arg_text, args))
            set_dict(node, "__dict__", values)
            into.append(node)
            known[name] = None

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
        if PARAMS.fullmatch(params):  # `name: "ann"` pieces with no quote or backslash inside
            pieces = PARAM.findall(params)
        else:
            pieces = []
            for param in split_top_level(params):
                name, _, ann = param.partition(":")
                pieces.append((name.strip().split("=")[0].strip(), ann.strip().strip('"')))
        for name, ann in pieces:
            if not name or name.startswith("*"):
                continue
            dtype, shape, stride = _annotation(ann)
            self._add(_fx_node(name, "placeholder", "", dtype, shape, stride, (), (), None, lineno, self.graph))
            if self.graph == "":
                self.inputs.append(name)

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
            self.known.setdefault(node.subgraph, {})[node.name] = None

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


def _fx_node(name, op, target, dtype, shape, stride, args, constants, source, line, subgraph) -> FxNode:
    """FxNode(...) without its frozen __init__ (an object.__setattr__ per field): a graph's inputs
    are a fifth of its nodes (gpt2_deep's backward: 1,210 of 6,143)."""
    node = object.__new__(FxNode)
    object.__setattr__(node, "__dict__", {
        "name": name, "op": op, "target": target, "dtype": dtype, "shape": shape, "stride": stride, "args": args,
        "constants": constants, "source": source, "line": line, "subgraph": subgraph,
    })
    return node


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


@lru_cache(maxsize=4096)
def _annotation(ann: str) -> tuple[str | None, tuple[str, ...] | None, tuple[str, ...] | None]:
    return parse_annotation(ann)


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
