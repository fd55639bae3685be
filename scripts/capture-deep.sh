#!/usr/bin/env bash
# Issue 12's scale captures on a GPU box: the gpt_deep sample (48 blocks, training step, autocast)
# and a 48-layer transformers GPT-2 (training step), each exported to OUT/<name>.zip.
# Usage: scripts/capture-deep.sh OUT [extra capture flags...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: capture-deep.sh OUT [capture flags]}; shift
HOME_DIR=$(mktemp -d)
source scripts/capture_one.sh
mkdir -p "$OUT"
capture_one gpt_deep gpt_deep "$@" &
capture_one gpt2_deep tests/third_party/models.py:GPT2_DEEP "$@" &
wait
