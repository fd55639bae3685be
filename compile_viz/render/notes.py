"""Teaching notes: one short paragraph per kernel kind and per artifact (Markdown, our own text)."""

from __future__ import annotations

KIND_NOTES: dict[str, str] = {
    "pointwise": (
        "**Pointwise**: every output element depends on the matching input elements only. "
        "Inductor fuses chains of them into one kernel, so intermediates stay in registers "
        "instead of going through memory. Memory-bound: its cost is bytes read + written."
    ),
    "reduction": (
        "**Reduction**: sums, means, max... over one dimension, too long to fit in one block, "
        "so the kernel loops over it (`RBLOCK` chunks). Pointwise ops before and after the "
        "reduction are often fused in (a prologue and an epilogue)."
    ),
    "persistent_reduction": (
        "**Persistent reduction**: a reduction short enough that one block holds the whole "
        "reduced dimension in registers: no loop, one pass. Softmax and layer norm over a "
        "hidden size of a few thousand usually become one of these."
    ),
    "template": (
        "**Template**: a kernel from a hand-written template (matmul, convolution), picked by "
        "autotuning, often with pointwise epilogues fused in. Seen with `max-autotune`."
    ),
    "extern": (
        "**Extern call**: Inductor calls a library (cuBLAS `mm`/`addmm`, cuDNN convolution, "
        "flash attention) instead of generating code. Nothing fuses into it, except the bias "
        "of `addmm`; the ops around it become their own kernels."
    ),
    "foreach": (
        "**Foreach**: one kernel that applies the same pointwise ops to many tensors (optimizer "
        "updates): fewer launches, same memory traffic."
    ),
    "cpp": (
        "**C++ kernel**: on the CPU Inductor writes C++ (OpenMP loops, vectorised with "
        "`at::vec`), compiled when the module loads. Fusion works as on the GPU: one loop nest "
        "per fused group."
    ),
    "none": (
        "**No kernel**: views, reshapes and `getitem` cost nothing at run time (they only change "
        "strides), inputs are arguments, and some ops were folded into a neighbour's indexing."
    ),
}

ARTIFACT_NOTES: dict[str, str] = {
    "fx_graph_readable.py": (
        "**AOT graph** (`fx_graph_readable.py`): the ATen-level graph AOTAutograd handed to "
        "Inductor, after decompositions, before Inductor's own passes. `# File:` comments say "
        "which line of your code each op came from."
    ),
    "fx_graph_transformed.py": (
        "**Post-grad graph** (`fx_graph_transformed.py`): the same graph after Inductor's "
        "pattern passes (e.g. `mm + add` into `addmm`, dead code removed). It is what the "
        "scheduler lowers, so its node names are the ones the kernels mention."
    ),
    "ir_pre_fusion.txt": (
        "**ir_pre_fusion.txt**: one scheduler node per lowered buffer, before fusion. Each node "
        "lists the buffers it reads and writes: this is the memory traffic eager would pay."
    ),
    "ir_post_fusion.txt": (
        "**ir_post_fusion.txt**: the same after fusion: a `FusedSchedulerNode` holds the nodes "
        "that became one kernel. Buffers written and read only inside a group never reach "
        "memory: they were fused away."
    ),
    "output_code.py": (
        "**output_code.py**: the generated module: kernel definitions (Triton or C++), then "
        "`call()`, which allocates buffers and launches kernels and library calls in order."
    ),
    "graph_break": (
        "**Graph break**: Dynamo could not trace something (`.item()`, `print`, data-dependent "
        "control flow), so the function is split: each piece is compiled separately and Python "
        "runs between them. Every break costs a round trip to Python and blocks fusion across it."
    ),
}
