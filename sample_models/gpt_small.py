"""A GPT-2-small-like model: 12 layers, d 768, 12 heads, vocab 50304, seq 256, causal SDPA."""

from sample_models import SampleSpec

VOCAB, D_MODEL, LAYERS, HEADS, SEQ = 50304, 768, 12, 12, 256


def build(device, dtype, layers=LAYERS):
    """Return the GPT on `device`; `layers` blocks (12 here, 48 in the gpt_deep sample)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.ln2 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)
            self.h = h

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
            k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
            v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, D_MODEL)
            self.wpe = nn.Embedding(SEQ, D_MODEL)
            self.blocks = nn.ModuleList([Block(D_MODEL, HEADS) for _ in range(layers)])
            self.lnf = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.lnf(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT().to(device=device, dtype=dtype)


def example_inputs(device, dtype):
    import torch

    batch = 8 if str(device).startswith("cuda") else 1
    idx = torch.randint(0, VOCAB, (batch, SEQ), device=device)
    return (idx, torch.roll(idx, -1, dims=1))


def loss(output):
    return output  # forward already returns the cross-entropy loss


SPEC = SampleSpec(
    name="gpt_small",
    title="GPT-2 small training step",
    teaching_note=(
        "The large case: forward, loss and backward of a 124M-parameter GPT under bf16 "
        "autocast. Dynamo unrolls the 12 blocks into one graph; AOTAutograd splits it into a "
        "forward and a backward graph. Look for each block's LayerNorm fused with the residual "
        "add, GELU fused with the bias add, flash/efficient SDPA as extern calls, and the big "
        "cross-entropy reduction over the 50k vocabulary. Captured on a GPU; on a CPU it takes "
        "many minutes (batch 1)."
    ),
    build=build,
    example_inputs=example_inputs,
    supports_training=True,
    default_dtype="autocast",
    default_train=True,
    loss=loss,
    large=True,
)
