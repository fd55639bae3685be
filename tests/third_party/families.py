"""Architectures the linking had never seen (issue 28): each built from a small config, no weights.

Captured on the GPU machine with the project's own CLI (`scripts/capture-families.sh`), then
opened with PyTorch's provenance hidden, to check links inferred where PyTorch is silent:
an encoder-decoder (T5), two mixtures of experts (Qwen2-MoE, OLMoE), an audio encoder
(wav2vec 2.0), channels-last convnets (torchvision ResNet-18 training, timm ConvNeXt), a graph
network (torch_geometric GCN and GAT with scatter aggregation) and a diffusion-style UNet block.
"""

from __future__ import annotations

from sample_models import SampleSpec

VOCAB = 512
NOTE = "A third-party model built from a small config (no weights)."


def _ids(device, n=32):
    import torch

    return torch.randint(0, VOCAB, (2, n), device=device)


def build_t5(device, dtype):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=VOCAB, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_decoder_layers=2,
                   num_heads=4, decoder_start_token_id=0, pad_token_id=0)
    return T5ForConditionalGeneration(cfg).to(device, dtype)


def t5_inputs(device, dtype):
    return (_ids(device), None, _ids(device, 16))  # input_ids, attention_mask, decoder_input_ids


def build_qwen2_moe(device, dtype):
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    cfg = Qwen2MoeConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=256, moe_intermediate_size=64,
                         shared_expert_intermediate_size=128, num_experts=8, num_experts_per_tok=2,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128)
    return Qwen2MoeForCausalLM(cfg).to(device, dtype)


def build_olmoe(device, dtype):
    from transformers import OlmoeConfig, OlmoeForCausalLM

    cfg = OlmoeConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=64, num_experts=8,
                      num_experts_per_tok=2, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                      eos_token_id=1, bos_token_id=2, pad_token_id=0,
                      max_position_embeddings=128)
    return OlmoeForCausalLM(cfg).to(device, dtype)


def ids_inputs(device, dtype):
    return (_ids(device),)


def build_wav2vec2(device, dtype):
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         conv_dim=(32, 32, 32), conv_kernel=(10, 3, 3), conv_stride=(5, 2, 2),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    return Wav2Vec2Model(cfg).to(device, dtype)


def audio_inputs(device, dtype):
    import torch

    return (torch.randn(2, 4000, device=device, dtype=dtype),)


def _channels_last(model, device, dtype):
    import torch

    return model.to(device, dtype).to(memory_format=torch.channels_last)


def build_resnet18_cl(device, dtype):
    from torchvision.models import resnet18

    return _channels_last(resnet18(num_classes=10), device, dtype)


def build_convnext_cl(device, dtype):
    import timm

    return _channels_last(timm.create_model("convnext_atto", pretrained=False, num_classes=10), device, dtype)


def image_cl_inputs(device, dtype):
    import torch

    x = torch.randn(2, 3, 64, 64, device=device, dtype=dtype)
    return (x.contiguous(memory_format=torch.channels_last),)


def build_gnn(device, dtype):
    import torch
    from torch_geometric.nn import GATConv, GCNConv

    class GraphNet(torch.nn.Module):
        """Two message-passing layers of torch_geometric: a GCN, then a 2-head GAT, then a head."""

        def __init__(self):
            super().__init__()
            self.gcn = GCNConv(16, 32)
            self.gat = GATConv(32, 16, heads=2)
            self.head = torch.nn.Linear(32, 4)

        def forward(self, x, edge_index):
            x = torch.relu(self.gcn(x, edge_index))
            x = torch.nn.functional.elu(self.gat(x, edge_index))
            return self.head(x)

    return GraphNet().to(device, dtype)


def graph_inputs(device, dtype):
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 16, generator=g).to(device, dtype)
    edge_index = torch.randint(0, 64, (2, 256), generator=g).to(device)
    return (x, edge_index)


def build_unet_block(device, dtype):
    """A diffusion-style UNet stage as people write it: ResNet blocks with GroupNorm, SiLU and a
    time embedding, a self-attention block, a strided down-sample and a nearest up-sample."""
    import torch
    from torch import nn

    class ResBlock(nn.Module):
        def __init__(self, cin, cout, tdim):
            super().__init__()
            self.norm1, self.conv1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
            self.time = nn.Linear(tdim, cout)
            self.norm2, self.conv2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, t):
            h = self.conv1(nn.functional.silu(self.norm1(x)))
            h = h + self.time(nn.functional.silu(t))[:, :, None, None]
            h = self.conv2(nn.functional.silu(self.norm2(h)))
            return h + self.skip(x)

    class Attention(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.norm, self.qkv, self.out = nn.GroupNorm(8, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

        def forward(self, x):
            b, c, hgt, wid = x.shape
            q, k, v = self.qkv(self.norm(x)).reshape(b, 3, 4, c // 4, hgt * wid).unbind(1)
            a = nn.functional.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2),
                                                           v.transpose(-1, -2))
            return x + self.out(a.transpose(-1, -2).reshape(b, c, hgt, wid))

    class UNetStage(nn.Module):
        def __init__(self, c=32, tdim=64):
            super().__init__()
            self.tdim = tdim
            self.t_mlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
            self.inp = nn.Conv2d(3, c, 3, padding=1)
            self.down1, self.down = ResBlock(c, c, tdim), nn.Conv2d(c, c, 3, stride=2, padding=1)
            self.mid1, self.attn, self.mid2 = ResBlock(c, 2 * c, tdim), Attention(2 * c), ResBlock(2 * c, c, tdim)
            self.up1 = ResBlock(2 * c, c, tdim)
            self.outp = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

        def forward(self, x, timesteps):
            half = self.tdim // 2
            freqs = torch.exp(-torch.arange(half, device=x.device, dtype=x.dtype) * (9.21 / half))
            emb = timesteps[:, None].to(x.dtype) * freqs[None]
            t = self.t_mlp(torch.cat([emb.sin(), emb.cos()], dim=-1))
            h0 = self.down1(self.inp(x), t)
            h = self.mid2(self.attn(self.mid1(self.down(h0), t)), t)
            h = nn.functional.interpolate(h, scale_factor=2.0, mode="nearest")
            return self.outp(self.up1(torch.cat([h, h0], dim=1), t))

    return UNetStage().to(device, dtype)


def unet_inputs(device, dtype):
    import torch

    return (torch.randn(2, 3, 32, 32, device=device, dtype=dtype), torch.tensor([10, 500], device=device))


T5 = SampleSpec(name="t5_encdec", title="transformers T5, encoder-decoder, training step", teaching_note=NOTE,
                build=build_t5, example_inputs=t5_inputs, supports_training=True, default_train=True)
QWEN2_MOE = SampleSpec(name="qwen2_moe", title="transformers Qwen2-MoE, 8 experts and a shared expert",
                       teaching_note=NOTE, build=build_qwen2_moe, example_inputs=ids_inputs,
                       supports_training=True)
OLMOE = SampleSpec(name="olmoe", title="transformers OLMoE, 8 experts", teaching_note=NOTE, build=build_olmoe,
                   example_inputs=ids_inputs, supports_training=True)
WAV2VEC2 = SampleSpec(name="wav2vec2", title="transformers wav2vec 2.0 audio encoder", teaching_note=NOTE,
                      build=build_wav2vec2, example_inputs=audio_inputs, supports_training=True)
RESNET18_CL = SampleSpec(name="resnet18_cl", title="torchvision ResNet-18, channels-last, training step",
                         teaching_note=NOTE, build=build_resnet18_cl, example_inputs=image_cl_inputs,
                         supports_training=True, default_train=True)
CONVNEXT_CL = SampleSpec(name="convnext_cl", title="timm ConvNeXt-Atto, channels-last", teaching_note=NOTE,
                         build=build_convnext_cl, example_inputs=image_cl_inputs, supports_training=True)
GNN = SampleSpec(name="pyg_gcn_gat", title="torch_geometric GCN + GAT (scatter aggregation)", teaching_note=NOTE,
                 build=build_gnn, example_inputs=graph_inputs, supports_training=True)
UNET = SampleSpec(name="unet_stage", title="diffusion-style UNet stage (GroupNorm, SiLU, attention)",
                  teaching_note=NOTE, build=build_unet_block, example_inputs=unet_inputs, supports_training=True)
