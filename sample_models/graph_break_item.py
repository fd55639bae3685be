"""An .item() branch: a data-dependent Python `if` forces a graph break."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    class ItemBranch(torch.nn.Module):
        def forward(self, x):
            y = x.sin()
            if y.mean().item() > 0:
                return torch.relu(y) * 2
            return torch.sigmoid(y) + 1

    return ItemBranch()


def example_inputs(device, dtype):
    import torch

    return (torch.randn(64, 64, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="graph_break_item",
    title="Graph break: .item() branch",
    teaching_note=(
        "`.item()` copies a tensor value to Python, and the `if` on it decides which code runs, "
        "so Dynamo ends the graph at the `.item()` and resumes in a new frame for the branch "
        "taken. Two graphs, two sets of kernels; `torch.where` would keep it in one."
    ),
    build=build,
    example_inputs=example_inputs,
)
