"""Third-party models as a user would bring them: Hugging Face transformers, timm, torchvision.

Captured on the GPU machine with the project's own CLI (`scripts/capture-third-party.sh`), each
built from a small config (no weights are downloaded). The runs, exported as zips, are the
fixtures in `tests/fixtures/third_party/`; `tests/test_third_party.py` hides their provenance
JSON and compares our linking with it.

`gpt2_train` also runs on the CPU in a test (a 2-layer config): a training step whose model
returns a `ModelOutput` and whose spec gives no `loss`.
"""

from __future__ import annotations

from sample_models import SampleSpec

VOCAB = 512


def _gpt2(n_layer: int = 2, **config):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=n_layer, n_embd=128, n_head=4, vocab_size=VOCAB, n_positions=128, **config)
    return GPT2LMHeadModel(cfg)


def build_gpt2(device, dtype):
    return _gpt2().to(device, dtype)


def build_gpt2_no_cache(device, dtype):
    """GPT-2 returning logits only (use_cache=False): torch.export cannot return transformers'
    DynamicCache, which is no pytree type."""
    return _gpt2(use_cache=False).to(device, dtype)


def build_gpt2_deep(device, dtype):
    """GPT-2 of 48 layers (GPT-2 XL's depth, tiny width): the scale fixture of issue 12."""
    return _gpt2(48).to(device, dtype)


def build_gpt2_planted(device, dtype):
    """GPT-2 whose compiled path differs on purpose: under torch.compile, half of the rows of
    transformer.h.1.attn.c_attn.weight get no gradient (the forward values stay exactly the same)."""
    model = _gpt2().to(device, dtype)
    plant_dropped_grad(model.transformer.h[1].attn.c_attn)
    return model


def plant_dropped_grad(conv1d) -> None:
    """A real error, in compiled code only: w - (w - w.detach()) * mask equals w, but its gradient
    is zero where mask is 1 (the first half of the rows). A subclass, so a deep copy keeps it."""
    import torch

    class PlantedConv1D(type(conv1d)):
        def forward(self, x):
            w = self.weight
            if torch.compiler.is_compiling():
                rows = torch.arange(w.shape[0], device=w.device)
                mask = (rows < w.shape[0] // 2).to(w.dtype)[:, None]
                w = w - (w - w.detach()) * mask
            out = torch.addmm(self.bias, x.view(-1, x.size(-1)), w)
            return out.view(x.size()[:-1] + (self.nf,))

    conv1d.__class__ = PlantedConv1D


def gpt2_inputs(device, dtype):
    import torch

    return (torch.randint(0, VOCAB, (2, 32), device=device),)


def gpt2_dynamic_inputs(device, dtype):
    import torch

    return [(torch.randint(0, VOCAB, (2, n), device=device),) for n in (32, 48)]


def build_llama(device, dtype):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=128)
    return LlamaForCausalLM(cfg).to(device, dtype)


def build_mixtral(device, dtype):
    """A mixture of experts: 4 experts, 2 routed per token (the routing is data-dependent)."""
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, vocab_size=VOCAB,
                        max_position_embeddings=128)
    return MixtralForCausalLM(cfg).to(device, dtype)


def build_bert(device, dtype):
    from transformers import BertConfig, BertModel

    cfg = BertConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                     vocab_size=VOCAB, max_position_embeddings=128)
    return BertModel(cfg).to(device, dtype)


def bert_inputs(device, dtype):
    import torch

    ids = torch.randint(0, VOCAB, (2, 32), device=device)
    mask = torch.ones(2, 32, dtype=torch.long, device=device)
    mask[1, 20:] = 0  # the second sequence is padded
    return (ids, mask)


def build_vit(device, dtype):
    import timm

    return timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=64, depth=2,
                             num_classes=10).to(device, dtype)


def build_mobilenet(device, dtype):
    from torchvision.models import mobilenet_v3_small

    return mobilenet_v3_small(num_classes=10).to(device, dtype)


def image_inputs(device, dtype):
    import torch

    return (torch.randn(2, 3, 64, 64, device=device, dtype=dtype),)


NOTE = "A third-party model built from a small config (no weights)."
GPT2_TRAIN = SampleSpec(name="gpt2_train", title="transformers GPT-2, training step", teaching_note=NOTE,
                        build=build_gpt2, example_inputs=gpt2_inputs, supports_training=True,
                        default_train=True)
GPT2_INFER = SampleSpec(name="gpt2_infer", title="transformers GPT-2, inference without a KV cache",
                        teaching_note=NOTE, build=build_gpt2_no_cache, example_inputs=gpt2_inputs)
GPT2_PLANTED = SampleSpec(name="gpt2_planted", title="transformers GPT-2 with a planted gradient error",
                          teaching_note="The compiled path drops half of one weight's gradient on purpose.",
                          build=build_gpt2_planted, example_inputs=gpt2_inputs, supports_training=True,
                          default_train=True)
GPT2_DEEP = SampleSpec(name="gpt2_deep", title="transformers GPT-2, 48 layers, training step",
                       teaching_note=NOTE, build=build_gpt2_deep, example_inputs=gpt2_inputs,
                       supports_training=True, default_train=True)
GPT2_DYNAMIC = SampleSpec(name="gpt2_dynamic", title="transformers GPT-2, dynamic sequence length",
                          teaching_note=NOTE, build=build_gpt2, example_inputs=gpt2_inputs,
                          input_sets=gpt2_dynamic_inputs, default_dynamic=True)
LLAMA_GQA = SampleSpec(name="llama_gqa", title="transformers Llama with grouped-query attention",
                       teaching_note=NOTE, build=build_llama, example_inputs=gpt2_inputs,
                       supports_training=True)
MIXTRAL_MOE = SampleSpec(name="mixtral_moe", title="transformers Mixtral, a mixture of 4 experts",
                         teaching_note=NOTE, build=build_mixtral, example_inputs=gpt2_inputs,
                         supports_training=True)
BERT_MASK = SampleSpec(name="bert_mask", title="transformers BERT with a padding mask", teaching_note=NOTE,
                       build=build_bert, example_inputs=bert_inputs)
VIT = SampleSpec(name="timm_vit", title="timm ViT-Tiny (2 blocks, 64x64)", teaching_note=NOTE,
                 build=build_vit, example_inputs=image_inputs, supports_training=True)
MOBILENET = SampleSpec(name="mobilenet_v3", title="torchvision MobileNetV3-Small", teaching_note=NOTE,
                       build=build_mobilenet, example_inputs=image_inputs)
