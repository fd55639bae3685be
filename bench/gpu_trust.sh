#!/usr/bin/env bash
# On the GPU machine (issue 33): record tests/jobs/train_gpt2_lengths.py with --profile twice, once
# with its last step recompiling inside the profiled window (step 7 of 7 changes length) and once in
# steady state, plus a longer job where the recompile lands mid-window (the profile re-arms); then
# capture the held-back models of tests/third_party/unseen.py. Exports each run to OUT_DIR/<name>.zip.
set -uo pipefail
OUT=${1:?usage: gpu_trust.sh OUT_DIR}
. "$(dirname "$0")/gpu_env.sh"
HOME_DIR=$(mktemp -d)
JOB="$PWD/tests/jobs/train_gpt2_lengths.py"
rec() {  # name, job args...
  local name=$1; shift
  local run
  run=$($PY -m compile_viz record --home "$HOME_DIR" --name "$name" --profile --profile-warmup 3 --profile-steps 4 \
        -- $PY "$JOB" "$@" 2> "$OUT/$name.log" | tail -n 1)
  tail -3 "$OUT/$name.log"
  $PY -m compile_viz export --home "$HOME_DIR" "$run" "$OUT/$name.zip" && $PY -m compile_viz profile "$run" --top 5
}
rec gpt2_recompile_in_profile_1gpu --steps 7 --change-at 6
rec gpt2_steady_profile_1gpu --steps 7
rec gpt2_rearmed_profile_1gpu --steps 12 --change-at 6
source scripts/capture_one.sh
capture_one flex_block tests/third_party/unseen.py:FLEX --device cuda &
capture_one gemma2 tests/third_party/unseen.py:GEMMA2 --device cuda --dtype bf16 &
capture_one t5_train tests/third_party/unseen.py:T5_TRAIN --device cuda &
wait
ls -la "$OUT"
