"""Families captured for issue 38, one or more per class of inferred-link miss, none of them seen by
the linking rules before: each built from a small config, no weights. Captured on the GPU machine
with the project's own CLI (`scripts/capture-classes.sh`), opened with PyTorch's provenance and the
trace hidden, and compared with PyTorch's own mapping (tests/link_agreement.py).

1. convolutions in a training graph (the bias among the launch's nodes): torchvision RegNet and
   EfficientNet, channels-first, training steps;
2. kernels repeated across blocks: timm Swin (windowed attention), timm ConvNeXt channels-first
   (a layer norm after each depthwise convolution), BART (the encoder-decoder's cross attention);
3. router kernels of a mixture of experts: transformers Mixtral, training step;
4. a dropout seed launch: BART with dropout, training step;
5. a convolution epilogue fused with a layer norm: the ConvNeXt blocks above, and a DiT block
   (adaLN-modulated attention over patch embeddings made by a convolution).
"""

from __future__ import annotations

from sample_models import SampleSpec

VOCAB = 512
NOTE = "A third-party model built from a small config (no weights), for issue 38."


def images(device, dtype, size=64):
    import torch

    return (torch.randn(2, 3, size, size, device=device, dtype=dtype),)


def ids(device, dtype):
    import torch

    return (torch.randint(0, VOCAB, (2, 32), device=device),)


def build_regnet(device, dtype):
    from torchvision.models import regnet_x_400mf

    return regnet_x_400mf(num_classes=10).to(device, dtype)


def build_efficientnet(device, dtype):
    from torchvision.models import efficientnet_b0

    return efficientnet_b0(num_classes=10).to(device, dtype)


def build_swin(device, dtype):
    import timm

    return timm.create_model("swin_tiny_patch4_window7_224", pretrained=False, img_size=56, depths=(2, 2),
                             num_heads=(2, 4), embed_dim=48, num_classes=10).to(device, dtype)


def swin_inputs(device, dtype):
    return images(device, dtype, 56)


def build_convnext_cf(device, dtype):
    import timm

    return timm.create_model("convnext_atto", pretrained=False, num_classes=10).to(device, dtype)


def build_bart(device, dtype):
    from transformers import BartConfig, BartForConditionalGeneration

    cfg = BartConfig(vocab_size=VOCAB, d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, max_position_embeddings=64,
                     dropout=0.1, attention_dropout=0.1, activation_dropout=0.1, pad_token_id=1,
                     decoder_start_token_id=2)
    return BartForConditionalGeneration(cfg).to(device, dtype)


def bart_inputs(device, dtype):
    import torch

    src = torch.randint(3, VOCAB, (2, 32), device=device)
    return (src, None, torch.randint(3, VOCAB, (2, 16), device=device))


def build_mixtral(device, dtype):
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, vocab_size=VOCAB,
                        max_position_embeddings=128)
    return MixtralForCausalLM(cfg).to(device, dtype)


def build_dit(device, dtype):
    import torch
    from torch import nn

    class DiTBlock(nn.Module):
        """adaLN-Zero: shift, scale and gate from the timestep for attention and the MLP."""

        def __init__(self, dim=128, heads=4):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
            self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
            self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))
            self.ada = nn.Sequential(nn.SiLU(), nn.Linear(dim, 6 * dim))

        def forward(self, x, c):
            shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(c).unsqueeze(1).chunk(6, dim=-1)
            h = self.norm1(x) * (1 + scale1) + shift1
            x = x + gate1 * self.attn(h, h, h, need_weights=False)[0]
            h = self.norm2(x) * (1 + scale2) + shift2
            return x + gate2 * self.mlp(h)

    class DiT(nn.Module):
        def __init__(self, dim=128, patch=4, depth=2):
            super().__init__()
            self.patchify = nn.Conv2d(4, dim, patch, stride=patch)
            self.t_embed = nn.Sequential(nn.Linear(64, dim), nn.SiLU(), nn.Linear(dim, dim))
            self.blocks = nn.ModuleList(DiTBlock(dim) for _ in range(depth))
            self.final = nn.Linear(dim, patch * patch * 4)

        def forward(self, latents, timesteps):
            x = self.patchify(latents).flatten(2).transpose(1, 2)
            freqs = torch.exp(-torch.arange(32, device=x.device, dtype=x.dtype) * (9.21 / 32))
            emb = timesteps[:, None].to(x.dtype) * freqs[None]
            c = self.t_embed(torch.cat([emb.sin(), emb.cos()], dim=-1))
            for block in self.blocks:
                x = block(x, c)
            return self.final(x)

    return DiT().to(device, dtype)


def dit_inputs(device, dtype):
    import torch

    return (torch.randn(2, 4, 32, 32, device=device, dtype=dtype), torch.tensor([10, 500], device=device))


REGNET_TRAIN = SampleSpec(name="regnet_train", title="torchvision RegNetX-400MF, training step", teaching_note=NOTE,
                          build=build_regnet, example_inputs=images, supports_training=True, default_train=True)
EFFNET_TRAIN = SampleSpec(name="efficientnet_train", title="torchvision EfficientNet-B0, training step",
                          teaching_note=NOTE, build=build_efficientnet, example_inputs=images,
                          supports_training=True, default_train=True)
SWIN = SampleSpec(name="swin", title="timm Swin (windowed attention), 2 stages", teaching_note=NOTE,
                  build=build_swin, example_inputs=swin_inputs, supports_training=True)
CONVNEXT_CF_TRAIN = SampleSpec(name="convnext_cf_train", title="timm ConvNeXt-Atto, channels-first, training step",
                               teaching_note=NOTE, build=build_convnext_cf, example_inputs=images,
                               supports_training=True, default_train=True)
BART_TRAIN = SampleSpec(name="bart_train", title="transformers BART with dropout, training step", teaching_note=NOTE,
                        build=build_bart, example_inputs=bart_inputs, supports_training=True, default_train=True)
MIXTRAL_TRAIN = SampleSpec(name="mixtral_train", title="transformers Mixtral, 4 experts, training step",
                           teaching_note=NOTE, build=build_mixtral, example_inputs=ids, supports_training=True,
                           default_train=True)
DIT = SampleSpec(name="dit", title="a DiT block (adaLN-Zero, patchify convolution)", teaching_note=NOTE,
                 build=build_dit, example_inputs=dit_inputs, supports_training=True, default_train=True)
