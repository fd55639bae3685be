"""What differs between torch versions in the debug artifacts, as data.

`DIFFERENCES` is the table the parsers were written against, one row per difference: the torch
versions that write it, the artifact, what differs, and the name in the parsers that reads it.
`docs/torch-versions.md` is generated from it (`python scripts/gen_version_docs.py`; a test checks
the page). The spellings themselves are the constants below, imported by the parsers, so that a
new version's spelling is one more entry here rather than another branch in a parser.
Stdlib only.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.frozen import frozen

# The versions whose real artifacts the tests parse (../shared/corpus, sample_runs/, fixtures, a
# live CPU compile), with where they come from.
TESTED = (
    ("2.0.1", "GPU, Triton", "public corpus: packt-accelerate-pytorch2-ch3"),
    ("2.3.1", "GPU, Triton, FSDP2", "public corpus: garrett361-learn-torch-2.3.1-fsdp2"),
    ("2.4.1", "CPU, C++", "public corpus: dwarez-torch-compile-blogpost"),
    ("2.5.1", "GPU, Triton, FSDP2", "public corpus: garrett361-learn-torch-2.5.1-fsdp-mlp"),
    ("2.6.x", "GPU, Triton (files only)", "public corpus: tspeterkim-dnnfusion-torch"),
    ("2.7.0a0", "GPU, Triton, dynamic", "public corpus: ngocson2vn-cpp-scheduler-debug-bmm"),
    ("2.11.0", "H100, Triton", "gpu-h100-torch2.11 corpus, sample_runs/, tests/fixtures/third_party/"),
    ("2.12.1", "CPU, C++", "public corpus: noisystreet-deep-dive-torch-compile"),
    ("2.13.0", "CPU, C++", "a live torch.compile in the test suite"),
)


@frozen(slots=True)
class Difference:
    """One way a torch version writes an artifact differently, and what here reads it."""

    torch: str  # the versions that write it, e.g. "2.0"
    artifact: str
    what: str
    read_by: str  # the constant or function that reads it


DIFFERENCES = (
    Difference("2.0", "run folder", "graph folders under `aot_torchinductor/` (later: `torchinductor/`)", "GRAPH_PARENTS"),
    Difference("2.0", "fx_graph_*.py", 'annotations unquoted: `x: f32[4, 4] = ...` (later: `x: "f32[4, 4]" = ...`)',
               "fx_graph.STATEMENT, NODE_LINE"),
    Difference("2.0-2.7", "fx_graph_*.py", "the file ends with the last line's indentation, not a newline",
               "text.cut_warning"),
    Difference("any", "fx_graph_*.py", "inference and backward dumps start `class <lambda>(...)`: not valid Python",
               "fx_graph.CLASS_LINE"),
    Difference("2.0-2.4", "ir_*_fusion.txt", "scheduler nodes named after their buffer (`buf1`, `buf1_buf2`; later `op1`)"
               " with no `outputs` block: the node's buffer is its name, its users `buf1.users`",
               "scheduler_ir._buffer_named_outputs, BUFFER_NAME"),
    Difference("2.0", "ir_*_fusion.txt", "no `.users` lines; fused nodes `FusedSchedulerNode(NoneType)` list members as"
               " `snodes = ['buf2', 'buf3']`; `MemoryDep(name='buf1', index=c0, size=(8,))`",
               "scheduler_ir._members, ir_values.parse_dependencies"),
    Difference("2.1-2.4", "ir_post_fusion.txt", "a fused node's members indented four spaces under it",
               "MEMBER_INDENT, dedent_members"),
    Difference("2.4", "ir_*_fusion.txt", "`buf0_layout = FixedLayout(...)` lines give buffer layouts",
               "scheduler_ir.LAYOUT_LINE"),
    Difference("2.5", "ir_*_fusion.txt", "`op6 Triton code:` and the node's kernel as an indented block", "CODE_BLOCK"),
    Difference("2.0", "output_code.py", "kernels `triton__0 = async_compile.triton('''...''')` with no name argument;"
               " `@pointwise(...)` decorators; fallbacks called as `aten.convolution(...)`",
               "output_code.KERNEL_DEF, HEURISTICS, EXTERN_PREFIXES"),
    Difference("2.7+", "output_code.py", "grid-less launches `.run(buf1, 5952, stream=stream0)`; dynamic sizes assigned"
               " in call(): `ps0 = 32*s50`, `triton_poi_fused_0_xnumel = 1984*s0`", "output_code.SIZE_EXPR"),
    Difference("2.12", "output_code.py", 'black-formatted: kernel source opened by `r"""` on its own line;'
               " `class Runner` with `def call(self, args)` and `(arg0_1,) = args`",
               "SOURCE_QUOTES, output_code.UNPACK_ARGS"),
    Difference("2.7+", "provenance JSON", "keys carry a debug handle (`cpp_fused_sin_0:1`); older: bare kernel names",
               "provenance.parse_provenance"),
)

GRAPH_PARENTS = ("torchinductor", "aot_torchinductor")  # the folder of graph folders in a run folder
SOURCE_QUOTES = ("'''", '"""')  # what opens and closes a kernel's source in output_code.py

# Torch 2.1 to 2.4 print a fused node's members indented by four spaces under it
# (`    buf1_buf2.snodes[0] =`, then the member's own lines); later versions print them at column 0.
MEMBER_INDENT = "    "
INDENTED_SNODES = re.compile(r"    \w+\.snodes\[\d+\] =")
# Torch 2.5 writes the kernel of some nodes after them: `op6 Triton code:` and an indented block.
CODE_BLOCK = re.compile(r"^(\w+) (?:Triton|C\+\+|CPP|Halide) code:\s*$")


def _has_indented_snodes(text: str) -> bool:
    """Whether a `.snodes[` line is indented; a few str.find calls instead of a multi-line search."""
    at = text.find(".snodes[")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        if INDENTED_SNODES.match(text, line_start):
            return True
        at = text.find(".snodes[", at + 8)
    return False


def dedent_members(text: str) -> str:
    """The text with indented member blocks moved to column 0 (same lines, same line numbers)."""
    if not _has_indented_snodes(text):
        return text
    out = []
    inside = False
    for line in text.split("\n"):
        if inside and line.strip() and not line.startswith(MEMBER_INDENT):
            inside = False
        elif not inside and INDENTED_SNODES.match(line):
            inside = True
        out.append(line[len(MEMBER_INDENT):] if inside and line.startswith(MEMBER_INDENT) else line)
    return "\n".join(out)


def members_from_name(name: str) -> tuple[str, ...]:
    """`op1_op2_op3` -> (op1, op2, op3); `buf1_buf2` (torch 2.0 to 2.4) likewise. Used only when
    a fused node lists no members."""
    parts = re.findall(r"(?:op|buf)\d+", name)
    return tuple(parts) if "_".join(parts) == name else ()


def markdown() -> str:
    """docs/torch-versions.md: the versions tested and what differs between them."""
    lines = [
        "# Torch versions",
        "",
        "Generated from `compile_viz/artifacts/versions.py` by `python scripts/gen_version_docs.py`;"
        " do not edit by hand.",
        "",
        "## Tested",
        "",
        "Every version below has real artifacts in the test suite; each parses with no warning that is"
        " not true of the file, and its counts equal independent greps of the raw files.",
        "",
        "| torch | backend | artifacts |",
        "| --- | --- | --- |",
        *(f"| {v} | {b} | {src} |" for v, b, src in TESTED),
        "",
        "## What differs, and what reads it",
        "",
        "| torch | artifact | difference | read by |",
        "| --- | --- | --- | --- |",
        *(f"| {d.torch} | {d.artifact} | {d.what} | `{d.read_by}` |" for d in DIFFERENCES),
        "",
    ]
    return "\n".join(lines)
