#!/usr/bin/env bash
# Verify the win on real third-party models (issue 16): capture each model of
# tests/third_party/models.py with the project's own CLI and --measure, one after another (timings
# must not overlap), then write OUT/summary.md: verdict, max error against the reference, speedup,
# kernels per call eager and compiled. gpt2_planted carries a planted error: its verdict must be
# "wrong", naming grad of transformer.h.1.attn.c_attn.weight.
# Usage: scripts/measure-third-party.sh OUT [extra capture flags...]     e.g. --device cuda
#        ONLY="gpt2_train vit_train" scripts/measure-third-party.sh OUT --device cpu   (a subset;
#        runs already in OUT stay, so two batches into one OUT make one table)
# Needs torch, transformers, timm and torchvision; nothing else of the project's requirements.
# About a minute a training run on an H100 (two compiles: yours, and the check's with
# fallback_random=True); under a 10-minute limit run two batches into one OUT:
#   ONLY="gpt2_train gpt2_infer llama_train llama_infer" ...; ONLY="vit_train mobilenet_infer gpt2_planted" ...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: measure-third-party.sh OUT [capture flags]}; shift
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
MODELS=tests/third_party/models.py
ONLY=${ONLY:-}
# name | spec | flags (the user's choices, as on the command line)
RUNS=(
  "gpt2_train|GPT2_TRAIN|--train --dtype autocast"
  "gpt2_infer|GPT2_TRAIN|--no-train --dtype bf16"
  "llama_train|LLAMA_GQA|--train --dtype autocast"
  "llama_infer|LLAMA_GQA|--no-train --dtype bf16"
  "vit_train|VIT|--train --dtype fp32"
  "mobilenet_infer|MOBILENET|--no-train --dtype fp32"
  "gpt2_planted|GPT2_PLANTED|--train --dtype fp32"
)
for row in "${RUNS[@]}"; do
  IFS='|' read -r name spec flags <<< "$row"
  if [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  rm -f "$OUT/$name.run"
  start=$(date +%s)
  # shellcheck disable=SC2086  # flags is a list of words
  python3 -m compile_viz.cli capture "$MODELS:$spec" $flags --measure --home "$OUT/home" "$@" \
    > "$OUT/$name.log" 2>&1
  rc=$?
  run=$(tail -1 "$OUT/$name.log")
  if [ "$rc" -eq 0 ] && [ -f "$run/meta.json" ]; then
    echo "$run" > "$OUT/$name.run"
  fi
  echo "$name: exit $rc in $(( $(date +%s) - start )) s"
  [ "$rc" -eq 0 ] || tail -3 "$OUT/$name.log"
done
python3 scripts/measure_summary.py "$OUT" "${RUNS[@]}" > "$OUT/summary.md"
cat "$OUT/summary.md"
