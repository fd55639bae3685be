"""layer_norm -> linear -> gelu -> + x, in fp16 (bf16 on CPU)."""

from sample_models import SampleSpec


def unfused_ops(x, w, b):
    import torch

    y = torch.nn.functional.layer_norm(x, x.shape[-1:])
    z = torch.nn.functional.linear(y, w, b)
    a = torch.nn.functional.gelu(z)
    return a + x


def build(device, dtype):
    return unfused_ops


def example_inputs(device, dtype):
    import torch

    batch, seq = (32, 512) if str(device).startswith("cuda") else (8, 128)
    x = torch.randn(batch, seq, 512, device=device, dtype=dtype)
    w = torch.randn(512, 512, device=device, dtype=dtype)
    b = torch.randn(512, device=device, dtype=dtype)
    return (x, w, b)


SPEC = SampleSpec(
    name="layernorm_linear_gelu_residual",
    title="LayerNorm + Linear + GELU + residual (fp16)",
    teaching_note=(
        "The layer norm is a reduction over the last dimension and becomes one kernel that "
        "computes mean and variance and normalises in one pass (upcasting fp16 to fp32 inside "
        "the kernel). The linear is an extern GEMM; bias add, GELU and the residual add fuse into "
        "one pointwise kernel after it. Why not one kernel for the norm and the GELU? Open *Why not "
        "fused?* and pick those two: Inductor weighed them and refused (**intermediate nodes**): the "
        "GEMM sits between them, and a library call cannot be fused through."
    ),
    build=build,
    example_inputs=example_inputs,
    default_dtype="fp16",
    cpu_dtype="bf16",
    cpu_note="fp16 on CPU has slow, partial kernel support, so the CPU capture uses bf16 (same lesson: low precision in memory, fp32 in registers) and a smaller input (8x128x512).",
)
