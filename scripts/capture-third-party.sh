#!/usr/bin/env bash
# Capture the third-party models of tests/third_party/models.py with the project's own CLI and
# export each run to OUT/<name>.zip (the fixtures in tests/fixtures/third_party/).
# Usage: scripts/capture-third-party.sh OUT [extra capture flags...]   (on a GPU box: --device cuda)
# Needs torch, transformers, timm and torchvision; nothing else of the project's requirements.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: capture-third-party.sh OUT [capture flags]}; shift
HOME_DIR=$(mktemp -d)
MODELS=tests/third_party/models.py
cv() { python3 -m compile_viz.capture.cli "$@"; }
one() {  # name spec flags...
  local name=$1 spec=$2; shift 2
  local run
  run=$(cv capture "$MODELS:$spec" --home "$HOME_DIR/$name" "$@" > "$OUT/$name.log" 2>&1; tail -1 "$OUT/$name.log")
  if cv export "$run" "$OUT/$name.zip" --home "$HOME_DIR/$name" >> "$OUT/$name.log" 2>&1; then
    echo "$name: $(du -h "$OUT/$name.zip" | cut -f1)"
  else
    echo "$name: FAILED"; tail -5 "$OUT/$name.log"
  fi
}
mkdir -p "$OUT"
one gpt2_train GPT2_TRAIN "$@" &
one gpt2_dynamic GPT2_DYNAMIC "$@" &
one llama_gqa LLAMA_GQA --dtype bf16 "$@" &
one bert_mask BERT_MASK "$@" &
one timm_vit_train VIT --train "$@" &
one mobilenet_v3 MOBILENET "$@" &
one bert_mask_autotune BERT_MASK --mode max-autotune-no-cudagraphs "$@" &
wait
