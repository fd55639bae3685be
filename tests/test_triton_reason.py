"""A failed capture's one-line reason for a Triton compile error keeps the kernel, the offending
source line and where Triton's caret points (issue 33, point 8a: it stopped at
"Triton compile error while compiling: CompilationError: at 8:31:").

Triton is not installed on the CPU machine, so its CompilationError cannot be raised here. The
stand-in below builds its message in the shape triton/compiler/errors.py gives it
(CompilationError._format_message, triton-lang/triton at d7c57bee): "at LINE:COL:", a newline, the
kernel's source up to LINE (12 lines at most), a line of COL spaces and a caret, then the error. The
kernel is real: the longest Triton kernel of the H100 GPT-2 training capture, cut to its def as
Triton's JITFunction keeps it; the node is a real expression of it found with ast, as Triton's code
generator reports one; the error text is the one of pytorch/pytorch#164157.
"""

from __future__ import annotations

import ast
import sys

import pytest

from compile_viz.artifacts import parse_path
from compile_viz.record.reasons import CARET_MARK, MAX_REASON, exception_reason, triton_error
from compile_viz.store import RunStore
from tests.conftest import ROOT, THIRD_PARTY, compile_viz_cli

ERROR = "IncompatibleTypeErrorImpl('invalid operands of type pointer<fp16> and triton.language.float64')"
EXCERPT_LINES = 12  # CompilationError.source_line_count_max_in_message


class CompilationError(Exception):
    """Triton's exception as the capture child meets it: src, node, error_message, and its message."""

    def __init__(self, src: str, node: ast.AST, error_message: str | None):
        self.src, self.node, self.error_message = src, node, error_message
        shown = src.split("\n")[:node.lineno][-EXCERPT_LINES:] + [" " * node.col_offset + "^"]
        message = f"at {node.lineno}:{node.col_offset}:\n" + "\n".join(shown)
        super().__init__(message + (f"\n{error_message}" if error_message else ""))


class BackendCompilerFailed(Exception):
    """torch._dynamo.exc.BackendCompilerFailed's message shape (what Dynamo raises from it)."""

    def __init__(self, inner: Exception):
        super().__init__(f"backend='inductor' raised:\n{type(inner).__name__}: {inner}")


@pytest.fixture(scope="module")
def kernel():
    """(name, source from its def line) of a real Triton kernel."""
    graph = parse_path(str(THIRD_PARTY / "gpt2_train.zip")).graphs[0]
    k = max((k for k in graph.output_code.kernels if k.backend == "triton"), key=lambda k: len(k.source))
    return k.name, k.source[k.source.index("\ndef ") + 1:]


def _reason(src: str, node: ast.AST, error: str | None = ERROR) -> str:
    try:
        try:
            raise CompilationError(src, node, error)
        except CompilationError as inner:
            raise BackendCompilerFailed(inner) from inner
    except BackendCompilerFailed as e:
        return exception_reason(e, "compiling")


def _binop(src: str, near_top: bool) -> ast.BinOp:
    nodes = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.BinOp)]
    return min((n for n in nodes if (n.lineno <= EXCERPT_LINES) == near_top), key=lambda n: n.lineno)


@pytest.mark.parametrize("near_top", [True, False], ids=["def line in the excerpt", "def line cut from it"])
def test_the_reason_keeps_the_kernel_the_line_and_the_caret(kernel, near_top):
    name, src = kernel
    node = _binop(src, near_top)
    line = src.split("\n")[node.lineno - 1]
    reason = _reason(src, node)
    marked = (line[:node.col_offset] + CARET_MARK + line[node.col_offset:]).strip()
    short = f"{name[:39]}…{name[-39:]}"  # a 106-character name keeps its head and its tail
    assert reason == (f"Triton compile error while compiling: CompilationError in {short} "
                      f"at {node.lineno}:{node.col_offset}: {marked}: {ERROR}")
    assert "\n" not in reason and len(reason) <= MAX_REASON


def test_the_kernel_is_named_from_the_message_alone_when_the_def_line_is_in_it(kernel):
    """A message read as text (a recorded job's process record) names the kernel from its excerpt."""
    name, src = kernel
    node = _binop(src, near_top=True)
    said = triton_error(str(CompilationError(src, node, None)))
    assert said.startswith(f" in {name[:39]}…") and said.endswith(CARET_MARK + src.split("\n")[node.lineno - 1]
                                                                     [node.col_offset:].strip())


def test_other_shapes_keep_their_first_line(kernel):
    name, src = kernel
    node = _binop(src, near_top=False)
    assert triton_error("something else\nmore") == ": something else"
    old = triton_error(f"at 3:4:{src.split(chr(10))[0]}\n" + "\n".join(src.split("\n")[1:3]) + "\n    ^\nboom")
    assert old.startswith(f" in {name[:39]}…") and old.endswith(": boom")  # triton < 3.0: no newline after "at L:C:"
    unavailable = triton_error(f"at {node.lineno}:{node.col_offset}:\n <source unavailable>\n{ERROR}")
    assert unavailable == f" at {node.lineno}:{node.col_offset}: <source unavailable> {ERROR}"


@pytest.mark.slow
def test_a_recorded_job_that_dies_of_it_says_the_same(kernel, tmp_path):
    """`compile-viz record` of a job that raises it: the hook keeps Triton's text whole and the run's
    reason names the kernel, the line and the caret as a capture's does (not the message flattened)."""
    name, src = kernel
    node = _binop(src, near_top=False)
    (tmp_path / "kernel.py").write_text(src, encoding="utf-8")
    job = ROOT / "tests" / "jobs" / "raise_triton_error.py"
    done = compile_viz_cli("record", "--home", str(tmp_path / "home"), "--", sys.executable, str(job),
                           str(tmp_path / "kernel.py"), str(node.lineno), ERROR, timeout=300)
    assert done.returncode != 0
    (run,) = RunStore(tmp_path / "home").list_runs()
    line = src.split("\n")[node.lineno - 1]
    marked = (line[:node.col_offset] + CARET_MARK + line[node.col_offset:]).strip()
    short = f"{name[:39]}…{name[-39:]}"
    assert run.reason.startswith(f"exited with code 1: Triton compile error: CompilationError in {short} "
                                 f"at {node.lineno}:{node.col_offset}: {marked}: {ERROR} (at "), run.reason
    assert "\n" not in run.reason and len(run.reason) <= MAX_REASON
