"""A user's training script, as a user writes one: a transformers GPT-2 built from a config, AdamW,
its own loop, a compiled model, and a graph break (a Python-side print of the loss inside the
compiled function). `compile-viz record -- python train_gpt2.py` records it unchanged.

    python train_gpt2.py [--steps N] [--fail-at STEP]
"""

import argparse

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--fail-at", type=int, default=-1, help="raise at this step (to test failures)")
    args = parser.parse_args()

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=64)
    model = GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(ids):
        out = model(input_ids=ids, labels=ids)
        loss = out.loss
        print(f"loss inside the step: {loss.item():.4f}")  # .item() + print: a graph break
        return loss * 1.0

    step = torch.compile(step)
    for i in range(args.steps):
        ids = torch.randint(0, config.vocab_size, (2, 32))
        if i == args.fail_at:
            raise RuntimeError(f"data loader gave a bad batch at step {i}")
        loss = step(ids)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {i} loss {loss.item():.4f}", flush=True)
    print("training done")


if __name__ == "__main__":
    main()
