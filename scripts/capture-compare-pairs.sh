#!/usr/bin/env bash
# Capture the real pairs of the run comparison's tests (tests/fixtures/compare/) with the project's
# CLI: fp32 vs bf16 of one model, and a model before and after a change that splits one fusion.
# (The default vs max-autotune pair is tests/fixtures/third_party/bert_mask*.zip.)
# Usage: scripts/capture-compare-pairs.sh OUT [capture flags...]   (on a GPU box: --device cuda)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: capture-compare-pairs.sh OUT [capture flags]}; shift
H=$(mktemp -d)
mkdir -p "$OUT"
M=tests/compare_models/split_fusion.py
one() {  # name, capture args...
  local name=$1; shift
  local run
  run=$(python3 -m compile_viz.cli capture "$@" --home "$H" > "$OUT/$name.log" 2>&1; tail -1 "$OUT/$name.log")
  python3 -m compile_viz.cli export "$run" "$OUT/$name.zip" --home "$H" >> "$OUT/$name.log" 2>&1 \
    && echo "$name: $(du -h "$OUT/$name.zip" | cut -f1)" || { echo "$name: FAILED"; tail -5 "$OUT/$name.log"; }
}
one layernorm_fp32 layernorm_linear_gelu_residual --dtype fp32 "$@"
one layernorm_bf16 layernorm_linear_gelu_residual --dtype bf16 "$@"
one split_before "$M:BEFORE" "$@"
one split_after "$M:AFTER" "$@"
