"""A Python loop over a data-dependent range: a break, then a loop unrolled per trip count."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    class DataDependentLoop(torch.nn.Module):
        def forward(self, x):
            steps = int((x > 0).sum()) % 4 + 1  # a tensor value decides the trip count
            for _ in range(steps):
                x = torch.tanh(x * 1.5 + 0.1)
            return x

    return DataDependentLoop()


def example_inputs(device, dtype):
    import torch

    return (torch.randn(128, 128, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="graph_break_loop",
    title="Graph break: data-dependent loop",
    teaching_note=(
        "`int(tensor)` needs the value in Python, so Dynamo breaks the graph there. The resumed "
        "frame sees `steps` as a constant and unrolls the loop into one graph whose pointwise "
        "ops fuse into a single kernel, guarded on that exact value: other data with another "
        "trip count recompiles."
    ),
    build=build,
    example_inputs=example_inputs,
)
