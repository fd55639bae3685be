"""Short names for kernels, for a class to read from the back of the room (projector mode).

Inductor names a kernel after its kind and the ATen ops it fused, sorted and joined by "_", plus a
number: `triton_poi_fused__unsafe_view_add_bmm_cat_clone_cos_mul_neg_sin_slice_transpose_unsqueeze_view_2`.
`short_kernel_name` reads the op list back ("K2 · fused add, bmm, cat, +5") leaving out the ops that
only move or reshape data (views, transposes, copies), which are no work to point at.
"""

from __future__ import annotations

import re

# The kind prefixes Inductor writes before "fused" (torch/_inductor/codegen: triton_poi, cpp_fused ...).
_KERNEL = re.compile(r"^(?:triton_(?:poi|red|per|tem|for|spl|mix)_|cpp_|halide_|mps_)?(?:fused_?)(?P<ops>.*?)(?:_(?P<n>\d+))?$")
# ATen ops whose names hold "_": read as one op, longest first. Others are one word each.
MULTI_WORD_OPS = tuple(sorted((
    "_unsafe_view", "_to_copy", "_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    "native_layer_norm", "native_layer_norm_backward", "native_batch_norm", "native_batch_norm_backward",
    "_native_batch_norm_legit_functional", "_native_batch_norm_legit_no_training", "native_dropout",
    "native_dropout_backward", "gelu_backward", "threshold_backward", "sigmoid_backward", "tanh_backward",
    "silu_backward", "embedding_dense_backward", "nll_loss_forward", "nll_loss_backward", "scalar_tensor",
    "full_default", "new_zeros", "new_ones", "new_empty", "zeros_like", "ones_like", "empty_like",
    "constant_pad_nd", "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d",
    "convolution_backward", "index_put", "index_select", "scatter_add", "scatter_reduce", "slice_scatter",
    "select_scatter", "as_strided", "prepare_softmax_online", "clamp_min", "clamp_max", "logical_not",
    "logical_and", "logical_or", "bitwise_and", "bitwise_or", "masked_fill", "var_mean", "rsqrt",
    "split_with_sizes", "lift_fresh", "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "upsample_nearest2d", "upsample_bilinear2d", "leaky_relu",
    "hardtanh", "group_norm", "native_group_norm", "native_group_norm_backward",
), key=len, reverse=True))
# Ops that only move, view or cast data: left out of a short name while another op remains.
MOVES = frozenset({
    "view", "_unsafe_view", "reshape", "clone", "permute", "transpose", "t", "unsqueeze", "squeeze", "expand",
    "slice", "select", "as_strided", "_to_copy", "copy", "alias", "split", "split_with_sizes", "cat", "stack",
    "full_default", "scalar_tensor", "arange", "iota", "lift_fresh", "detach",
})
MAX_OPS = 3


def fused_ops(kernel: str) -> tuple[str, ...]:
    """Return the ATen ops a generated kernel's name lists, in its order (none for an extern call or
    a name that is not Inductor's `<kind>_fused_<ops>_<n>`)."""
    m = _KERNEL.match(kernel.rsplit(".", 1)[-1]) if "fused" in kernel else None
    if not m or not m.group("ops"):
        return ()
    rest, ops = m.group("ops"), []
    while rest:
        rest = rest[1:] if rest.startswith("_") and not any(rest.startswith(w) for w in MULTI_WORD_OPS) else rest
        word = next((w for w in MULTI_WORD_OPS if rest.startswith(w) and (len(rest) == len(w) or rest[len(w)] == "_")),
                    None)
        if word is None:
            word, _, _ = rest.partition("_")
        if word:
            ops.append(word)
        rest = rest[len(word):]
    return tuple(dict.fromkeys(ops))


def kernel_number(kernel: str) -> int | None:
    """Return the number Inductor ended a generated kernel's name with (`..._3` -> 3), else None."""
    m = re.search(r"_(\d+)$", kernel)
    return int(m.group(1)) if m and "fused" in kernel else None


def short_kernel_name(kernel: str, launch: int | None = None) -> str:
    """Return a name to read aloud: `K3 · fused add, gelu` for a generated kernel (its own number,
    the ops that do work, at most three and a count of the rest); `mm (library)` for an extern call,
    with `#launch` when given; any other name as it is."""
    ops = fused_ops(kernel)
    number = kernel_number(kernel)
    if not ops:
        if kernel.startswith(("extern_kernels.", "aten.")) or "." in kernel:
            op = kernel.split(".")[1] if kernel.startswith("aten.") else kernel.rsplit(".", 1)[-1]
            return f"#{launch} · {op.lstrip('_')} (library)" if launch is not None else f"{op.lstrip('_')} (library)"
        return kernel
    work = [o.lstrip("_") for o in ops if o not in MOVES] or [o.lstrip("_") for o in ops]
    shown = ", ".join(work[:MAX_OPS]) + (f", +{len(work) - MAX_OPS}" if len(work) > MAX_OPS else "")
    head = f"K{number}" if number is not None else (f"#{launch}" if launch is not None else "K")
    return f"{head} · fused {shown}"
