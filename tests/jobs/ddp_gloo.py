"""A user's DDP training script on the CPU (gloo), started with torchrun:

    torchrun --nproc-per-node 2 ddp_gloo.py [--steps N] [--recompile-rank R]

A small MLP, compiled, in DistributedDataParallel; Dynamo's DDP optimizer splits the compiled
graph at DDP's bucket boundaries. `--recompile-rank R` gives rank R alone a batch of another size at the last
step, so that rank alone recompiles (what `compile-viz ranks` is there to find).
"""

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--recompile-rank", type=int, default=-1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                          nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 8))
    # The module is compiled inside DDP: Dynamo sees it runs in DDP's forward and splits the graph
    # at DDP's buckets (1 MB: DDP's first bucket's size, for 2.3 MB of parameters).
    compiled = DistributedDataParallel(torch.compile(model), bucket_cap_mb=1)
    optimizer = torch.optim.SGD(compiled.parameters(), lr=0.01)
    for step in range(args.steps):
        batch = 16
        if rank == args.recompile_rank and step == args.steps - 1:
            batch = 24
        x = torch.randn(batch, 64)
        loss = compiled(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(f"done on {os.environ.get('WORLD_SIZE')} ranks")


if __name__ == "__main__":
    main()
