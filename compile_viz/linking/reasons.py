"""Why an FX node has no kernel launch of its own: said in Inductor's terms, for the UI and the JSON."""

from __future__ import annotations

from functools import lru_cache

from compile_viz.artifacts.model import FxNode

VIEW_OPS = {
    "view", "reshape", "_unsafe_view", "permute", "transpose", "t", "expand", "unsqueeze", "squeeze",
    "slice", "select", "as_strided", "alias", "view_as", "unfold", "split", "split_with_sizes",
    "unbind", "narrow", "diagonal", "view_as_real", "view_as_complex", "lift_fresh_copy", "detach",
}
CONSTANT_OPS = {"full", "scalar_tensor", "zeros", "ones", "arange", "iota", "empty", "full_like", "zeros_like", "ones_like"}
SYMBOLIC = ("sym_size", "sym_stride", "sym_numel", "sym_storage_offset")

REASONS = {
    "placeholder": "graph input: passed to call() by the caller",
    "output": "graph output: the tuple call() returns",
    "get_attr": "constant or parameter attribute: read by the kernels that use it",
    "view": "view: no kernel; folded into the indexing of the kernels that read it",
    "constant": "constant: generated inside the kernels that use it",
    "symbolic": "symbolic size: computed on the host, not on the device",
    "getitem": "tuple element: produced by the kernel of the node it indexes",
    "dead": "unused: removed by dead-code elimination",
    "unmapped": "",
}


@lru_cache(maxsize=4096)
class _OpNames(dict):
    """Target -> `op_name`, worked out once per target: a graph repeats a few hundred targets over
    thousands of nodes, and the linkers ask for every node (a lookup, not a split)."""

    def __missing__(self, target: str) -> str:
        parts = target.split(".")
        name = self[target] = parts[1] if len(parts) >= 2 else target
        return name


# read it with `[]` in hot loops (a dict lookup, not a call)
OP_NAMES = _OpNames()


def op_name(target: str) -> str:
    """`aten.view.default` -> `view`; `prims.iota.default` -> `iota` (a graph repeats its targets)."""
    return OP_NAMES[target]


def no_kernel_reason(node: FxNode, users) -> str:
    """Return why the node launches nothing, or "" when we cannot tell (an unmapped node)."""
    return reason_of(node.op, node.target, node.dtype, bool(users))


@lru_cache(maxsize=4096)
def reason_of(op_kind: str, target: str, dtype: str | None, has_users: bool) -> str:
    """no_kernel_reason from the only things it looks at; a graph repeats them many times."""
    if op_kind in ("placeholder", "output", "get_attr"):
        return REASONS[op_kind]
    if target == "operator.getitem":
        return REASONS["getitem"]
    op = op_name(target)
    if any(s in target for s in SYMBOLIC) or dtype == "Sym" or target == "expr":
        return REASONS["symbolic"]
    if op in VIEW_OPS:
        return REASONS["view"]
    if op in CONSTANT_OPS:
        return REASONS["constant"]
    if not has_users:
        return REASONS["dead"]
    return REASONS["unmapped"]


def op_matches(target: str, op: str) -> bool:
    """`aten.mm.default` matches extern op `mm`; a fallback `aten.foo.default` matches itself."""
    if op.startswith("inductor_ops."):  # output_code.py's alias of torch.ops.inductor
        op = "inductor." + op[len("inductor_ops."):]
    if target == op or ("." in op and target.startswith(op + ".")):
        return True  # an op called without its overload: `aten.convolution(...)` (torch 2.0)
    parts = target.split(".")
    return len(parts) >= 2 and parts[1] == op
