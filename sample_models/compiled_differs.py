"""A model whose compiled path differs on purpose: a torch.compiler.is_compiling() branch."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    class CompiledDiffers(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(64, 128), torch.nn.Linear(128, 16)

        def forward(self, x):
            h = torch.nn.functional.gelu(self.fc1(x))
            if torch.compiler.is_compiling():  # Dynamo traces this branch; eager never takes it
                h = h * 0.5  # a planted difference, standing in for a "fast path" that is not the same math
            return self.fc2(h)

    return CompiledDiffers().to(device, dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(32, 64, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="compiled_differs",
    title="Wrong on purpose: a compile-only branch",
    teaching_note=(
        "forward() halves its hidden layer only under `torch.compiler.is_compiling()`, so the compiled "
        "model computes something else than eager does. Capture it with `--measure`: the verdict is "
        "\"wrong\", and the backend ladder re-runs the inputs through backend=\"eager\" (Dynamo's graph "
        "capture alone), \"aot_eager\" (plus AOTAutograd), \"aot_eager_decomp_partition\" (plus "
        "decompositions) and Inductor. The first red stage is graph capture: the graph Dynamo captured is "
        "not what eager runs, so no Inductor option can help; look for is_compiling() branches, graph "
        "breaks and side effects in that frame. A fault that only Inductor makes would pass the first "
        "three stages, and PyTorch's compiler bisector would then name the pass or the kernel."
    ),
    build=build,
    example_inputs=example_inputs,
    supports_training=True,
)
