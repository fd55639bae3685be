"""A graph break at a library call: Dynamo skips torch.nn.utils.rnn.pack_padded_sequence."""

from sample_models import SampleSpec


def build(device, dtype):
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    class PackedSequences(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(16, 16)

        def forward(self, x, lengths):
            h = torch.relu(self.proj(x))
            # the library's own Python, which Dynamo is told not to trace: the graph ends here
            packed = pack_padded_sequence(h, lengths, batch_first=True, enforce_sorted=False)
            out, _ = pad_packed_sequence(packed, batch_first=True)
            return torch.sigmoid(out) * 2

    return PackedSequences()


def example_inputs(device, dtype):
    import torch

    # lengths stay on the CPU, as pack_padded_sequence wants them
    return (torch.randn(4, 8, 16, device=device, dtype=dtype), torch.tensor([8, 5, 3, 2]))


SPEC = SampleSpec(
    name="graph_break_library",
    title="Graph break at a library call",
    teaching_note=(
        "Nothing in forward() looks like Python Dynamo cannot trace, yet the graph breaks at "
        "pack_padded_sequence: Dynamo marks that library function as skipped (its output's shape "
        "depends on the lengths' values), runs it in Python, and resumes after it. The linear layer and "
        "ReLU before it and the sigmoid after it are separate graphs; the graph-break reason names the "
        "skipped function."
    ),
    build=build,
    example_inputs=example_inputs,
)
