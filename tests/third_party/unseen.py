"""Models captured on the GPU machine for the trust checks of issue 33, none of them used to build
the views they are opened in: a FlexAttention block called from the user's own code (a template
launch whose stack holds this file), a transformers Gemma2 (rotary embeddings, soft-capping) and a
transformers T5 (an encoder-decoder) in training. Built from small configs, no weights.
"""

from __future__ import annotations

from sample_models import SampleSpec

VOCAB = 512


def build_flex(device, dtype):
    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    class FlexBlock(torch.nn.Module):
        """Causal self-attention through FlexAttention, with a residual MLP after it."""

        def __init__(self, dim: int = 128, heads: int = 4) -> None:
            super().__init__()
            self.heads = heads
            self.qkv = torch.nn.Linear(dim, 3 * dim)
            self.out = torch.nn.Linear(dim, dim)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim))
            self.norm = torch.nn.LayerNorm(dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            mask = create_block_mask(lambda b_, h_, q_, k_: q_ >= k_, None, None, t, t, device=x.device)
            y = flex_attention(q, k, v, block_mask=mask)
            y = self.out(y.transpose(1, 2).reshape(b, t, d))
            x = x + y
            return x + self.mlp(self.norm(x))

    return FlexBlock().to(device, dtype)


def flex_inputs(device, dtype):
    import torch

    return (torch.randn(2, 256, 128, device=device, dtype=dtype),)


def build_gemma2(device, dtype):
    from transformers import Gemma2Config, Gemma2ForCausalLM

    cfg = Gemma2Config(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=32, vocab_size=VOCAB, max_position_embeddings=128,
                       attn_implementation="eager")
    return Gemma2ForCausalLM(cfg).to(device, dtype)


def build_t5(device, dtype):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(d_model=128, d_ff=256, num_layers=2, num_decoder_layers=2, num_heads=4, d_kv=32,
                   vocab_size=VOCAB, dropout_rate=0.1)
    return T5ForConditionalGeneration(cfg).to(device, dtype)


def ids_inputs(device, dtype):
    import torch

    return (torch.randint(0, VOCAB, (2, 32), device=device),)


def t5_inputs(device, dtype):
    import torch

    ids = torch.randint(0, VOCAB, (2, 32), device=device)
    return (ids, None, torch.randint(0, VOCAB, (2, 16), device=device))


NOTE = "A model held back from development, captured to check the views on something new."
FLEX = SampleSpec(name="flex_block", title="FlexAttention block (causal block mask)", teaching_note=NOTE,
                  build=build_flex, example_inputs=flex_inputs, supports_training=True)
GEMMA2 = SampleSpec(name="gemma2", title="transformers Gemma2", teaching_note=NOTE, build=build_gemma2,
                    example_inputs=ids_inputs, supports_training=True)
T5_TRAIN = SampleSpec(name="t5_train", title="transformers T5, training step", teaching_note=NOTE,
                      build=build_t5, example_inputs=t5_inputs, supports_training=True, default_train=True)
