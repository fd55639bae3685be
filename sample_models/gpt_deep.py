"""The scale case: the gpt_small GPT with 48 blocks instead of 12 (GPT-2 XL's depth)."""

from sample_models import SampleSpec, gpt_small

LAYERS = 48


def build(device, dtype):
    return gpt_small.build(device, dtype, layers=LAYERS)


SPEC = SampleSpec(
    name="gpt_deep",
    title="GPT, 48 layers, training step",
    teaching_note=(
        "How a big graph reads: the gpt_small model with 48 blocks, so the backward graph has "
        "over a thousand launches. The graph opens as the model's own modules (embeddings, "
        "blocks, head), the 48 blocks recognised as one pattern seen 48 times; open one block to "
        "see its launches, and compare any two blocks: Inductor compiled each the same way. "
        "Captured on a GPU; on a CPU it takes a long time."
    ),
    build=build,
    example_inputs=gpt_small.example_inputs,
    supports_training=True,
    default_dtype="autocast",
    default_train=True,
    loss=gpt_small.loss,
    large=True,
)
