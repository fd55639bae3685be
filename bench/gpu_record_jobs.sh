#!/usr/bin/env bash
# On the GPU machine (two GPUs): record a transformers GPT-2 training job under DDP, then FSDP2,
# with the command alone, interleaved with the same job unrecorded (bench/record_overhead.py), and
# bring back each strategy's last recorded run as a zip, its overhead figures and what parse says.
# Usage: bench/gpu_record_jobs.sh OUT_DIR [ddp fsdp2] [ROUNDS]
set -uo pipefail
OUT=${1:?usage: gpu_record_jobs.sh OUT_DIR [STRATEGY...] }; shift
STRATEGIES=${STRATEGIES:-${*:-ddp fsdp2}}
ROUNDS=${ROUNDS:-2}
. "$(dirname "$0")/gpu_env.sh"
mkdir -p "$OUT"
$PY -c 'import torch, triton, transformers; print("torch", torch.__version__, "triton", triton.__version__, "transformers", transformers.__version__, "gpus", torch.cuda.device_count(), torch.cuda.get_device_name(0))'
for s in $STRATEGIES; do
  echo "== $s"
  $PY bench/record_overhead.py --rounds "$ROUNDS" --out "$OUT/overhead_$s.json" -- \
    torchrun --nproc-per-node 2 tests/jobs/train_gpt2_dist.py --strategy "$s" || { echo "FAILED $s"; continue; }
  run=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['rounds'][-1]['run'])" "$OUT/overhead_$s.json")
  $PY -m compile_viz parse --trace "$run" > "$OUT/parse_trace_$s.txt" 2>&1
  $PY -m compile_viz parse "$run" > "$OUT/parse_$s.txt" 2>&1
  tail -n 3 "$OUT/parse_trace_$s.txt"; tail -n 2 "$OUT/parse_$s.txt"
  $PY -m compile_viz export "$run" "$OUT/gpt2_$s.zip" --home "$(dirname "$(dirname "$run")")"
  ls -la "$OUT"
done
