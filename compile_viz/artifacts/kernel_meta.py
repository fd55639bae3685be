"""Read a Triton kernel's `triton_meta` / `inductor_meta` decorator arguments as data.

They are Python literals with a few calls inside (`DeviceProperties(...)`, `set()`), so we walk
the expression tree with `ast` and never evaluate anything. Done on demand, not at parse time.
"""

from __future__ import annotations

import ast
import re
from dataclasses import field
from functools import lru_cache

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.model import Kernel
from compile_viz.artifacts.text import matching_paren

ARGUMENT = re.compile(r"\b(size_hints|triton_meta|inductor_meta)=")


@frozen
class KernelMeta:
    """What the decorator says about a kernel; empty dicts where it is absent or unreadable."""

    size_hints: dict = field(default_factory=dict)
    triton_meta: dict = field(default_factory=dict)
    inductor_meta: dict = field(default_factory=dict)

    @property
    def signature(self) -> dict:
        return self.triton_meta.get("signature", {}) if isinstance(self.triton_meta, dict) else {}

    @property
    def mutated_args(self) -> list:
        return list(self.inductor_meta.get("mutated_arg_names", []) or [])

    def count(self, key: str) -> int | None:
        value = self.inductor_meta.get(key)
        return value if isinstance(value, int) else None


def _literal(node: ast.AST):
    """Turn a literal-ish expression into data; calls become {"__call__": name, **kwargs}."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {_key(k): _literal(v) for k, v in zip(node.keys, node.values, strict=False)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Set):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name == "set" and not node.args:
            return []
        out = {"__call__": name}
        out.update({kw.arg or "**": _literal(kw.value) for kw in node.keywords})
        if node.args:
            out["args"] = [_literal(a) for a in node.args]
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal(node.operand)
        return -value if isinstance(value, (int, float)) else f"-{value}"
    return ast.unparse(node)


def _key(node):
    value = _literal(node) if node is not None else "**"
    return str(value) if isinstance(value, (list, dict)) else value


@lru_cache(maxsize=4096)
def _meta_of_source(source: str) -> KernelMeta:
    parts: dict[str, dict] = {}
    for m in ARGUMENT.finditer(source, 0, 20000):
        start = m.end()
        end = matching_paren(source, start)
        if end < 0:
            continue
        try:
            value = _literal(ast.parse(source[start : end + 1], mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            continue
        parts[m.group(1)] = value if isinstance(value, dict) else {"value": value}
    return KernelMeta(**parts)


def kernel_meta(kernel: Kernel) -> KernelMeta:
    """Return the kernel's decorator metadata (cached); empty for C++ kernels."""
    if kernel.backend != "triton":
        return KernelMeta()
    return _meta_of_source(kernel.source)
