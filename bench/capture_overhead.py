"""Capture overhead: `capture()` (child process, TORCH_COMPILE_DEBUG=1, TORCH_TRACE), cold and warm, against
a plain torch.compile + first call of the same model in a fresh interpreter, caches disabled on all sides.

Usage: python bench/capture_overhead.py [--model transformer_layer] [--device cpu] [--repeat 3]
Each round runs plain, cold capture and warm capture, one after the other, the order rotating from round
to round; what each timer holds:
  plain  untimed: new interpreter, import torch and Inductor's config (which pulls in torch._dynamo: the same
         imports the capture child makes before its own timer), model build.
         timed: torch.compile(model) + first call.
  cold   timed in the parent: capture(warm=False): new interpreter, import torch and Inductor's config,
         model build, torch.compile + first call, debug and trace files, child exit, store commit.
  warm   untimed: prewarm() (new interpreter, import torch and Inductor's config, waited for until ready,
         like the plain side's import).  timed in the parent: capture(warm=True): request sent, model build,
         torch.compile + first call, debug and trace files, child exit, store commit, and the spawn
         (not the import) of the next warm child.
Prints the medians and the ratios to plain: wall ratio (parent's clock) and compile ratio (the first
call timed inside the capture child: the debug-output cost alone).
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

from compile_viz.capture import CaptureOptions, capture, prewarm, warm  # noqa: E402
from compile_viz.record.process import REPO_ROOT  # noqa: E402
from compile_viz.store import RunStore  # noqa: E402

PLAIN = """
import json, sys, time, torch
import torch._inductor.config  # what the capture child imports before its timer (pulls in torch._dynamo)
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


def ensure_warm(store: RunStore) -> None:
    """Leave a warm child waiting with its imports done, so that no import runs inside any timer."""
    if not (prewarm(store) and warm.wait_ready()):
        raise SystemExit("the warm child did not start (COMPILE_VIZ_WARM=0?)")


def capture_once(model: str, device: str, store: RunStore, *, use_warm: bool) -> tuple[float, float]:
    """Return (wall seconds of capture(), first-call seconds inside the child)."""
    t = time.monotonic()
    run = capture(model, CaptureOptions(device=device, dtype="fp32", train=False), store=store, warm=use_warm)
    wall = time.monotonic() - t
    if not run.ok:
        raise SystemExit(f"capture failed: {run.reason}")
    if run.meta["warm_child"] != use_warm:
        raise SystemExit(f"asked for warm={use_warm}, the capture ran warm={run.meta['warm_child']}")
    return wall, run.meta["timings"]["compile_s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="transformer_layer")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    plain: list[float] = []
    walls: dict[str, list[float]] = {"cold": [], "warm": []}
    child: dict[str, list[float]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as home:
        store = RunStore(home)
        try:
            for i in range(args.repeat):
                kinds = ["plain", "cold", "warm"]
                for kind in kinds[i % 3:] + kinds[:i % 3]:
                    ensure_warm(store)  # idle while the others run: it only waits on its stdin
                    if kind == "plain":
                        plain.append(plain_once(args.model, args.device))
                        continue
                    wall, compile_s = capture_once(args.model, args.device, store, use_warm=kind == "warm")
                    walls[kind].append(wall)
                    child[kind].append(compile_s)
                print(f"round {i + 1}: plain {plain[-1]:.2f} s; " + "; ".join(
                    f"{k} capture wall {walls[k][-1]:.2f} s, first call {child[k][-1]:.2f} s" for k in walls),
                    flush=True)
        finally:
            warm.shutdown()
    p = statistics.median(plain)
    print(f"model {args.model} on {args.device}, median of {args.repeat}: plain compile+call {p:.2f} s")
    for kind in walls:
        w, c = statistics.median(walls[kind]), statistics.median(child[kind])
        # load from other jobs drifts over minutes: a round's ratio compares runs made side by side
        per_round = statistics.median([a / b for a, b in zip(walls[kind], plain, strict=True)])
        print(f"{kind} capture: wall {w:.2f} s, first call in the child {c:.2f} s; "
              f"wall ratio {w / p:.2f}x (median of per-round ratios {per_round:.2f}x), compile ratio {c / p:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
