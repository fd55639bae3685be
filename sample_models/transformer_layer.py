"""MultiheadAttention + two LayerNorms + GELU feed-forward, d_model 512, 8 heads."""

from sample_models import SampleSpec


def build(device, dtype):
    from torch import nn

    class TransformerLayer(nn.Module):
        def __init__(self, d_model=512, nhead=8):
            super().__init__()
            self.attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
            self.norm1 = nn.LayerNorm(d_model)
            self.norm2 = nn.LayerNorm(d_model)
            self.ff = nn.Sequential(nn.Linear(d_model, d_model * 4), nn.GELU(), nn.Linear(d_model * 4, d_model))

        def forward(self, x):
            a, _ = self.attn(x, x, x)
            x = self.norm1(x + a)
            return self.norm2(x + self.ff(x))

    return TransformerLayer().to(device=device, dtype=dtype)


def example_inputs(device, dtype):
    import torch

    return (torch.randn(16, 64, 512, device=device, dtype=dtype),)


SPEC = SampleSpec(
    name="transformer_layer",
    title="Transformer layer",
    teaching_note=(
        "Attention's projections and the feed-forward GEMMs are extern calls, and the attention "
        "core may become a fused SDPA call. What Inductor fuses is everything in between: each "
        "residual add with the LayerNorm that follows it (one reduction kernel), and the bias add "
        "with the GELU. Count the kernels against the dozens of eager ops."
    ),
    build=build,
    example_inputs=example_inputs,
    supports_training=True,
)
