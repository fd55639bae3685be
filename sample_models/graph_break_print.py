"""A print() in forward: Dynamo splits the function around it."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    class PrintModel(torch.nn.Module):
        def forward(self, x):
            y = torch.sin(x) * 2
            print("graph_break_print: inside forward")  # side effect: Dynamo must run it eagerly
            return torch.relu(y) + 1

    return PrintModel()


def example_inputs(device, dtype):
    import torch

    return (torch.randn(64, 64, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="graph_break_print",
    title="Graph break: print",
    teaching_note=(
        "Dynamo cannot put a print into a graph, so it compiles the code before it as one graph, "
        "runs the print in Python, and resumes with a second graph. Expect two Inductor graphs, "
        "each with its own fused kernel, where one was possible; the graph-break reason names "
        "the print's file and line."
    ),
    build=build,
    example_inputs=example_inputs,
)
