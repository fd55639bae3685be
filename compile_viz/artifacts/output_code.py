"""Parse `output_code.py`: the kernels Inductor defined and the order `call()` runs them in.

The file is Python that we never import. Kernel definitions are
`name = async_compile.<backend>(... '''<source>''' ...)` with Inductor's comments above them;
`call()` (and `partition_N()` when the graph is partitioned) allocates buffers, launches
kernels (`name.run(...)` for Triton, `name(...)` for C++), and calls extern kernels
(`extern_kernels.mm(...)`, `torch.ops.aten.<op>(...)` fallbacks). We scan it line by line.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.model import (
    BufferAllocation,
    Kernel,
    KernelComments,
    KernelLaunch,
    OutputCode,
    ParseWarning,
    SizeAssert,
    deferred,
)
from compile_viz.artifacts.text import IDENT, read_artifact, split_top_level
from compile_viz.artifacts.versions import SOURCE_QUOTES

AOT_ID = re.compile(r"^# AOT ID: \[?'?([^'\]]*)")
KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(\w+)\(")
SOURCE_END, SOURCE_END_DOUBLE = SOURCE_QUOTES  # ''' or, black-formatted (torch 2.12), """
CALL_DEF = re.compile(r"^(\s*)def (call|partition_\d+)\(")
# `[^\]\n]*\]`: what `.*?\]` takes (up to the first "]") without a try of "]" at each of hundreds of characters
SOURCE_NODES = re.compile(r"^# (Topologically Sorted |Unsorted )?Source Nodes: \[([^\]\n]*)\](?:, Original ATen: \[([^\]\n]*)\])?")
MAPPING_LINE = re.compile(r"^#\s+(.*?) => (.*)$")
PROVENANCE = re.compile(r"^# \[Provenance debug handles\] (.*)$")
PROVENANCE_PREFIX = "# [Provenance debug handles] "
KERNEL_PATH = "# kernel path: "
HEURISTICS = re.compile(r"^@(?:triton_heuristics\.)?(\w+)\(", re.M)

UNPACK_ARGS = re.compile(r"^\(?([\w, ]+?),?\)? = args$")
ASSERT_SIZE = re.compile(r"^assert_size_stride\((\w+), (\(.*?\)), (\(.*?\))")
ASSIGN = re.compile(r"^\(?(\w+(?:, \w+)*),?\)? = (.*)$")  # `(buf0,) = self.partitions[0](...)` too
REUSE = re.compile(r"^(\w+) = (.*?); del (\w+)\s*# reuse$")
ALLOC = re.compile(r"^(empty_strided\w*|torch\.empty_strided|empty|torch\.empty)\((\(.*?\)), (\(.*?\))(?:, (.*))?\)$")
POOL = re.compile(r"^alloc_from_pool\((.*)\)$")
LAUNCH_RUN = re.compile(r"^(\w+)\.run\((.*)\)$", re.S)
PLAIN_CALL = re.compile(r"^([\w.]+)\((.*)\)$", re.S)
OUT_KWARG = re.compile(r"\bout=(\w+)")
BUFFER_NAME = re.compile(r"^buf\d+$")
SIZE_EXPR = re.compile(r"^[\w +\-*/%()]+$")
ASCII_IDENT = re.compile(IDENT.pattern, re.ASCII)  # IDENT on ASCII text
ELEMENT = re.compile(r"^(buf\d+)\[(\d+)\]$")  # `buf16 = buf15[0]`: a tuple element of a multi-output call

# The usual one-line statements of call(), one named alternative each, read by one finditer over
# the body (every match is one whole line). Each alternative only takes lines the line reader
# would read the same way; anything else ("other") goes through the line reader.
# Why possessive (`\w++`): each is followed by a character it cannot take (` = `, `(`, `.`, `,`),
# so giving characters back never finds a match, and sre would try that at every character of a
# failing name, in every alternative (the backward's ~9,000 lines: most of the pattern's cost).
# Why sizes and quiet come first: a line of theirs starts with a name and a "(" or " ", which no
# other alternative before "plain" takes, and each alternative tried and failed costs a pass.
_DIMS = r"\([\w, ]*+\)"
_REINTERPRET = rf"reinterpret_tensor\(\w++, {_DIMS}, {_DIMS}, \w++\)"
CALL_STATEMENTS = (
    r"(?P<comment>#(?:[^\n]*\S)?)"
    rf"|(?P<sizes>assert_size_stride\((?P<sn>\w++), (?P<ss>{_DIMS}), (?P<st>{_DIMS})\))"
    r"|(?P<quiet>del \w++(?:, \w++)*+|stream\w*+ = get_raw_stream\(\d++\)|args\.clear\(\)|assert_alignment\(\w++, \d++\))"
    r"|(?P<launch>(?P<lk>triton_\w*+)\.run\((?P<la>[^\n]*)\))"
    r"|(?P<extern>(?:(?P<xl>\w++) = )?(?P<xc>(?:extern_kernels|torch\.ops)\.[\w.]++)\((?P<xa>[^\n]*)\))"
    rf"|(?P<alloc>(?P<al>\w++) = empty_strided\w*+\((?P<as>{_DIMS}), (?P<at>{_DIMS}), (?P<ad>torch\.\w++)\))"
    rf"|(?P<reuse>(?P<rl>\w++) = (?:\w++|{_REINTERPRET}); del (?P<rd>\w++) *+# reuse)"
    rf"|(?P<alias>(?P<vl>\w++) = (?:\w++\[\d++\]|{_REINTERPRET}))"
    r"|(?P<plain>(?P<pk>\w++)\((?P<pa>[^\n]*)\))"
)
# The statement pattern's kinds -> the _Parser method that takes such a line (blank: nothing to do).
FAST_STATEMENTS = {  # (comments, blank lines and "quiet" statements are taken in the loop itself)
    "launch": "_fast_launch", "extern": "_fast_extern", "alloc": "_fast_alloc", "reuse": "_fast_reuse",
    "alias": "_fast_alias", "sizes": "_fast_sizes", "plain": "_fast_plain",
}
CALL_FAST = True  # tests switch it off to compare with the line reader
_call_patterns: dict[tuple[int, bool], re.Pattern] = {}
# splitlines() breaks lines on these too (the last 3 not ASCII); a text with any of them is read line by line
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_OPENERS = re.compile(r"[(\[{]")


def _call_pattern(def_indent: int, ascii: bool) -> re.Pattern:
    # for ASCII text compiled with re.ASCII: the same lines, \w and \d table look-ups, not Unicode calls
    pattern = _call_patterns.get((def_indent, ascii))
    if pattern is None:
        body = f" {{{def_indent + 1},}}+(?:{CALL_STATEMENTS})"  # no alternative starts with a space
        pattern = _call_patterns[def_indent, ascii] = re.compile(
            rf"(?:{body}|(?P<blank>[ \t]*)|(?P<other>[^\n]*))(?:\n|\Z)", re.ASCII if ascii else 0)
    return pattern

# Statements of call() that carry nothing we model, matched by prefix.
QUIET_PREFIXES = (
    "args.clear()",
    "del ",
    "with ",
    "torch.cuda.set_device(", "torch.xpu.set_device(",
    "assert_alignment(",
    "stream",
    "pass",
    "if ",
    "else:",
    "elif ",
    "for ",
    "return",
    "run_intermediate_hooks(",
    "torch.cuda.synchronize",
    "graph_partition",
    "self.partitions",
)
EXTERN_PREFIXES = ("extern_kernels.", "torch.ops.", "aten.", "inductor_ops.", "_quantized.")

# What an assignment's target must not start with for the statement pattern to read it: the
# line reader tests these prefixes before it looks at assignments.
_SLOW_LHS = ("return", "assert_size_stride(", *QUIET_PREFIXES)

# Kernel kind from Inductor's name prefix, then from the heuristics decorator.
KIND_BY_PREFIX = (
    ("triton_poi_", "pointwise"),
    ("triton_red_", "reduction"),
    ("triton_per_", "persistent_reduction"),
    ("triton_tem_", "template"),
    ("triton_for_", "foreach"),
    ("triton_spl_", "split_scan"),
    ("triton_mix_", "reduction"),
    ("cpp_", "cpp"),
)
KIND_BY_HEURISTICS = {
    "pointwise": "pointwise",
    "reduction": "reduction",
    "persistent_reduction": "persistent_reduction",
    "cooperative_reduction": "reduction",
    "template": "template",
    "foreach": "foreach",
    "split_scan": "split_scan",
    "user_autotune": "user",
}
BACKEND_BY_METHOD = {"cpp_pybinding": "cpp", "cpp": "cpp", "triton": "triton"}


def kernel_kind(name: str, backend: str, heuristics: str) -> str:
    """Return pointwise / reduction / persistent_reduction / template / foreach / split_scan / cpp / other."""
    for prefix, kind in KIND_BY_PREFIX:
        if name.startswith(prefix):
            return kind
    if heuristics in KIND_BY_HEURISTICS:
        return KIND_BY_HEURISTICS[heuristics]
    return "cpp" if backend == "cpp" else "other"


def parse_output_code(data: bytes | str, *, path: str) -> OutputCode:
    """Return the kernels and the call() sequence of an output_code.py; never raises on content."""
    text, warnings = read_artifact(data, path)
    ascii = text.isascii()
    plain = not any(c in text for c in (_OTHER_BREAKS[:6] if ascii else _OTHER_BREAKS))
    # "\n" the only break: split("\n") gives splitlines()'s lines (and a last "") without testing every kind
    lines = text.split("\n") if plain else text.splitlines()
    if plain and not lines[-1]:
        lines.pop()
    parser = _Parser(path, lines, warnings)
    parser.ident = ASCII_IDENT if ascii else IDENT
    if CALL_FAST and plain:
        parser.text = text
    parser.run()
    return parser.result()


def parse_comments(block: list[str]) -> KernelComments:
    """Read Inductor's comment block above a kernel definition or a launch."""
    if len(block) == 2 and block[1].startswith(PROVENANCE_PREFIX) and (m := SOURCE_NODES.match(block[0])):
        # a launch's usual block: its source nodes, then its provenance handle
        return KernelComments(*_source_nodes(m), (), (), block[1][len(PROVENANCE_PREFIX) :].strip(), m.group(1) != "Unsorted ")
    source_nodes: tuple[str, ...] = ()
    aten: tuple[str, ...] = ()
    mapping: list[tuple[str, tuple[str, ...]]] = []
    fragment: list[str] = []
    handle = ""
    sorted_nodes = True
    section = ""
    for line in block:
        if section == "fragment" and line.startswith("#   "):  # no pattern below takes "#   "
            fragment.append(line[4:])
            continue
        m = SOURCE_NODES.match(line)
        if m:
            sorted_nodes = m.group(1) != "Unsorted "
            source_nodes, aten = _source_nodes(m)
            section = ""
            continue
        if line.startswith("# Source node to ATen node mapping:"):
            section = "mapping"
            continue
        if line.startswith("# Graph fragment:"):
            section = "fragment"
            continue
        m = PROVENANCE.match(line)
        if m:
            handle = m.group(1).strip()
            section = ""
            continue
        if section == "mapping":
            mm = MAPPING_LINE.match(line)
            if mm:
                mapping.append((mm.group(1).strip(), tuple(s.strip() for s in mm.group(2).split(","))))
                continue
            section = ""
        if section == "fragment" and line.startswith("#   "):
            fragment.append(line[4:])
    return KernelComments(source_nodes, aten, tuple(mapping), tuple(fragment), handle, sorted_nodes)


def _source_nodes(m: re.Match) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return the source nodes and original ATen ops of a SOURCE_NODES match, empty names dropped."""
    # map and filter run str.strip and the test for "" in C, not a Python loop a name (one per launch)
    source_nodes = tuple(map(str.strip, m.group(2).split(",")))
    if "" in source_nodes:
        source_nodes = tuple(filter(None, source_nodes))
    return source_nodes, tuple(filter(None, map(str.strip, (m.group(3) or "").split(","))))


class _Parser:
    def __init__(self, path: str, lines: list[str], warnings: list[ParseWarning]) -> None:
        self.path = path
        self.lines = lines
        self.warnings = warnings
        self.aot_id = ""
        self.kernels: list[Kernel] = []
        self.kernel_names: set[str] = set()
        self.launches: list[KernelLaunch] = []
        self.allocations: list[BufferAllocation] = []
        self.asserts: list[SizeAssert] = []
        self.inputs: list[str] = []
        self.known: set[str] = set()
        self.returns = ""
        self.saw_call = False
        self.text = ""  # set when call() may be read by the statement pattern
        self.ident = IDENT  # ASCII_IDENT when the text is ASCII: the same names, found faster

    def warn(self, lineno: int, why: str, text: str = "") -> None:
        self.warnings.append(ParseWarning(self.path, lineno, f"{why}: {text.strip()[:120]}" if text else why))

    def run(self) -> None:
        lines = self.lines
        n = len(lines)
        comments: list[str] = []
        i = 0
        if n and (m := AOT_ID.match(lines[0])):
            self.aot_id = m.group(1)
        while i < n:
            line = lines[i]
            if line.startswith("#"):
                comments.append(line)
                i += 1
                continue
            if line.startswith("async_compile.wait"):
                comments = []
                i += 1
                continue
            # the substrings first: most lines here are neither (one regex call less for each)
            m = KERNEL_DEF.match(line) if "= async_compile." in line else None
            if m:
                i = self._kernel(m, i, comments)
                comments = []
                continue
            m = CALL_DEF.match(line) if "def " in line else None
            if m:
                i = self._call_body(i, len(m.group(1)), m.group(2))
                comments = []
                continue
            if line.strip():
                comments = []
            i += 1
        if not self.saw_call:
            self.warn(0, "no call() function found: the file is cut short or not an Inductor output_code.py")
        elif not self.returns:
            self.warn(0, "call() has no return statement: the file looks cut short")

    # ------------------------------------------------------------------ kernels

    def _kernel(self, m: re.Match, i: int, comments: list[str]) -> int:
        """Record one kernel definition starting at line index i; return the index after it."""
        name, method = m.group(1), m.group(2)
        lines = self.lines
        j = i  # the line that opens the source (black-formatted files, torch 2.12: `r"""` alone)
        quote = None
        while j < len(lines) and (quote := _opening_quote(lines[j])) is None:
            j += 1
        j += 1
        source_start = j
        end = quote or SOURCE_END
        while j < len(lines) and not lines[j].startswith(end):
            j += 1
        if j >= len(lines):
            self.warn(i + 1, f"kernel {name}: source never closed (file cut short)")
        source = "\n".join(lines[source_start:j])
        backend = BACKEND_BY_METHOD.get(method, method)
        hm = HEURISTICS.search(source, 0, 4000) if backend == "triton" else None
        heuristics = hm.group(1) if hm else ""
        kernel_path = ""
        for c in comments:
            if c.startswith(KERNEL_PATH):
                kernel_path = c[len(KERNEL_PATH) :].strip()
        kernel = Kernel(
            name=name,
            backend=backend,
            kind=kernel_kind(name, backend, heuristics),
            heuristics=heuristics,
            kernel_path=kernel_path,
            comments=parse_comments(comments),
            source=source,
            line=i + 1,
            source_line=source_start + 1,
            end_line=min(j + 1, len(lines)),
        )
        self.kernels.append(kernel)
        self.kernel_names.add(name)
        return j + 1

    # ------------------------------------------------------------------ call()

    def _call_body(self, i: int, def_indent: int, function: str) -> int:
        """Read call() (or a partition) from its def line i; return the index of the line after it.

        Each line is one match of the statement pattern; `FAST_STATEMENTS` names the handler of each
        kind of match. A handler returns False when the line is not of its usual shape after all;
        that line, and any other, goes to the line reader (`_statement_at`), which may take the
        lines after it too (the matches then skip them).
        """
        self.saw_call = True
        if not self.text:
            return self._call_body_lines(i, def_indent, function)
        lines = self.lines
        n = len(lines)
        i += 1
        pos = sum(map(len, lines[:i])) + i  # every line ends with one "\n" here
        pending: list[str] = []
        handlers = {kind: getattr(self, name) for kind, name in FAST_STATEMENTS.items()}
        skip_to = 0
        for m in _call_pattern(def_indent, self.ident is ASCII_IDENT).finditer(self.text, pos):  # i: the line of m
            if i >= n:
                break
            if i < skip_to:
                i += 1
                continue
            i += 1
            kind = m.lastgroup
            # half the lines of a call() are comments or statements with nothing to keep: taken
            # here, not through a handler call (bench/parse_bench.py: 2 ms of a 50 ms parse)
            if kind == "comment":
                pending.append(m.group("comment"))
                continue
            if kind == "quiet" or kind == "blank":
                continue
            handler = handlers.get(kind)
            if handler is not None and handler(m, i, function, pending):
                continue
            raw = lines[i - 1]
            stripped = raw.strip()
            if not stripped:
                continue
            if len(raw) - len(raw.lstrip()) <= def_indent:
                return i - 1
            skip_to, consumed = self._statement_at(i - 1, stripped, function, pending)
            if consumed:
                pending.clear()
        return max(i, skip_to)

    # The handlers of the statement pattern's kinds: (match, line number, function, pending
    # comments) -> whether the line was taken. A launch takes the pending comments (and clears them).

    def _fast_launch(self, m, lineno, function, pending) -> bool:
        args = m.group("la")
        if _OPENERS.search(args) and _depth(args) > 0:
            return False
        self._launch(m.group("lk"), False, args, (), lineno, function, pending)
        pending.clear()
        return True

    def _fast_extern(self, m, lineno, function, pending) -> bool:
        args, lhs, callee = m.group("xa", "xl", "xc")
        if (lhs and lhs.startswith(_SLOW_LHS)) or callee == "extern_kernels.run" or (
            _OPENERS.search(args) and _depth(args) > 0
        ):
            return False
        if lhs:
            self.known.add(lhs)
        self._launch(callee, True, args, (lhs,) if lhs else (), lineno, function, pending)
        pending.clear()
        return True

    def _fast_alloc(self, m, lineno, function, pending) -> bool:
        lhs = m.group("al")
        if lhs.startswith(_SLOW_LHS):
            return False
        self.known.add(lhs)
        size, stride, dtype = m.group("as", "at", "ad")
        self.allocations.append(BufferAllocation(lhs, "empty_strided", size, stride, dtype, "", "", lineno))
        return True

    def _fast_reuse(self, m, lineno, function, pending) -> bool:
        lhs = m.group("rl")
        if lhs.startswith(_SLOW_LHS):
            return False
        self.known.add(lhs)
        self.allocations.append(BufferAllocation(lhs, "reuse", "", "", "", "", m.group("rd"), lineno))
        return True

    def _fast_alias(self, m, lineno, function, pending) -> bool:
        lhs = m.group("vl")
        if lhs.startswith(_SLOW_LHS) or "reinterpret_tensor" in self.kernel_names:
            return False
        self.known.add(lhs)
        rhs = m.group("alias")[len(lhs) + 3:].strip()
        if ELEMENT.match(rhs):  # `buf16 = buf15[0]`: an element of a call's tuple
            self.allocations.append(BufferAllocation(lhs, "element", "", "", "", "", rhs, lineno))
        return True

    def _fast_sizes(self, m, lineno, function, pending) -> bool:
        self.asserts.append(SizeAssert(*m.group("sn", "ss", "st"), lineno))
        return True

    def _fast_plain(self, m, lineno, function, pending) -> bool:
        callee, args = m.group("pk", "pa")
        if callee not in self.kernel_names or callee.startswith(_SLOW_LHS) or (
            _OPENERS.search(args) and _depth(args) > 0
        ):
            return False
        self._launch(callee, False, args, (), lineno, function, pending)
        pending.clear()
        return True

    def _call_body_lines(self, i: int, def_indent: int, function: str) -> int:
        lines = self.lines
        n = len(lines)
        i += 1
        pending: list[str] = []
        while i < n:
            raw = lines[i]
            stripped = raw.strip()
            if not stripped:
                i += 1
                continue
            indent = len(raw) - len(raw.lstrip())
            if indent <= def_indent:
                break
            i, consumed = self._statement_at(i, stripped, function, pending)
            if consumed:
                pending = []
        return i

    def _statement_at(self, i: int, stripped: str, function: str, pending: list[str]) -> tuple[int, bool]:
        """Read the statement starting at line index i (`stripped`: that line, stripped; not blank,
        inside the body), over as many lines as its brackets take; return the index after it and
        whether it consumed the pending comments."""
        lines = self.lines
        n = len(lines)
        lineno = i + 1
        i += 1
        if stripped.startswith("#"):
            pending.append(stripped)
            return i, False
        # no opening bracket: nothing left open (saves counting on the many short lines)
        depth = _depth(stripped) if "(" in stripped or "[" in stripped or "{" in stripped else 0
        while depth > 0 and i < n:  # a statement over several lines
            stripped += " " + lines[i].strip()
            depth += _depth(lines[i])
            i += 1
        return i, self._statement(stripped, lineno, function, pending)

    def _statement(self, s: str, lineno: int, function: str, pending: list[str]) -> bool:
        """Record one statement of call(); return True when it consumed the pending comments."""
        if s.startswith("return"):
            if function == "call":
                self.returns = s[len("return") :].strip()
            return False
        if s.startswith("assert_size_stride("):
            m = ASSERT_SIZE.match(s)
            if m:
                self.asserts.append(SizeAssert(m.group(1), m.group(2), m.group(3), lineno))
            else:
                self.warn(lineno, "size assert not understood", s)
            return False
        if s.startswith(QUIET_PREFIXES):
            return False
        m = UNPACK_ARGS.match(s)
        if m:
            names = [x.strip() for x in m.group(1).split(",") if x.strip()]
            if function == "call":
                self.inputs = names
            self.known.update(names)
            return False
        m = REUSE.match(s)
        if m:
            self.allocations.append(BufferAllocation(m.group(1), "reuse", "", "", "", "", m.group(3), lineno))
            self.known.add(m.group(1))
            return False
        m = LAUNCH_RUN.match(s)
        if m and (m.group(1) in self.kernel_names or m.group(1).startswith("triton_")):
            self._launch(m.group(1), False, m.group(2), (), lineno, function, pending)
            return True
        m = PLAIN_CALL.match(s)
        if m:
            callee = m.group(1)
            if callee in self.kernel_names:
                self._launch(callee, False, m.group(2), (), lineno, function, pending)
                return True
            if callee.startswith(EXTERN_PREFIXES):
                self._launch(callee, True, m.group(2), (), lineno, function, pending)
                return True
        m = ASSIGN.match(s)
        if m:
            return self._assignment(m.group(1), m.group(2), s, lineno, function, pending)
        self.warn(lineno, "statement in call() not understood", s)
        return False

    def _assignment(self, lhs: str, rhs: str, s: str, lineno: int, function: str, pending: list[str]) -> bool:
        names = tuple(x.strip() for x in lhs.split(","))
        self.known.update(names)
        m = ALLOC.match(rhs)
        if m:
            extra = split_top_level(m.group(4) or "")
            dtype = next((e for e in extra if e.startswith("torch.") or e.startswith("dtype=")), "")
            device = next((e for e in extra if "device" in e or e.startswith("'")), "")
            self.allocations.append(
                BufferAllocation(names[0], "empty_strided", m.group(2), m.group(3), dtype.removeprefix("dtype="), device, "", lineno)
            )
            return False
        m = POOL.match(rhs)
        if m:
            self.allocations.append(BufferAllocation(names[0], "alloc_from_pool", "", "", "", "", "", lineno))
            return False
        m = PLAIN_CALL.match(rhs)
        if m:
            callee = m.group(1)
            if callee in self.kernel_names:
                self._launch(callee, False, m.group(2), names, lineno, function, pending)
                return True
            if callee.startswith(EXTERN_PREFIXES):
                self._launch(callee, True, m.group(2), names, lineno, function, pending)
                return True
        m = ELEMENT.match(rhs)
        if m and len(names) == 1:  # `buf16 = buf15[0]`: an element of a call's tuple
            self.allocations.append(BufferAllocation(names[0], "element", "", "", "", "", rhs, lineno))
            return False
        # aliases, views, getitems and symbolic sizes: `buf7 = buf6[0]`, `s0 = arg0_1.size(0)`
        # and size expressions of dynamic shapes: `ps0 = 32*s50`, `triton_poi_fused_0_xnumel = 1984*s0`
        if IDENT.match(rhs) or rhs.startswith(("reinterpret_tensor(", "self.partitions", "(", "[")) or SIZE_EXPR.match(rhs):
            return False
        self.warn(lineno, "assignment in call() not understood", s)
        return False

    def _launch(self, kernel, is_extern, arg_text, outputs, lineno, function, pending) -> None:
        known = self.known
        # BUFFER_NAME without a regex call per name (`\d` is what isdecimal() takes)
        buffers = dict.fromkeys([i for i in self.ident.findall(arg_text) if i in known or (i[:3] == "buf" and i[3:].isdecimal())])
        out = tuple(outputs) + tuple(OUT_KWARG.findall(arg_text)) if "out=" in arg_text else tuple(outputs)
        self.launches.append(deferred(KernelLaunch, {
            "index": len(self.launches),
            "kernel": kernel.removeprefix("torch.ops.") if is_extern else kernel,
            "is_extern": is_extern,
            "buffers": tuple(buffers),
            "outputs": out,
            "comments": parse_comments(pending),
            "line": lineno,
            "function": function,
            "_fill": (_launch_args, (arg_text,)),
        }))

    def result(self) -> OutputCode:
        return OutputCode(
            path=self.path,
            aot_id=self.aot_id,
            kernels=tuple(self.kernels),
            launches=tuple(self.launches),
            allocations=tuple(self.allocations),
            asserts=tuple(self.asserts),
            graph_inputs=tuple(self.inputs),
            returns=self.returns,
            warnings=tuple(self.warnings),
        )


def _launch_args(field: str, arg_text: str) -> dict:
    """A launch's top-level argument texts (filled on first access)."""
    return {"args": tuple(split_top_level(arg_text))}


def _opening_quote(line: str) -> str | None:
    """The triple quote that opens a kernel's source on this line, if one does."""
    single, double = line.find(SOURCE_END), line.find(SOURCE_END_DOUBLE)
    if single < 0 and double < 0:
        return None
    return SOURCE_END if double < 0 or 0 <= single < double else SOURCE_END_DOUBLE


def _depth(text: str) -> int:
    return text.count("(") + text.count("[") + text.count("{") - text.count(")") - text.count("]") - text.count("}")
