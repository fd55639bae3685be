"""A model that calls a Triton kernel of its own inside torch.compile (a user-defined Triton kernel:
Dynamo wraps it as triton_kernel_wrapper_functional/mutation, Inductor launches it beside its own
generated kernels). Captured on the GPU machine to see how compile_viz reads such a graph."""

from __future__ import annotations

from sample_models import SampleSpec


def build(device, dtype):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * scale + y, mask=mask)

    class UserKernelBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(256, 256)

        def forward(self, x):
            h = torch.relu(self.proj(x))  # Inductor's own kernels around the user's
            out = torch.empty_like(h)
            n = h.numel()
            scaled_add_kernel[(triton.cdiv(n, 1024),)](h, x, out, n, 0.5, BLOCK=1024)
            return torch.sigmoid(out) * 2.0

    return UserKernelBlock().to(device, dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(64, 256, device=device, dtype=dtype),)


USER_TRITON = SampleSpec(name="user_triton", title="A user-defined Triton kernel inside torch.compile",
                         teaching_note="The model's own @triton.jit kernel, launched between Inductor's.",
                         build=build, example_inputs=example_inputs)
