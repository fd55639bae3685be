"""A user's training script that profiles itself, as the PyTorch profiler recipe shows: a
transformers GPT-2 (from a config), AdamW, bf16 autocast on a GPU, compiled, and torch.profiler
with a schedule and tensorboard_trace_handler writing `*.pt.trace.json` into --profile-dir.
Runs alone or under torchrun (then DDP, one trace per rank).

    python train_gpt2_profiled.py [--steps 8] [--profile-dir profile]
    torchrun --nproc-per-node 2 train_gpt2_profiled.py
"""

import argparse
import os

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--profile-dir", default="profile")
    args = parser.parse_args()

    distributed = "RANK" in os.environ
    cuda = torch.cuda.is_available()
    rank = int(os.environ.get("RANK", 0))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if distributed:
        import torch.distributed as dist

        dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    config = GPT2Config(n_layer=args.layers, n_embd=512, n_head=8, vocab_size=8192, n_positions=128)
    model = torch.compile(GPT2LMHeadModel(config).to(device))
    if distributed:
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model, device_ids=[local_rank] if cuda else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities, schedule=schedule(wait=1, warmup=2, active=3, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(args.profile_dir, worker_name=f"rank{rank}")) as prof:
        for step in range(args.steps):
            ids = torch.randint(0, config.vocab_size, (8, 128), device=device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            prof.step()
            if rank == 0:
                print(f"step {step} loss {loss.item():.4f}", flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
