"""reduce-overhead (CUDA graphs) skipped: the model updates one of its inputs in place."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch

    class RunningSum(torch.nn.Module):
        def forward(self, x, total):
            total.add_(x.relu())  # an input mutated in place: CUDA graphs would replay a stale copy
            return total * 0.5 + x.sigmoid()

    return RunningSum()


def example_inputs(device, dtype):
    import torch

    return (torch.randn(64, 64, device=device, dtype=dtype), torch.zeros(64, 64, device=device, dtype=dtype))


def input_sets(device, dtype):
    # reduce-overhead records a CUDA graph on a later call (the first calls warm up): call it thrice
    return [example_inputs(device, dtype) for _ in range(3)]


SPEC = SampleSpec(
    name="cudagraph_skip_mutation",
    title="CUDA graphs skipped: an input mutated",
    teaching_note=(
        "Captured with mode='reduce-overhead', Inductor would record the graph's launches once as a CUDA "
        "graph and replay it. This model adds into one of its inputs in place (total.add_), so Inductor "
        "skips CUDA graphs for it ('skipping cudagraphs due to mutated inputs') and launches each kernel "
        "as mode='default' does. Return the new total instead of mutating it to get the replay."
    ),
    build=build,
    example_inputs=example_inputs,
    input_sets=input_sets,
)
