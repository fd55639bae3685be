"""A plain training script whose batches change length: a transformers GPT-2 (from a config, no
weights), AdamW, bf16 autocast on a GPU, one compiled model, its own loop. From step `--change-at`
(counted from 0) the batches are `--seq2` tokens long instead of `--seq`, so that step recompiles
(and, on a GPU, autotunes the new kernels) while the job trains on.

    python train_gpt2_lengths.py [--steps 8] [--layers 4] [--width 512] [--seq 128] [--change-at -1] [--seq2 96]
"""

import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--change-at", type=int, default=-1, help="the step from which batches are --seq2 long")
    parser.add_argument("--seq2", type=int, default=96)
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(0)
    config = GPT2Config(n_layer=args.layers, n_embd=args.width, n_head=8, vocab_size=8192, n_positions=max(args.seq, args.seq2))
    model = torch.compile(GPT2LMHeadModel(config).to(device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(args.steps):
        length = args.seq2 if 0 <= args.change_at <= step else args.seq
        ids = torch.randint(0, config.vocab_size, (args.batch, length), device=device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"step {step} length {length} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
