"""Parse `ir_pre_fusion.txt` and `ir_post_fusion.txt`: Inductor's scheduler nodes, before and after fusion.

Each node starts with a header at column 0 (`op3: SchedulerNode(ComputedBuffer)`), followed by
`op3.<attr> = <value>` lines (values may run over several lines), an `outputs = [...]` block
listing its buffers, and a `class op3_loop_body:` with the loop body. A fused node lists its
members after `op1_op2.snodes[i] =`. Older torch names nodes `buf0` / `buf0_buf1`.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.model import (
    Buffer,
    Dependency,
    FusionGroup,
    Layout,
    ParseWarning,
    SchedulerIR,
    SchedulerNode,
)
from compile_viz.artifacts.text import cut_warning, decode, split_top_level

HEADER = re.compile(r"^(\w+): (\w+(?:\(.*\))?)\s*$")
ATTRIBUTE = re.compile(r"^(\w+?)\.((?:snodes\[\d+\])|[\w.]+) =\s?(.*)$")
LAYOUT_ALIAS = re.compile(r"^\w+_layout = ")
LOOP_BODY = re.compile(r"^class (\w+?)_loop_body:\s*$")
OUTPUT_HEADER = re.compile(r"^\s+(\w+): (\w+)\s*$")
OUTPUT_ATTRIBUTE = re.compile(r"^\s+(\w+)\.(layout|users|\w+) = (.*)$")
OPS_CALL = re.compile(r"\bops\.(\w+)\(")
QUOTED = re.compile(r"'([^']*)'")
NAMED = re.compile(r"name='([^']*)'")
USER = re.compile(r"node=(?:\w+\(name='([^']+)'\)|(OUTPUT))")

# Checked in order: the first fragment found in the node's class names its kind.
KIND_BY_CLASS = (
    ("OuterLoopFused", "outer_loop"),
    ("Foreach", "foreach"),
    ("Grouped", "grouped"),
    ("FusedExternTriton", "fused"),
    ("Fused", "fused"),
    ("Nop", "nop"),
    ("ExternKernel", "extern"),
    ("Template", "template"),
    ("SchedulerNode", "scheduler"),
)
GROUP_KINDS = ("fused", "foreach", "grouped", "outer_loop")


def node_kind(node_type: str) -> str:
    """Return the kind of a scheduler node from its class as written."""
    for fragment, kind in KIND_BY_CLASS:
        if fragment in node_type:
            return kind
    return "other"


def parse_scheduler_ir(data: bytes | str, *, path: str, stage: str) -> SchedulerIR:
    """Return the scheduler nodes of an IR dump; never raises on content."""
    text, replaced = decode(data)
    warnings: list[ParseWarning] = []
    if replaced:
        warnings.append(ParseWarning(path, 0, "file is not valid UTF-8; bad bytes were replaced"))
    if not text.strip():
        warnings.append(ParseWarning(path, 0, "file is empty"))
    if cut := cut_warning(text):
        warnings.append(ParseWarning(path, text.count("\n") + 1, cut))
    builder = _Builder(path, warnings)
    builder.run(text.splitlines())
    return builder.result(stage)


def _balance(text: str) -> int:
    return (
        text.count("[") + text.count("(") + text.count("{") - text.count("]") - text.count(")") - text.count("}")
    )


class _Node:
    """Mutable builder for one SchedulerNode."""

    __slots__ = ("name", "node_type", "line", "attrs", "outputs", "ops", "members", "parent")

    def __init__(self, name: str, node_type: str, line: int, parent: str) -> None:
        self.name = name
        self.node_type = node_type
        self.line = line
        self.attrs: dict[str, str] = {}
        self.outputs: list[list] = []  # [name, ir_type, layout_text, users_text]
        self.ops: list[str] = []
        self.members: list[str] = []
        self.parent = parent


class _Builder:
    def __init__(self, path: str, warnings: list[ParseWarning]) -> None:
        self.path = path
        self.warnings = warnings
        self.nodes: dict[str, _Node] = {}
        self.order: list[_Node] = []
        self.pending_parent = ""  # set by `X.snodes[i] =`, consumed by the next header

    def warn(self, lineno: int, line: str, why: str) -> None:
        self.warnings.append(ParseWarning(self.path, lineno, f"{why}: {line.strip()[:120]}"))

    def run(self, lines: list[str]) -> None:
        i, n = 0, len(lines)
        body_of: _Node | None = None
        while i < n:
            line = lines[i]
            lineno = i + 1
            i += 1
            if not line.strip():
                continue
            if line[0] in " \t":
                if body_of is not None:
                    if "ops." in line:
                        body_of.ops.extend(OPS_CALL.findall(line))
                    continue
                self.warn(lineno, line, "indented line outside any block")
                continue
            body_of = None
            m = HEADER.match(line)
            if m:
                self._header(m.group(1), m.group(2), lineno)
                continue
            m = ATTRIBUTE.match(line)
            if m:
                i = self._attribute(m, lines, i, lineno)
                continue
            if LAYOUT_ALIAS.match(line):
                continue
            m = LOOP_BODY.match(line)
            if m:
                body_of = self.nodes.get(m.group(1))
                if body_of is None:
                    self.warn(lineno, line, "loop body of an unknown node")
                continue
            self.warn(lineno, line, "line not understood")

    def _header(self, name: str, node_type: str, lineno: int) -> None:
        parent = self.pending_parent
        self.pending_parent = ""
        node = _Node(name, node_type, lineno, parent)
        if name in self.nodes and not parent:
            self.warnings.append(ParseWarning(self.path, lineno, f"scheduler node {name} appears twice"))
        self.nodes[name] = node
        self.order.append(node)
        if parent and parent in self.nodes:
            self.nodes[parent].members.append(name)

    def _attribute(self, m: re.Match, lines: list[str], i: int, lineno: int) -> int:
        """Record `name.attr = value`, reading continuation lines; return the next line index."""
        name, attr, value = m.group(1), m.group(2), m.group(3)
        node = self.nodes.get(name)
        if attr.startswith("snodes["):
            self.pending_parent = name
            return i
        if node is None:
            self.warn(lineno, lines[lineno - 1], "attribute of an unknown node")
            return i
        if attr == "outputs":
            return self._outputs(node, lines, i)
        depth = _balance(value)
        n = len(lines)
        while (depth > 0 or not value.strip()) and i < n and lines[i][:1] in (" ", "\t", "]"):
            value += " " + lines[i].strip()
            depth += _balance(lines[i])
            i += 1
        node.attrs[attr] = value.strip()
        return i

    def _outputs(self, node: _Node, lines: list[str], i: int) -> int:
        """Read an `outputs = [` block up to its closing `]` at column 0."""
        n = len(lines)
        current: list | None = None
        while i < n:
            line = lines[i]
            i += 1
            if line.startswith("]"):
                return i
            m = OUTPUT_HEADER.match(line)
            if m:
                current = [m.group(1), m.group(2), "", ""]
                node.outputs.append(current)
                continue
            m = OUTPUT_ATTRIBUTE.match(line)
            if m and current is not None:
                value = m.group(3)
                depth = _balance(value)
                while depth > 0 and i < n and lines[i][:1] in (" ", "\t"):
                    value += " " + lines[i].strip()
                    depth += _balance(lines[i])
                    i += 1
                if m.group(2) == "layout":
                    current[2] = value
                elif m.group(2) == "users":
                    current[3] = value
                continue
            if not line.strip():
                continue
            if not line[:1].isspace():  # cut short: the block never closed
                self.warn(i, line, "outputs block not closed")
                return i - 1
            self.warn(i, line, "line in outputs block not understood")
        self.warnings.append(ParseWarning(self.path, 0, f"{node.name}: outputs block runs to the end of the file"))
        return i

    def result(self, stage: str) -> SchedulerIR:
        top: list[SchedulerNode] = []
        members: list[SchedulerNode] = []
        groups: list[FusionGroup] = []
        if self.order:
            self._check_complete(self.order[-1])
        for b in self.order:
            node = self._freeze(b)
            (members if b.parent else top).append(node)
            if node.kind in GROUP_KINDS:
                groups.append(FusionGroup(node.name, node.kind, node.node_type, node.members, node.buffer_names, node.line))
        return SchedulerIR(self.path, stage, tuple(top), tuple(members), tuple(groups), tuple(self.warnings))

    def _check_complete(self, b: _Node) -> None:
        """The last node of a cut file misses its tail: say which part."""
        missing = [a for a in ("writes", "unmet_dependencies", "met_dependencies") if a not in b.attrs]
        if not b.outputs and node_kind(b.node_type) not in ("fused", "foreach", "grouped", "outer_loop"):
            missing.append("outputs")
        if node_kind(b.node_type) == "scheduler" and not any(op.startswith("store") for op in b.ops):
            missing.append("loop body")
        if missing:
            self.warnings.append(
                ParseWarning(self.path, b.line, f"last node {b.name} is incomplete (no {', '.join(missing)}): file cut short?")
            )

    def _freeze(self, b: _Node) -> SchedulerNode:
        a = b.attrs
        kind = node_kind(b.node_type)
        writes = parse_dependencies(a.get("writes", ""))
        unmet = parse_dependencies(a.get("unmet_dependencies", ""))
        met = parse_dependencies(a.get("met_dependencies", ""))
        outputs = tuple(Buffer(o[0], o[1], parse_layout(o[2]), parse_users(o[3])) for o in b.outputs)
        members = tuple(b.members)
        if kind in GROUP_KINDS and not members:
            members = _members_from_name(b.name)
        return SchedulerNode(
            name=b.name,
            node_type=b.node_type,
            kind=kind,
            writes=writes,
            reads=unmet + met,
            unmet=tuple(d.buffer for d in unmet),
            outputs=outputs,
            device=a.get("group.device", ""),
            iteration=a.get("group.iteration", ""),
            sizes=a.get("sizes", ""),
            loop_body_ops=tuple(b.ops),
            extern_kernel=a.get("node.kernel", ""),
            members=members,
            line=b.line,
        )


def _members_from_name(name: str) -> tuple[str, ...]:
    """`op1_op2_op3` -> (op1, op2, op3); `buf1_buf2` likewise. Used only when snodes are missing."""
    parts = re.findall(r"(?:op|buf)\d+", name)
    return tuple(parts) if "_".join(parts) == name else ()


DEP_FAST = re.compile(
    r"(MemoryDep)\('([^']*)', ([^{}]*?), (\{[^}]*\})(?:, mode=\w+)?\)"
    r"|(\w+Dep)\(name='([^']*)'(?:, [\w=']+)*\)"
)


def parse_dependencies(value: str) -> tuple[Dependency, ...]:
    """`[MemoryDep('buf1', d0, {d0: 100}), StarDep(name='x', mode=None)]` -> Dependencies."""
    # fast path: every item has one of the usual shapes, and nothing is left between them
    deps = []
    last = 0
    for m in DEP_FAST.finditer(value):
        if value[last : m.start()].strip(" ,[]"):
            break
        last = m.end()
        if m.group(1):
            deps.append(Dependency("MemoryDep", m.group(2), m.group(3), m.group(4)))
        else:
            deps.append(Dependency(m.group(5), m.group(6), "", ""))
    else:
        if not value[last:].strip(" ,[]"):
            return tuple(deps)
    return _parse_dependencies_slow(value)


def _parse_dependencies_slow(value: str) -> tuple[Dependency, ...]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    elif value.startswith("OrderedSet(["):
        value = value[len("OrderedSet([") : -2]
    deps = []
    for item in split_top_level(value):
        kind, _, rest = item.partition("(")
        rest = rest[:-1] if rest.endswith(")") else rest
        named = NAMED.search(rest)
        if named:
            deps.append(Dependency(kind.strip(), named.group(1), "", ""))
            continue
        parts = split_top_level(rest)
        buf = QUOTED.match(parts[0]).group(1) if parts and QUOTED.match(parts[0]) else (parts[0] if parts else "")
        index = parts[1] if len(parts) > 1 else ""
        ranges = parts[2] if len(parts) > 2 else ""
        deps.append(Dependency(kind.strip(), buf, index, ranges))
    return tuple(deps)


LAYOUT_FAST = re.compile(r"^(\w+)\('([^']*)', ([\w.]+), size=\[([^\]]*)\], stride=\[([^\]]*)\]\)$")


def parse_layout(value: str) -> Layout | None:
    """`FixedLayout('cuda:0', torch.float32, size=[100, 1], stride=[1, 100])` -> Layout."""
    value = value.strip()
    m = LAYOUT_FAST.match(value)
    if m:
        return Layout(m.group(1), m.group(2), m.group(3), _dims(m.group(4)), _dims(m.group(5)))
    if not value or "(" not in value:
        return None
    kind, _, rest = value.partition("(")
    rest = rest[:-1] if rest.endswith(")") else rest
    device = dtype = ""
    size: tuple[str, ...] = ()
    stride: tuple[str, ...] = ()
    positional = 0
    for part in split_top_level(rest):
        key, eq, val = part.partition("=")
        if eq and key.strip().isidentifier() and not key.startswith(("'", "torch")):
            key, val = key.strip(), val.strip()
            if key == "size":
                size = tuple(split_top_level(val.strip("[]")))
            elif key == "stride":
                stride = tuple(split_top_level(val.strip("[]")))
            elif key == "device":
                device = val
            elif key == "dtype":
                dtype = val
            continue
        if positional == 0:
            device = part.strip("'\"")
        elif positional == 1:
            dtype = part
        positional += 1
    return Layout(kind.strip(), device, dtype, size, stride)


def _dims(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",")) if "(" not in text else tuple(split_top_level(text))


def parse_users(value: str) -> tuple[str, ...]:
    return tuple(a or b for a, b in USER.findall(value))
