"""One paragraph per fusion refusal kind (artifacts/fusion_log.REASON_KINDS): what it means and
what a user can change. Markdown, our own words; shown in the "Why not fused?" section."""

from __future__ import annotations

REASON_NOTES: dict[str, str] = {
    "no_shared_data": (
        "**No shared data**: Inductor scores a pair by the memory accesses both nodes make alike: the "
        "same buffer at the same index over the same loop ranges (`score_fusion_memory`). This pair "
        "scored 0, so by Inductor's count fusing would save no loads or stores, and it does not try. "
        "Either the two touch no buffer in common, or they touch one through different index patterns "
        "(two slices of one projection, a table read for another number of heads); when they share a "
        "buffer, the answer names it with both accesses. Usually nothing to fix; "
        "`--option aggressive_fusion=True` lets Inductor fuse pointwise pairs that score 0."
    ),
    "indexing_mismatch": (
        "**No shared data (indexing mismatch)**: both nodes touch the same buffer, but with different "
        "index expressions (one reads it transposed, or strided), so a fused loop would not read each "
        "element once. A `.contiguous()` or a layout chosen once for both users can line them up."
    ),
    "max_fusion_size": (
        "**Exceeds max fusion**: the fused node would hold more scheduler nodes than "
        "`torch._inductor.config.max_fusion_size` (64). Raise it (`--option max_fusion_size=128`) to "
        "let bigger kernels form; compile time and register pressure grow with it."
    ),
    "peak_memory": (
        "**Would increase peak memory**: fusing would keep buffers alive longer than the program's "
        "current peak. A memory heuristic, on by default; it matters for big activations."
    ),
    "too_far": (
        "**Too far apart**: the two nodes are far from each other in the program's order (more than "
        "64 nodes apart); fusing them would stretch buffers' lifetimes across everything in between and "
        "raise peak memory. Computing related results next to each other, or as one operation (one "
        "reduction over a stacked tensor instead of many), gives Inductor neighbours it can fuse."
    ),
    "low_shared_data": (
        "**Too little shared data**: the pair shares less data than "
        "`score_fusion_memory_threshold` asks, so fusing them is not worth a bigger kernel."
    ),
    "too_many_io": (
        "**Too many inputs and outputs**: the fused kernel would read and write more buffers than "
        "`max_fusion_unique_io_buffers` allows."
    ),
    "intermediate_nodes": (
        "**Intermediate nodes in between**: a third node sits on a path between the two (it consumes "
        "the first and feeds the second), so fusing the two would have to take it too. Often it is an "
        "extern call (a matmul, an attention) or a node that was not fusable. Fusion in a later round, "
        "or a template (`max_autotune`) for the matmul in between, can remove it."
    ),
    "cycle": (
        "**Would create a cycle**: the fused node would both feed and depend on another node. Not fixable "
        "from the outside; it is how the data flows."
    ),
    "memory_deps": (
        "**Memory dependencies do not match**: the consumer reads the producer's output with another "
        "index pattern (a transpose, a broadcast over another axis), so the producer's values are not "
        "in registers where the consumer needs them. Changing the layout of the intermediate (or "
        "fusing at the source, before the transpose) can help."
    ),
    "numel_mismatch": (
        "**Sizes do not fit one loop**: the two nodes iterate over different sizes (a reduction over one "
        "shape, a pointwise over another), so one kernel's loop nest cannot serve both. Reductions over "
        "the same axis and shape fuse; reshaping so they line up can help."
    ),
    "tiling": (
        "**Tiling does not fit**: the two nodes would need different loop tilings (block shapes) in one "
        "kernel."
    ),
    "register_spilling": (
        "**Register spilling**: Inductor benchmarked the fused kernel and it spilled registers (too much "
        "live state); the separate kernels run faster. Seen with `benchmark_fusion`."
    ),
    "extern_producer": (
        "**Producer is an extern call**: the first node runs in a library kernel (cuBLAS, cuDNN), which "
        "cannot take a fused epilogue. With `max_autotune`, matmuls become Triton templates that can."
    ),
    "extern_consumer": (
        "**Consumer is an extern call**: a library kernel cannot take a generated prologue; its inputs "
        "are written to memory first."
    ),
    "nop": "**No-op node**: nothing to fuse (a node that only allocates or aliases).",
    "mutation": (
        "**Mutation**: the epilogue reads buffers other than the one the template mutates; fusing would "
        "read a value before or after it changes."
    ),
    "layout": "**Different layouts**: the two nodes use different buffer layouts for the same data.",
    "order": "**Order**: the first node must run before the second, but fusing would reverse them.",
    "template_epilogue": (
        "**Template epilogue refused**: the matmul/convolution template could not take this epilogue "
        "(its shape or indexing does not match the template's output tile)."
    ),
    "template_prologue": (
        "**Template prologue refused**: the template could not take this node as a prologue (only "
        "pointwise nodes with a single use, and only when it reads fewer bytes)."
    ),
    "grouped": "**Grouped node**: a grouped (combo) node is never fused with others.",
    "disabled": "**Disabled**: fusion for this buffer was turned off explicitly.",
    "device": "**Different devices**: the two nodes run on different devices.",
    "foreach": (
        "**Foreach**: foreach (multi-tensor) nodes fuse only with matching lists of tensors, never with "
        "reductions."
    ),
    "split_scan": "**Split scan**: a split scan (cumsum over a long axis) cannot fuse with reductions.",
}

NO_LOG_NOTE = (
    "This run has no fusion log. Runs captured by compile_viz since the fusion-log release carry "
    "`logs/fusion.log`; capture the model again (Compile page, or `compile-viz capture`). For a run made "
    "elsewhere, save the output of `TORCH_LOGS=\"+fusion\" python your_script.py 2> fusion.log` and put "
    "`fusion.log` beside the `torch_compile_debug` folder before you import it."
)


def reason_note(kind: str) -> str:
    return REASON_NOTES.get(kind, f"**{kind.replace('_', ' ')}**: Inductor's own words are in the table.")
