"""The lessons of the Lessons page, as data: the path of a course on torch.compile, each lesson a
few steps, each step a view of a bundled run with one thing selected. No code here: the Lessons
page and the Viewer's lesson bar read it, tests/test_lessons.py checks every step against its run.

A step opens `page` with `params` (page_registry.page_url adds the lesson and step, and present=1
while projector mode is on). A lesson whose bundled run is missing (`needs`: a GPU capture the
lead makes) is listed with what it waits for, and its steps are not linked.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Step:
    title: str
    text: str  # Markdown, a few sentences said over the view
    run: str  # a bundled run: "bundled:NAME"
    graph: str  # graph folder id
    kernel: str  # the kernel selected (the thing the step names); "" for none
    launch: int | None
    extra: dict = field(default_factory=dict)  # more of the Viewer's parameters (why=, view=)
    page: str = "viewer"

    def params(self) -> dict:
        return {"run": self.run, "graph": self.graph, "kernel": self.kernel, "launch": self.launch, **self.extra}


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    idea: str  # one sentence: what the class should leave with
    steps: tuple[Step, ...]
    needs: tuple[str, ...] = ()  # sample models (sample_models/) still to be captured on a GPU and bundled


G0, G1 = "model__0_inference_0.0", "model__1_inference_1.1"
GPT_FWD, GPT_BWD = "model__0_forward_1.0", "model__0_backward_3.1"

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "dynamo", "What Dynamo captures, and where it breaks",
        "Dynamo turns Python into graphs; what it cannot put in a graph ends one and starts the next.",
        (
            Step("Before the print: one graph", "Dynamo traced `forward()` up to the `print`: `sin` and `* 2` "
                 "are one graph, and Inductor made one kernel of them.",
                 "bundled:graph_break_print", G0, "triton_poi_fused_mul_sin_0", 0),
            Step("After the print: a second graph", "The `print` ran in plain Python; Dynamo resumed after it in "
                 "a second graph, so `relu` and `+ 1` are a kernel of their own. One kernel was possible; the "
                 "break made two.", "bundled:graph_break_print", G1, "triton_poi_fused_add_relu_0", 0),
            Step("`.item()` ends a graph too", "`.item()` asks for a Python number, which only running the "
                 "graph can give: the mean and `sin` before it are one reduction kernel.",
                 "bundled:graph_break_item", G0, "triton_red_fused_mean_sin_0", 0),
            Step("... and the branch on it runs in Python", "The `if` on that number ran in Python; the branch "
                 "taken became the second graph.", "bundled:graph_break_item", G1, "triton_poi_fused_add_sigmoid_0", 0),
            Step("A break inside a library call", "Dynamo skips functions it is told not to trace, here "
                 "torch's `pack_padded_sequence`: the graph ends before the call, which runs eagerly. This "
                 "kernel is the last work compiled before it (a CPU capture: a C++ kernel).",
                 "bundled:graph_break_library", G0, "cpp_fused_relu_view_0", 1),
        ),
    ),
    Lesson(
        "aot", "AOTAutograd and the partitioner",
        "Training compiles two graphs: AOTAutograd traces forward and backward together, the partitioner "
        "cuts them, and what the backward needs is either saved or recomputed.",
        (
            Step("Forward: the MLP's GELU", "In the forward graph GELU is one pointwise kernel after the "
                 "matmul (a library call).", "bundled:gpt_small", GPT_FWD, "triton_poi_fused_gelu_view_10", 14),
            Step("Backward: GELU's gradient", "The backward graph is a second compile. This kernel computes "
                 "GELU's gradient, and `gelu` is in its name: the partitioner chose to recompute GELU here "
                 "rather than save its output from the forward.",
                 "bundled:gpt_small", GPT_BWD, "triton_poi_fused_gelu_gelu_backward_view_7", 13),
            Step("Backward starts at the loss", "The backward's first kernel is the loss's gradient: "
                 "log-softmax and NLL backward fused into one reduction.", "bundled:gpt_small", GPT_BWD,
                 "triton_red_fused__log_softmax__log_softmax_backward_data__to_copy_arange_eq_expand_nll_loss_"
                 "backward_nll_loss_forward_scalar_tensor_view_where_0", 0),
        ),
    ),
    Lesson(
        "fuse", "What Inductor fuses",
        "Pointwise work after a matmul or a reduction is fused: one read of memory instead of one per op.",
        (
            Step("Six ops, one kernel", "`tanh`, `sigmoid`, `abs`, `mul`, `add`, `div`: eager runs a kernel "
                 "for each (8 launches a call, measured); compiled, one kernel that reads its input once.",
                 "bundled:pointwise_chain", G0, "triton_poi_fused_abs_add_div_mul_sigmoid_tanh_0", 0),
            Step("The matmul stays a library call", "The matmul is cuBLAS (`extern_kernels.mm`); the bias and "
                 "GELU after it are fused into one kernel that reads its output.",
                 "bundled:mlp_gelu", G0, "triton_poi_fused_addmm_gelu_0", 1),
            Step("A reduction is a kernel of its own", "LayerNorm needs a mean and a variance per row: a "
                 "(persistent) reduction kernel.", "bundled:layernorm_linear_gelu_residual", G0,
                 "triton_per_fused_native_layer_norm_0", 0),
            Step("... and the epilogue joins the pointwise", "After the linear layer, bias, GELU and the "
                 "residual add are one pointwise kernel.", "bundled:layernorm_linear_gelu_residual", G0,
                 "triton_poi_fused_add_gelu_view_1", 2),
        ),
    ),
    Lesson(
        "refuse", "What Inductor refuses to fuse",
        "Fusion has limits: library calls, and a cap on how much one kernel may hold. Inductor's log says why.",
        (
            Step("Softmax does not join the matmul", "The matmul is a library call, and Inductor fuses only "
                 "the code it generates: softmax is a kernel of its own, reading the matmul's output.",
                 "bundled:matmul_softmax", G0, "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0", 1,
                 {"why": "0,1"}),
            Step("64 row sums, and a cap", "Sixty-four sums of one input: Inductor fused 64 of them and then "
                 "refused the next, 'exceeds max fusion' (its cap on the nodes in one kernel).",
                 "bundled:many_row_sums", G0, "triton_per_fused_mul_sum_0", 0, {"why": "0,1"}),
        ),
    ),
    Lesson(
        "modes", "Modes, launches and CUDA graphs",
        "A small model spends its time launching kernels, not in them: mode='reduce-overhead' records them "
        "once as a CUDA graph and replays it.",
        (
            Step("Two launches per call", "A linear layer and a ReLU: the matmul (a library call) and one "
                 "fused kernel. Each call launches both from Python.",
                 "bundled:tiny_linear_relu", G0, "triton_poi_fused_addmm_mul_relu_0", 1),
            Step("Slower compiled than eager", "Measured on this capture: the compiled model is slower than "
                 "eager, and launch-bound ('Eager vs compiled', below): the GPU waits for the CPU to launch "
                 "the next kernel. That wait is what `mode='reduce-overhead'` (CUDA graphs) removes.",
                 "bundled:tiny_linear_relu", G0, "triton_poi_fused_addmm_mul_relu_0", 1),
            Step("CUDA graphs, skipped", "Compiled with `mode='reduce-overhead'`, this model still launches "
                 "kernel by kernel: it adds into one of its inputs in place (`total.add_`), and a replayed CUDA "
                 "graph would not see the new input's values. Inductor says so once, in a warning (the line "
                 "above names the line of code); returning a new total instead gets the replay.",
                 "bundled:cudagraph_skip_mutation", G0, "triton_poi_fused_add_copy__mul_relu_sigmoid_0", 0),
        ),
    ),
    Lesson(
        "dynamic", "Recompiles and dynamic shapes",
        "A guard fails when a shape changes: Dynamo recompiles, or with dynamic shapes one kernel serves every size.",
        (
            Step("One kernel for every batch size", "Called with batch sizes 32 and 64 under `dynamic=True`: "
                 "one graph, and the kernel takes the size as an argument (`ks0`, `xnumel`) instead of a "
                 "constant.", "bundled:dynamic_shapes", G0, "triton_red_fused_native_layer_norm_relu_0", 0),
            Step("Without dynamic=True: compiled for 32", "The same function called with batch 32, then 64 "
                 "and 96, shapes left to Dynamo: the first compile is for 32 exactly, the size a constant "
                 "in this kernel (a CPU capture: C++).",
                 "bundled:recompile_shape", G0, "cpp_fused_native_layer_norm_relu_0", 0),
            Step("64 fails the guard: a recompile", "Batch 64 failed the guard on the size, so Dynamo "
                 "compiled again, this time with the batch size as a symbol (automatic dynamic shapes); 96 "
                 "reuses this graph. The Compiles page shows both compiles and the failed guard.",
                 "bundled:recompile_shape", G1, "cpp_fused_native_layer_norm_relu_0", 0),
        ),
    ),
    Lesson(
        "win", "Verifying the win",
        "Measure before you believe: fusion made one model 8x faster and a tiny one slower than eager.",
        (
            Step("A win: 8x", "Six pointwise ops on a large tensor: eager launches 8 kernels a call, each "
                 "a pass through memory; compiled, one kernel and one pass. 'Eager vs compiled' "
                 "below has this capture's timings.",
                 "bundled:pointwise_chain", G0, "triton_poi_fused_abs_add_div_mul_sigmoid_tanh_0", 0),
            Step("A loss: the tiny model", "Fusion on an 8 x 64 input is slower than eager here: the GPU "
                 "work is microseconds either way, and the compiled call adds its own CPU cost (guards, the "
                 "wrapper) before the first launch.",
                 "bundled:tiny_linear_relu", G0, "triton_poi_fused_addmm_mul_relu_0", 1),
        ),
    ),
    Lesson(
        "wrong", "Where a wrong result starts",
        "When compiled and eager differ, the backend ladder names the first stage that differs.",
        (
            Step("A wrong verdict", "The compiled model's result differs from eager: the red banner at the "
                 "top says so, and that the backend ladder finds the first difference at graph capture "
                 "(Dynamo), before AOTAutograd or Inductor ran. (A CPU capture: its one kernel is C++.)",
                 "bundled:compiled_differs", G0, "cpp_fused_gelu_mul_0", 1),
            Step("What Dynamo captured", "The planted difference is in this kernel's code: the `* 0.5` after "
                 "the GELU. The model multiplies only under torch.compiler.is_compiling(), a branch eager never "
                 "takes and Dynamo always traces; Inductor compiled exactly what it was given.",
                 "bundled:compiled_differs", G0, "cpp_fused_gelu_mul_0", 1),
        ),
    ),
)


def lesson(lesson_id: str) -> Lesson | None:
    """Return the lesson of this id, None when there is none."""
    return next((x for x in LESSONS if x.id == lesson_id), None)
