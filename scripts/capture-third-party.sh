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
source scripts/capture_one.sh
mkdir -p "$OUT"
capture_one gpt2_train "$MODELS:GPT2_TRAIN" "$@" &
capture_one gpt2_dynamic "$MODELS:GPT2_DYNAMIC" "$@" &
capture_one llama_gqa "$MODELS:LLAMA_GQA" --dtype bf16 "$@" &
capture_one bert_mask "$MODELS:BERT_MASK" "$@" &
capture_one timm_vit_train "$MODELS:VIT" --train "$@" &
capture_one mobilenet_v3 "$MODELS:MOBILENET" "$@" &
capture_one bert_mask_autotune "$MODELS:BERT_MASK" --mode max-autotune-no-cudagraphs "$@" &
wait
