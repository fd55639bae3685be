#!/usr/bin/env bash
# Capture the architectures of tests/third_party/families.py (issue 28's unseen families) with the
# project's own CLI, one capture per GPU in turn, each exported to OUT/<name>.zip (log beside).
# Usage: scripts/capture-families.sh OUT [extra capture flags...]   (on a GPU box: --device cuda)
# Needs torch, transformers, timm, torchvision and torch_geometric.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: capture-families.sh OUT [capture flags]}; shift
HOME_DIR=$(mktemp -d)
M=tests/third_party/families.py
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l); NGPU=$(( NGPU > 0 ? NGPU : 1 ))
source scripts/capture_one.sh
mkdir -p "$OUT"
i=0
one() { (export CUDA_VISIBLE_DEVICES=$(( i % NGPU )); capture_one "$@") & i=$((i + 1)); }
one t5_encdec_train "$M:T5" --train "$@"
one qwen2_moe_bf16 "$M:QWEN2_MOE" --dtype bf16 "$@"
one olmoe_train "$M:OLMOE" --train "$@"
one wav2vec2 "$M:WAV2VEC2" "$@"
one resnet18_cl_train "$M:RESNET18_CL" --train "$@"
one convnext_cl "$M:CONVNEXT_CL" "$@"
one pyg_gcn_gat "$M:GNN" "$@"
one unet_stage_train "$M:UNET" --train "$@"
wait
