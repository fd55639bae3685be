#!/usr/bin/env bash
# Issue 12's scale captures on a GPU box: the gpt_deep sample (48 blocks, training step, autocast)
# and a 48-layer transformers GPT-2 (training step), each exported to OUT/<name>.zip.
# Usage: scripts/capture-deep.sh OUT [extra capture flags...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: capture-deep.sh OUT [capture flags]}; shift
HOME_DIR=$(mktemp -d)
cv() { python3 -m compile_viz.capture.cli "$@"; }
one() {  # name model flags...
  local name=$1 model=$2; shift 2
  local run start=$SECONDS
  run=$(cv capture "$model" --home "$HOME_DIR/$name" "$@" > "$OUT/$name.log" 2>&1; tail -1 "$OUT/$name.log")
  if cv export "$run" "$OUT/$name.zip" --home "$HOME_DIR/$name" >> "$OUT/$name.log" 2>&1; then
    echo "$name: $(du -h "$OUT/$name.zip" | cut -f1) in $((SECONDS - start)) s"
  else
    echo "$name: FAILED"; tail -5 "$OUT/$name.log"
  fi
}
mkdir -p "$OUT"
one gpt_deep gpt_deep "$@" &
one gpt2_deep tests/third_party/models.py:GPT2_DEEP "$@" &
wait
