#!/usr/bin/env bash
# Capture the families of tests/third_party/classes.py (issue 38: one or more per class of
# inferred-link miss) with the project's own CLI, spread over the GPUs, each exported to
# OUT/<name>.zip (log beside). Usage: scripts/capture-classes.sh OUT [capture flags] (--device cuda)
# Needs torch, transformers, timm and torchvision.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: capture-classes.sh OUT [capture flags]}; shift
HOME_DIR=$(mktemp -d)
M=tests/third_party/classes.py
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l); NGPU=$(( NGPU > 0 ? NGPU : 1 ))
source scripts/capture_one.sh
mkdir -p "$OUT"
i=0
one() { (export CUDA_VISIBLE_DEVICES=$(( i % NGPU )); capture_one "$@") & i=$((i + 1)); }
one regnet_train "$M:REGNET_TRAIN" "$@"
one efficientnet_train "$M:EFFNET_TRAIN" "$@"
one swin "$M:SWIN" "$@"
one convnext_cf_train "$M:CONVNEXT_CF_TRAIN" "$@"
one bart_train "$M:BART_TRAIN" "$@"
one mixtral_train "$M:MIXTRAL_TRAIN" --dtype bf16 "$@"
one dit_train "$M:DIT" "$@"
wait
ls -la "$OUT"
