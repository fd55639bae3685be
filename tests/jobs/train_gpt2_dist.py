"""A user's distributed training script: a transformers GPT-2 (from a config, no weights), AdamW,
bf16 autocast on a GPU, DDP or FSDP2, compiled; started with torchrun:

    torchrun --nproc-per-node 2 train_gpt2_dist.py --strategy ddp|fsdp2 [--steps N] [--layers L]
        [--seq-lens 128,192,256 --dynamic false]

With several `--seq-lens`, step i takes a batch of the i-th length in turn (length-bucketed
batches); `--dynamic false` (torch.compile(dynamic=False)) then recompiles once per length.

NCCL on GPUs, gloo on the CPU. DDP wraps the compiled model (Dynamo's DDP optimizer splits the
graph at DDP's buckets); FSDP2 shards each block and the whole model with `fully_shard`, then compiles.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=("ddp", "fsdp2"), default="ddp")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--seq-lens", default="", help="comma-separated lengths, one per step in turn")
    parser.add_argument("--dynamic", choices=("auto", "true", "false"), default="auto")
    args = parser.parse_args()
    seq_lens = [int(n) for n in args.seq_lens.split(",") if n] or [args.seq]
    dynamic = {"auto": None, "true": True, "false": False}[args.dynamic]

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, local_rank = dist.get_rank(), int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    config = GPT2Config(n_layer=args.layers, n_embd=512, n_head=8, vocab_size=8192, n_positions=max(seq_lens))
    model = GPT2LMHeadModel(config).to(device)
    if args.strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(torch.compile(model, dynamic=dynamic),
                                        device_ids=[local_rank] if cuda else None)
    else:
        from torch.distributed.fsdp import fully_shard

        for block in model.transformer.h:
            fully_shard(block)
        fully_shard(model)
        model = torch.compile(model, dynamic=dynamic)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    started = time.perf_counter()
    for step in range(args.steps):
        ids = torch.randint(0, config.vocab_size, (args.batch, seq_lens[step % len(seq_lens)]), device=device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if rank == 0:
            print(f"step {step} loss {loss.item():.4f} at {time.perf_counter() - started:.1f} s", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
