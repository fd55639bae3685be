"""A job that dies of a Triton compile error, as Inductor raises one (tests/test_triton_reason.py):
Triton's CompilationError (the shape of triton/compiler/errors.py) for the kernel source in the file
argv[1], at the first binary operation of its line argv[2], wrapped as Dynamo wraps it."""

import ast
import sys

EXCERPT_LINES = 12


class CompilationError(Exception):
    def __init__(self, src, node, error_message):
        self.src, self.node, self.error_message = src, node, error_message
        shown = src.split("\n")[:node.lineno][-EXCERPT_LINES:] + [" " * node.col_offset + "^"]
        super().__init__(f"at {node.lineno}:{node.col_offset}:\n" + "\n".join(shown) + f"\n{error_message}")


class BackendCompilerFailed(Exception):
    pass


src = open(sys.argv[1], encoding="utf-8").read()
node = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.BinOp) and n.lineno == int(sys.argv[2]))
try:
    raise CompilationError(src, node, sys.argv[3])
except CompilationError as inner:
    raise BackendCompilerFailed(f"backend='inductor' raised:\n{type(inner).__name__}: {inner}") from inner
