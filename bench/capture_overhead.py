"""Capture overhead: `capture()` (child process, TORCH_COMPILE_DEBUG=1, TORCH_TRACE) against a plain
torch.compile + first call of the same model in a fresh interpreter, caches disabled on both sides.

Usage: python bench/capture_overhead.py [--model transformer_layer] [--device cpu] [--repeat 3]
Prints the medians and two ratios:
  wall ratio    = capture wall time (spawn, import torch, compile, debug files, store) / plain compile+call
  compile ratio = first-call time inside the capture child / plain compile+call (the debug-output cost alone)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compile_viz.capture import CaptureOptions, capture  # noqa: E402
from compile_viz.capture.runner import REPO_ROOT  # noqa: E402
from compile_viz.store import RunStore  # noqa: E402

PLAIN = """
import json, sys, time, torch
from sample_models import get_sample
spec, device, train = get_sample(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
torch.manual_seed(0)
model = spec.build(device, torch.float32)
if isinstance(model, torch.nn.Module):
    model.eval()  # as the capture child does for an inference capture
calls = spec.calls(device, torch.float32)
t = time.monotonic()
compiled = torch.compile(model)
with torch.no_grad():
    out = compiled(*calls[0])
if device.startswith("cuda"):
    torch.cuda.synchronize()
print(json.dumps({"compile_s": time.monotonic() - t}))
"""


def plain_once(model: str, device: str) -> float:
    """Return seconds of torch.compile + first call in a fresh interpreter, caches off and fresh."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", TORCHINDUCTOR_CACHE_DIR=cache,
                   TRITON_CACHE_DIR=os.path.join(cache, "triton"), PYTHONPATH=str(REPO_ROOT))
        for key in ("TORCH_COMPILE_DEBUG", "TORCH_TRACE", "TORCH_LOGS"):
            env.pop(key, None)
        out = subprocess.run([sys.executable, "-c", PLAIN, model, device, "0"], env=env, check=True,
                             capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["compile_s"]


def capture_once(model: str, device: str, store: RunStore) -> tuple[float, float]:
    """Return (wall seconds of capture(), first-call seconds inside the child)."""
    t = time.monotonic()
    run = capture(model, CaptureOptions(device=device, dtype="fp32", train=False), store=store)
    wall = time.monotonic() - t
    if not run.ok:
        raise SystemExit(f"capture failed: {run.reason}")
    return wall, run.meta["timings"]["compile_s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="transformer_layer")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    plain, walls, child = [], [], []
    with tempfile.TemporaryDirectory() as home:
        store = RunStore(home)
        for i in range(args.repeat):
            plain.append(plain_once(args.model, args.device))
            wall, compile_s = capture_once(args.model, args.device, store)
            walls.append(wall)
            child.append(compile_s)
            print(f"round {i + 1}: plain {plain[-1]:.2f} s, capture wall {wall:.2f} s, capture first call {compile_s:.2f} s",
                  flush=True)
    p, w, c = statistics.median(plain), statistics.median(walls), statistics.median(child)
    print(f"model {args.model} on {args.device}, median of {args.repeat}: plain compile+call {p:.2f} s, "
          f"capture wall {w:.2f} s, capture first call {c:.2f} s")
    print(f"wall ratio {w / p:.2f}x, compile ratio {c / p:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
