#!/usr/bin/env bash
# On the GPU machine: record the self-profiling GPT-2 script (tests/jobs/train_gpt2_profiled.py)
# alone and under torchrun on two GPUs; move each job's *.pt.trace.json into its run's profile/
# folder (as a run imported with its profile beside it), export the runs as zips into OUT_DIR.
set -uo pipefail
OUT=${1:?usage: gpu_profiled_jobs.sh OUT_DIR}
. "$(dirname "$0")/gpu_env.sh"
HOME_DIR=$(mktemp -d)
one() {  # name, command...
  local name=$1; shift
  local work; work=$(mktemp -d)
  run=$(cd "$work" && $PY -m compile_viz record --home "$HOME_DIR" --name "$name" -- "$@" --profile-dir "$work/profile" | tail -n 1)
  mkdir -p "$run/profile" && cp "$work"/profile/*.pt.trace.json "$run/profile/" && ls -la "$run/profile"
  $PY -m compile_viz export --home "$HOME_DIR" "$run" "$OUT/$name.zip"
}
one gpt2_profiled_1gpu $PY "$PWD/tests/jobs/train_gpt2_profiled.py"
one gpt2_profiled_ddp_2gpu torchrun --nproc-per-node 2 "$PWD/tests/jobs/train_gpt2_profiled.py"
ls -la "$OUT"
