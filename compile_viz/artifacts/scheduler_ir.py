"""Parse `ir_pre_fusion.txt` and `ir_post_fusion.txt`: Inductor's scheduler nodes, before and after fusion.

Each node starts with a header at column 0 (`op3: SchedulerNode(ComputedBuffer)`), followed by
`op3.<attr> = <value>` lines (values may run over several lines), an `outputs = [...]` block
listing its buffers, and a `class op3_loop_body:` with the loop body. A fused node lists its
members after `op1_op2.snodes[i] =`. Older torch names nodes `buf0` / `buf0_buf1`.

The file is walked by one pattern, `NODE`, that takes a whole node in its usual shape in one match
and keeps the place of its parts in the text; where it stops (an odd line), CHUNK (`_chunk_pattern()`)
takes whole runs of well-formed lines at once (a node's one-line attributes, an outputs block, a
loop body), and what neither takes is read line by line, with warnings. A node's attributes,
dependencies, buffers and loop-body ops are read from those places on first access.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compile_viz.artifacts.ir_values import USER, layout_cached, parse_dependencies, parse_users
from compile_viz.artifacts.model import (
    Buffer,
    FusionGroup,
    ParseWarning,
    SchedulerIR,
    SchedulerNode,
    deferred,
)
from compile_viz.artifacts.text import read_artifact
from compile_viz.artifacts.versions import CODE_BLOCK, dedent_members, members_from_name

HEADER = re.compile(r"^(\w+): (\w+(?:\(.*\))?)\s*$")
ATTRIBUTE = re.compile(r"^(\w+?)\.((?:snodes\[\d+\])|[\w.]+) =\s?(.*)$")
LAYOUT_ALIAS = re.compile(r"^\w+_layout = ")
LOOP_BODY = re.compile(r"^class (\w+?)_loop_body:\s*$")
OUTPUT_HEADER = re.compile(r"^\s+(\w+): (\w+)\s*$")
OUTPUT_ATTRIBUTE = re.compile(r"^\s+(\w+)\.(layout|users|\w+) = (.*)$")
OPS_CALL = re.compile(r"\bops\.(\w+)\(")
QUOTED = re.compile(r"'([^']*)'")

# Whole-text patterns. Each takes only lines that the line patterns above would read the same
# way, with no warning; anything else is left to the line-by-line reader. `\s` becomes
# `[^\S\n]` so that no pattern runs past its line.
#
# A value runs on over the next lines only when its brackets are still open (or it is blank)
# and the next line starts with a space, a tab or "]". In a run of one node's attributes each
# line is followed by one that starts with the node's name, so only the run's last line needs
# that check (done in `_Builder.run`). In an outputs block every line is indented, so there a
# value must be seen to balance: the usual layout and users shapes first, then any value with
# nested brackets, four deep at most. Possessive `*+`/`++`: a value is followed by "\n", which
# no shorter match would reach either; not backtracking into runs of text keeps this fast.
_FLAT = r"[^\n()\[\]{}]"
_VALUE = rf"{_FLAT}*+"
for _ in range(4):
    _VALUE = rf"(?:{_FLAT}++|[(\[{{]{_VALUE}[)\]}}])*+"  # one line whose brackets balance
_LAYOUT = rf"\w++\('[^'\n]*+', [\w.]++, size=\[{_FLAT}*+\], stride=\[{_FLAT}*+\]\)"
_USER = r"NodeUser\(node=(?:\w++\(name='[^'\n()\[\]{}]*+'\)|OUTPUT), can_inplace=\w++, is_weak=\w++\)"
_USERS = (
    rf"\[(?:{_USER}(?:, {_USER})*+)?\]"
    rf"|\[\n(?:[ \t]+{_USER},?\n|[ \t]{_VALUE}\n)*+[ \t]{_FLAT}*+\]{_FLAT}*+"
)
_BUFFER_ENTRY = rf"[ \t]+\w++: \w++[^\S\n]*+\n(?:[ \t]+\w++\.\w++ = (?:{_LAYOUT}|{_USERS}|{_VALUE})\n)*+"
_ATTRIBUTE = r"\.(?!outputs =)[\w.]++ =[^\n]*+\n"
# A value written on the lines after its `name.attr =`: "[" opens on the first, one line whose
# brackets balance after another, "]" closes on the last (how Inductor prints long dependency
# lists). `_attribute` reads the same lines: it goes on while the value is blank or a bracket
# is open, and stops when the "]" closes it.
_SPLIT_VALUE = rf"[ \t]+\[{_VALUE}(?:\n[ \t]+{_VALUE})*+\]{_VALUE}\n"
# The alternatives that start with a node's name share one possessive `\w++` (a name is followed by
# ":" or ".", which `\w` never takes), so a line is not re-scanned by each of them in turn. Compiled
# on first use (~1.8 ms of every parse's start): files in the usual shape need NODE alone.
@lru_cache(maxsize=1)
def _chunk_pattern() -> re.Pattern:
    return re.compile(
        r"(?P<name>\w++)(?:"
        r"(?P<header>: (?P<htype>\w+(?:\([^\n]*\))?)[^\S\n]*\n)"
        rf"|(?P<split>\.(?!outputs =)(?P<pattr>[\w.]++) =[^\S\n]*\n(?P<pvalue>{_SPLIT_VALUE}))"
        rf"|(?P<attrs>{_ATTRIBUTE}(?:(?P=name){_ATTRIBUTE})*)"
        rf"|(?P<outputs>\.outputs =[^\n]*\n(?P<entries>(?:{_BUFFER_ENTRY})*)\][^\n]*\n)"
        r"|(?P<snodes>\.snodes\[\d+\] =[^\n]*\n)"
        r")"
        r"|(?P<blank>(?:[^\S\n]*\n)+)"
        r"|(?P<alias>(?:\w+_layout = [^\n]*\n)+)"
        r"|(?P<body>class (?P<bname>\w+?)_loop_body:[^\S\n]*\n)"
    )
# One entry of a checked outputs block in its usual shape: a one-line layout whose brackets
# balance, then users on one line or one NodeUser a line. `_read_outputs` reads such an entry
# the same way (nothing runs on past it); any other shape sends the block to `_read_outputs`.
# The same shape is a `_BUFFER_ENTRY`. `_ENTRY` marks its groups NAME, TYPE, <LAYOUT>: capturing
# in ENTRY_FAST, the name alone in NODE. Possessive throughout: each run is followed by a character
# it cannot take, so giving back never matches, and sre would try it (and save its marks) at each.
_ENTRY = (
    r"[ \t]+NAME: TYPE[^\S\n]*\n"
    rf"[ \t]+\w++\.layout = <LAYOUT\w++\('[^'\n()\[\]{{}}]*+', [\w.]++, size=\[{_FLAT}*+\], stride=\[{_FLAT}*+\]\){_FLAT}*+LAYOUT>\n"
    rf"[ \t]+\w++\.users = (?:\[(?:{_USER}(?:, {_USER})*+)?+\]{_FLAT}*+|\[\n(?:[ \t]+{_USER},?[^\S\n]*+\n)*+[ \t]+\]{_FLAT}*+)\n"
)


def _entry(name: str, ir_type: str, layout: tuple[str, str]) -> str:
    return _ENTRY.replace("NAME", name).replace("TYPE", ir_type).replace("<LAYOUT", layout[0]).replace("LAYOUT>", layout[1])


ENTRY_FAST = re.compile(_entry(r"(\w++)", r"(\w++)", ("(", ")")))

# A whole node in its usual shape, in one match: an optional `parent.snodes[i] =` line, the
# header, then the node's own lines as CHUNK reads them: attributes (a one-line value only when
# the next line cannot continue it; the line reader would read it the same way), values split
# over lines, layout aliases and blank lines; and, in that order, at most one outputs block and
# at most one loop body (indented and blank lines), whose places the match keeps (and the buffer's
# name, when the block holds one entry of ENTRY_FAST's shape: the name `_fast_entries` would read). The node's
# attributes are found again inside its span when first read. Whatever the pattern leaves (an
# odd line, another node's attribute, a second outputs block) goes to CHUNK and the line reader.
_NODE_LINE = (
    rf"(?P=name)\.(?!outputs =)[\w.]++ =(?:[^\S\n]*\n{_SPLIT_VALUE}|[^\n]*+\n(?![ \t\]]))"
    r"|\w+_layout = [^\n]*\n"
    r"|[^\S\n]*\n"
)
_ONE_ENTRY = _entry(r"(?P<buffer>\w++)", r"\w++", ("", ""))
_NODE = (
    r"(?:(?P<parent>\w++)\.snodes\[\d+\] =[^\n]*\n)?"
    r"(?P<name>\w++): (?P<htype>\w+(?:\([^\n]*\))?)[^\S\n]*\n"
    rf"(?:{_NODE_LINE})*+"
    rf"(?:(?P=name)\.outputs =[^\n]*\n"
    rf"(?P<entries>(?>{_ONE_ENTRY})(?=\])|(?:{_BUFFER_ENTRY})*+)"  # an entry ends at one place: no backtracking
    rf"\][^\n]*\n(?:{_NODE_LINE})*+)?"
    rf"(?:class (?P=name)_loop_body:[^\S\n]*\n(?P<body>(?:[ \t][^\n]*\n|[^\S\n]*\n)*+)(?:{_NODE_LINE})*+)?"
)
# ASCII text but "\x1f" (space to Unicode, not ASCII; "\x1c"-"\x1e", "\r\v\f" are line breaks by now): `\w`,
# `[^\S\n]` as re.ASCII's sets, 256-bit maps, not Unicode categories (10%); a blank body line is " \t\n"-led (2%).
NODE = re.compile(_NODE.replace(r"(?:[ \t][^\n]*\n|[^\S\n]*\n)*+", r"(?:[ \t][^\n]*+\n|\n)*+").replace(r"[\w.]", "[0-9A-Za-z_.]").replace(r"\w", "[0-9A-Za-z_]").replace(r"[^\S\n]", r"[ \t\r\x0b\x0c]"), re.ASCII)
# An attribute line inside a NODE span, read at the start of the line as NODE took it.
SPAN_ATTRIBUTE = re.compile(rf"\w+\.(?!outputs =)([\w.]+) =(?:[^\S\n]*\n({_SPLIT_VALUE})|[^\S\n]?([^\n]*))")
ATTR_PAIRS = re.compile(r"^\w+?\.([\w.]+) =[^\S\n]?([^\n]*)$", re.M)
BUFFER_NAME = re.compile(r"buf\d+")
LAYOUT_LINE = re.compile(r"^(\w+)_layout = (.*)$", re.M)
BODY_END = re.compile(r"\n(?![ \t]|[^\S\n]*\n)")  # the "\n" before a line that ends a loop body
ODD_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # other breaks splitlines() honours: rare
ASCII_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"

# Checked in order: the first fragment found in the node's class names its kind.
KIND_BY_CLASS = (("OuterLoopFused", "outer_loop"), ("Foreach", "foreach"), ("Grouped", "grouped"),
                 ("FusedExternTriton", "fused"), ("Fused", "fused"), ("Nop", "nop"), ("ExternKernel", "extern"),
                 ("Template", "template"), ("SchedulerNode", "scheduler"))
GROUP_KINDS = ("fused", "foreach", "grouped", "outer_loop")
CONTINUATION = (" ", "\t", "]")  # first characters of a line that may continue a value


def node_kind(node_type: str) -> str:
    """Return the kind of a scheduler node from its class as written."""
    for fragment, kind in KIND_BY_CLASS:
        if fragment in node_type:
            return kind
    return "other"


_node_kind = lru_cache(maxsize=1024)(node_kind)  # a file has a handful of node classes


def parse_scheduler_ir(data: bytes | str, *, path: str, stage: str) -> SchedulerIR:
    """Return the scheduler nodes of an IR dump; never raises on content."""
    text, warnings = read_artifact(data, path)
    builder = _Builder(path, warnings, dedent_members(_lines_text(text)))
    builder.run()
    return builder.result(stage)


def _lines_text(text: str) -> str:
    """The text with the lines str.splitlines() sees, each ended by one "\\n"."""
    if any(c in text for c in ASCII_BREAKS) if text.isascii() else ODD_BREAKS.search(text):
        lines = text.splitlines()
        return "\n".join(lines) + "\n" if lines else ""
    return text if not text or text.endswith("\n") else text + "\n"


def _balance(text: str) -> int:
    """How many more brackets `text` opens than it closes."""
    return text.count("[") + text.count("(") + text.count("{") - text.count("]") - text.count(")") - text.count("}")


class _Node:
    """Mutable builder for one SchedulerNode: where its parts lie in the text."""

    __slots__ = ("name", "node_type", "line", "attrs", "outputs", "ops", "members", "parent", "span", "merged", "names")

    def __init__(self, name: str, node_type: str, line: int, parent: str) -> None:
        self.name, self.node_type, self.line = name, node_type, line  # line: -1 - its offset until `_number`
        self.attrs: dict[str, str] = {}  # values as written; stripped when read
        self.outputs: list = []  # int: offset of a checked outputs block's entries; list: read entries
        self.ops: list = []  # (start, end): a checked loop body; list: ops read line by line
        self.members: list[str] = []
        self.parent = parent
        self.span: tuple[int, int] | None = None  # the text NODE took, when it did; its parts come first
        self.merged = False  # whether attrs holds its span's part by now
        self.names: tuple[str, ...] | None = None  # buffer names, when NODE read them


class _Builder:
    def __init__(self, path: str, warnings: list[ParseWarning], text: str) -> None:
        self.path, self.warnings, self.text = path, warnings, text
        self.nodes: dict[str, _Node] = {}
        self.order: list[_Node] = []
        self.pending_parent = ""  # set by `X.snodes[i] =`, consumed by the next header
        self.body_of: _Node | None = None  # the node whose loop body is being read
        self._line_pos, self._line = 0, 1

    def warn(self, lineno: int, line: str, why: str) -> None:
        self.warnings.append(ParseWarning(self.path, lineno, f"{why}: {line.strip()[:120]}"))

    def lineno(self, pos: int) -> int:
        """1-based line of `pos`; positions are asked for in increasing order."""
        self._line += self.text.count("\n", self._line_pos, pos)
        self._line_pos = pos
        return self._line

    def run(self) -> None:
        text = self.text
        n = len(text)
        pos = 0
        node_match = (NODE if text.isascii() and "\x1f" not in text else re.compile(_NODE)).match  # re keeps it
        while pos < n:
            m = node_match(text, pos)
            if m is None:
                pos = self._chunk(pos)
                continue
            parent, name, node_type, entries, buffer, body = m.groups()
            if parent is not None:
                self.pending_parent = parent
            self.body_of = None
            pos = m.end()
            # the line is counted on first read (`_number`): parse --json and linking read none but groups'
            at = m.start(2)
            node = self._header(name, node_type, self.lineno(at) if name in self.nodes else -1 - at)
            node.span = (m.start(), pos)
            if entries is not None:
                node.outputs.append(m.start(4))
                if buffer is not None:
                    node.names = (buffer,)
            if body is not None:
                node.ops.append(m.span(6))

    def _chunk(self, pos: int) -> int:
        """Read the CHUNK at `pos` (or, when none fits, one line); return the next position."""
        text = self.text
        nodes = self.nodes
        m = _chunk_pattern().match(text, pos)
        kind = m.lastgroup if m else None
        if kind == "blank":
            return m.end()
        if kind == "header":
            self.body_of = None
            self._header(m.group("name"), m.group("htype"), self.lineno(pos))
            return m.end()
        if kind == "split" and (node := nodes.get(m.group("name"))) is not None:
            self.body_of = None
            node.attrs[m.group("pattr")] = _joined(m.group("pvalue"))
            return m.end()
        if kind == "attrs" and (node := nodes.get(m.group("name"))) is not None:
            end = m.end()
            if text[end : end + 1] in CONTINUATION:  # the last line may run on: read it alone
                end = text.rfind("\n", pos, end - 1) + 1
            if end > pos:
                self.body_of = None
                node.attrs.update(ATTR_PAIRS.findall(text, pos, end))
                return end
        if kind == "outputs" and (node := nodes.get(m.group("name"))) is not None:
            self.body_of = None
            node.outputs.append(m.start("entries"))
            return m.end()
        if kind == "snodes":
            self.body_of = None
            self.pending_parent = m.group("name")
            return m.end()
        if kind == "alias":
            self.body_of = None
            return m.end()
        if kind == "body" and (node := nodes.get(m.group("bname"))) is not None:
            self.body_of = node
            end = BODY_END.search(text, m.end() - 1)
            end = end.end() if end else len(text)
            node.ops.append((m.end(), end))
            return end
        return self._line_by_line(pos)

    def _line_at(self, pos: int) -> tuple[str, int]:
        end = self.text.find("\n", pos)
        return self.text[pos:end], end + 1

    def _line_by_line(self, pos: int) -> int:
        """Read the one line at `pos` (with its continuation lines); return the next position."""
        line, nxt = self._line_at(pos)
        if not line.strip():
            return nxt
        lineno = self.lineno(pos)
        if line[0] in " \t":
            if self.body_of is not None:
                if "ops." in line:
                    self.body_of.ops.append(OPS_CALL.findall(line))
                return nxt
            self.warn(lineno, line, "indented line outside any block")
            return nxt
        self.body_of = None
        m = HEADER.match(line)
        if m:
            self._header(m.group(1), m.group(2), lineno)
            return nxt
        m = ATTRIBUTE.match(line)
        if m:
            return self._attribute(m, nxt, lineno, line)
        if LAYOUT_ALIAS.match(line):
            return nxt
        m = LOOP_BODY.match(line)
        if m:
            self.body_of = self.nodes.get(m.group(1))
            if self.body_of is None:
                self.warn(lineno, line, "loop body of an unknown node")
            return nxt
        if CODE_BLOCK.match(line):  # the node's generated kernel: the kernel's own source is read elsewhere
            end = BODY_END.search(self.text, nxt - 1)
            return end.end() if end else len(self.text)
        self.warn(lineno, line, "line not understood")
        return nxt

    def _header(self, name: str, node_type: str, lineno: int) -> _Node:
        parent = self.pending_parent
        self.pending_parent = ""
        node = _Node(name, node_type, lineno, parent)
        if name in self.nodes and not parent:
            self.warnings.append(ParseWarning(self.path, lineno, f"scheduler node {name} appears twice"))
        self.nodes[name] = node
        self.order.append(node)
        if parent and parent in self.nodes:
            self.nodes[parent].members.append(name)
        return node

    def _attribute(self, m: re.Match, pos: int, lineno: int, line: str) -> int:
        """Record `name.attr = value`, reading continuation lines; return the next position."""
        name, attr, value = m.group(1), m.group(2), m.group(3)
        node = self.nodes.get(name)
        if attr.startswith("snodes["):
            self.pending_parent = name
            return pos
        if node is None:
            self.warn(lineno, line, "attribute of an unknown node")
            return pos
        if attr == "outputs":
            entries, pos = _read_outputs(self.text, pos, self)
            node.outputs.append(entries)
            if pos < 0:
                self.warnings.append(ParseWarning(self.path, 0, f"{node.name}: outputs block runs to the end of the file"))
                pos = len(self.text)
            return pos
        depth = _balance(value)
        text, n = self.text, len(self.text)
        while (depth > 0 or not value.strip()) and pos < n and text[pos] in " \t]":
            nxt, after = self._line_at(pos)
            value += " " + nxt.strip()
            depth += _balance(nxt)
            pos = after
        node.attrs[attr] = value.strip()
        return pos

    def result(self, stage: str) -> SchedulerIR:
        top: list[SchedulerNode] = []
        members: list[SchedulerNode] = []
        groups: list[FusionGroup] = []
        if any(not b.outputs for b in self.order):
            self._buffer_named_outputs()
        if self.order:
            self._check_complete(self.order[-1])
        for b in self.order:
            node = self._freeze(b)
            (members if b.parent else top).append(node)
            if node.kind in GROUP_KINDS:  # its line too is counted on first read
                groups.append(deferred(FusionGroup, {
                    "name": node.name, "kind": node.kind, "node_type": node.node_type, "members": node.members,
                    "buffers": node.buffer_names, "_fill": (_node_details, (self.text, b, self.order))}))
        return SchedulerIR(self.path, stage, tuple(top), tuple(members), tuple(groups), tuple(self.warnings))

    def _buffer_named_outputs(self) -> None:
        """Outputs of nodes printed without an `outputs` block (torch 2.0 to 2.4): such a node is
        named after the one buffer it writes (`buf1: SchedulerNode(ComputedBuffer)`), its users are
        `buf1.users`, its layout a `buf1_layout =` line where one was printed; a fused node's are
        its members'. Entries in the form `_read_outputs` returns."""
        layouts: dict[str, str] | None = None
        for b in self.order:
            if b.outputs or _node_kind(b.node_type) in GROUP_KINDS:
                continue
            users = _attrs_of(self.text, b).get("users")
            if users is None:
                if not BUFFER_NAME.fullmatch(b.name):
                    continue
                users = ""  # torch 2.0 prints no users at all
            if layouts is None:
                layouts = dict(LAYOUT_LINE.findall(self.text))
            ir_type = b.node_type.partition("(")[2].rstrip(")") or b.node_type
            b.outputs.append([[b.name, ir_type, layouts.get(b.name, ""), users]])
        for b in self.order:
            if not b.outputs and _node_kind(b.node_type) in GROUP_KINDS:
                for member in self._members(b):
                    node = self.nodes.get(member)
                    if node is not None and node is not b:
                        b.outputs.extend(p for p in node.outputs if isinstance(p, list))
                    elif node is None and BUFFER_NAME.fullmatch(member):  # torch 2.0: members not printed
                        b.outputs.append([[member, "", "", ""]])

    def _members(self, b: _Node) -> tuple[str, ...]:
        """A fused node's members: its `snodes[i]` blocks, else (torch 2.0) its `snodes = [...]`
        list, else the parts of its name."""
        if b.members:
            return tuple(b.members)
        listed = _attrs_of(self.text, b).get("snodes")
        if listed:
            return tuple(QUOTED.findall(listed))
        return members_from_name(b.name)

    def _check_complete(self, b: _Node) -> None:
        """The last node of a cut file misses its tail: say which part."""
        text = self.text
        attrs = _attrs_of(text, b)
        missing = [a for a in ("writes", "unmet_dependencies", "met_dependencies") if a not in attrs]
        kind = _node_kind(b.node_type)
        if not _outputs_of(text, b.outputs) and kind not in GROUP_KINDS:
            missing.append("outputs")
        if kind == "scheduler" and not any(op.startswith("store") for op in _ops_of(text, b.ops)):
            missing.append("loop body")
        if missing:
            _number(text, self.order)
            why = f"last node {b.name} is incomplete (no {', '.join(missing)}): file cut short?"
            self.warnings.append(ParseWarning(self.path, b.line, why))

    def _freeze(self, b: _Node) -> SchedulerNode:
        kind = _node_kind(b.node_type)
        members = self._members(b) if kind in GROUP_KINDS else tuple(b.members)
        values = {"name": b.name, "node_type": b.node_type, "kind": kind, "members": members,
                  "_fill": (_node_details, (self.text, b, self.order))}
        if b.line > 0:
            values["line"] = b.line
        return deferred(SchedulerNode, values)


def _node_details(field: str, text: str, b: _Node, order: list[_Node]) -> dict:
    """A SchedulerNode field read on first access, from its builder `b` (one of `order`, the file's)."""
    if field == "line":
        _number(text, order)
        return {"line": b.line}
    if field == "outputs":
        return {"outputs": _buffers_of(text, b.outputs)}
    if field == "buffer_names" and b.names is not None and len(b.outputs) == 1:
        return {"buffer_names": b.names}  # read by NODE
    if field in ("buffer_names", "buffer_users"):  # one pass gives both (linking reads both of a group)
        users = _buffer_users_of(text, b.outputs)
        return {"buffer_users": users, "buffer_names": tuple(name for name, _ in users)}
    if field == "loop_body_ops":
        return {"loop_body_ops": tuple(_ops_of(text, b.ops))}
    attrs = _attrs_of(text, b)
    if field == "writes":
        return {"writes": parse_dependencies(attrs.get("writes", "").strip())}
    if field in ("reads", "unmet"):
        unmet = parse_dependencies(attrs.get("unmet_dependencies", "").strip())
        met = parse_dependencies(attrs.get("met_dependencies", "").strip())
        return {"reads": unmet + met, "unmet": tuple(d.buffer for d in unmet)}
    return {
        "device": attrs.get("group.device", "").strip(),
        "iteration": attrs.get("group.iteration", "").strip(),
        "sizes": attrs.get("sizes", "").strip(),
        "extern_kernel": attrs.get("node.kernel", "").strip(),
    }


def _number(text: str, order: list[_Node]) -> None:
    """Number the nodes NODE read (line: -1 - the header's offset) in one pass, as `_Builder.lineno` would."""
    line, at = 1, 0
    for b in order:
        if b.line < 0:
            line += text.count("\n", at, pos := -1 - b.line)
            at, b.line = pos, line


def _joined(value: str) -> str:
    """A value written over several lines, as one line."""
    return " ".join(line.strip() for line in value.split("\n")).strip()


def _attrs_of(text: str, b: _Node) -> dict[str, str]:
    """The node's attributes, values as written. A NODE span's are found again on first read: every
    line of the span at column 0 that starts with a name and a dot starts with the node's own name
    (NODE's back-reference), so a plain search for "\n<name>." finds them. The span's part comes
    first: NODE took the node's first lines."""
    if b.span is not None and not b.merged:
        out = {}
        start, end = b.span
        key = f"\n{b.name}."
        match = SPAN_ATTRIBUTE.match
        while (at := text.find(key, start, end)) >= 0:
            start = at + 1
            m = match(text, start)
            if m is not None:
                split = m.group(2)
                out[m.group(1)] = m.group(3) if split is None else _joined(split)
        out.update(b.attrs)
        b.attrs = out
        b.merged = True
    return b.attrs


def _outputs_of(text: str, parts: list) -> list[list]:
    out: list[list] = []
    for part in parts:
        out.extend(part if isinstance(part, list) else _read_outputs(text, part, None)[0])
    return out


def _buffers_of(text: str, parts: list) -> tuple[Buffer, ...]:
    """The Buffers of a node's outputs blocks."""
    return tuple(Buffer(name, ir_type, layout_cached(layout), users) for name, ir_type, layout, users in _raw_buffers(text, parts))


def _buffer_users_of(text: str, parts: list) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(name, users) of each of `_buffers_of(text, parts)`, without parsing the layouts."""
    return tuple((name, users) for name, _, _, users in _raw_buffers(text, parts))


def _raw_buffers(text: str, parts: list) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(name, ir_type, layout text, users) of each buffer of a node's outputs blocks; the usual
    entries of a checked block by ENTRY_FAST, any other block by `_read_outputs`."""
    out: list[tuple[str, str, str, tuple[str, ...]]] = []
    for part in parts:
        if not isinstance(part, list):
            fast = _fast_entries(text, part)
            if fast is not None:
                out.extend(fast)
                continue
        entries = part if isinstance(part, list) else _read_outputs(text, part, None)[0]
        out.extend((o[0], o[1], o[2], parse_users(o[3])) for o in entries)
    return out


def _fast_entries(text: str, pos: int) -> list[tuple[str, str, str, tuple[str, ...]]] | None:
    """`_raw_buffers` of the checked block whose entries start at `pos`; None if one is unusual."""
    out: list[tuple[str, str, str, tuple[str, ...]]] = []
    match = ENTRY_FAST.match
    while not text.startswith("]", pos):
        m = match(text, pos)
        if m is None:
            return None
        users = tuple(a or b for a, b in USER.findall(text, m.end(3), m.end()))
        out.append((m.group(1), m.group(2), m.group(3), users))
        pos = m.end()
    return out


def _ops_of(text: str, parts: list) -> list[str]:
    out: list[str] = []
    for part in parts:
        out.extend(part if isinstance(part, list) else OPS_CALL.findall(text, part[0], part[1]))
    return out


def _read_outputs(text: str, pos: int, builder: _Builder | None) -> tuple[list[list], int]:
    """Read the lines of an `outputs = [` block from `pos` up to its closing `]` at column 0.

    Return the entries ([name, ir_type, layout text, users text]) and the position after the
    block, or -1 when the file ends first. Warnings go to `builder` (None: a checked block).
    """
    n = len(text)
    entries: list[list] = []
    current: list | None = None
    while pos < n:
        end = text.find("\n", pos)
        line, start, pos = text[pos:end], pos, end + 1
        if line.startswith("]"):
            return entries, pos
        m = OUTPUT_HEADER.match(line)
        if m:
            current = [m.group(1), m.group(2), "", ""]
            entries.append(current)
            continue
        m = OUTPUT_ATTRIBUTE.match(line)
        if m and current is not None:
            value = m.group(3)
            depth = _balance(value)
            while depth > 0 and pos < n and text[pos] in " \t":
                end = text.find("\n", pos)
                value += " " + text[pos:end].strip()
                depth += _balance(text[pos:end])
                pos = end + 1
            if m.group(2) == "layout":
                current[2] = value
            elif m.group(2) == "users":
                current[3] = value
            continue
        if not line.strip():
            continue
        if builder is None:
            continue
        if not line[:1].isspace():  # cut short: the block never closed
            builder.warn(builder.lineno(start), line, "outputs block not closed")
            return entries, start
        builder.warn(builder.lineno(start), line, "line in outputs block not understood")
    return entries, -1
