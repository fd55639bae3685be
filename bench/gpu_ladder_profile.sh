#!/usr/bin/env bash
# On the GPU machine (two GPUs): (1) record a 2-rank DDP GPT-2 training job with --profile and join
# its profiles (compile-viz profile); (2) the backend ladder on transformers models in bf16, a
# mixture of experts among them (capture --ladder). Figures and zips under OUT_DIR.
set -uo pipefail
OUT=${1:?usage: gpu_ladder_profile.sh OUT_DIR}
. "$(dirname "$0")/gpu_env.sh"
H=$(mktemp -d)
run=$($PY -m compile_viz record --home "$H" --profile -- torchrun --nproc-per-node 2 tests/jobs/train_gpt2_dist.py \
      --strategy ddp --steps 7 2> "$H/record_profile.log" | tail -n 1)
grep -v "^\[rank.\]:W\|^W1\|^I1" "$H/record_profile.log" | tail -n 4
$PY -m compile_viz profile "$run" --top 12 --json > "$OUT/profile_ddp.json"
$PY -m compile_viz profile "$run" --top 12 --export "$H/perfetto.json"; ls -la "$H/perfetto.json"
$PY -m compile_viz export --home "$H" "$run" "$OUT/gpt2_ddp_profiled.zip"
for spec in GPT2_TRAIN LLAMA_GQA MIXTRAL_MOE; do
  echo "== $spec"
  timeout 240 $PY -m compile_viz capture "tests/third_party/models.py:$spec" --dtype bf16 --ladder --home "$H" \
    --timeout 230 > "$OUT/ladder_$spec.txt" 2>&1
  grep -E "measured:|ladder|failed" "$OUT/ladder_$spec.txt" | tail -n 3
  last=$(tail -n 1 "$OUT/ladder_$spec.txt")
  [ -f "$last/measure.json" ] && cp "$last/measure.json" "$OUT/measure_$spec.json"
done
ls -la "$OUT"
