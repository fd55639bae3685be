#!/usr/bin/env bash
# Issue 17, item 4: is the tool's compiled latency what triton.testing.do_bench says?
# For every bundled sample (but gpt_deep) and five third-party models of tests/third_party/models.py:
#   1. `capture --measure` with the project's own CLI (rounds, an interval, the CPU time per call);
#   2. right after, three fresh processes of bench/timing_check.py, each compiling the same model and
#      timing it with do_bench (three, because do_bench moves between processes on launch-bound calls).
# Compiles run side by side (JOBS at a time); every timing, in a capture or a do_bench process, holds
# the flock OUT/gpu.lock (COMPILE_VIZ_TIMING_LOCK), so no two timings share the GPU. Compile workers are
# capped so that the timing process keeps a free core.
# Writes OUT/<name>.json (tool + do_bench + agreement), OUT/timing.md (the table for bench/RESULTS.md),
# the logs, and the runs under OUT/home.
# Usage: scripts/timing-check.sh OUT [capture flags...]            on the GPU box: ... OUT --device cuda
#        ONLY="tiny_linear_relu" BENCH=standin scripts/timing-check.sh OUT --device cpu   (a CPU test)
# Env: JOBS (4), REPEATS (3 do_bench processes), ONLY (names), BENCH (auto|do_bench|standin),
#      PYTHON (python3), DEADLINE (480: seconds after which nothing new starts and what runs is
#      stopped, so the whole script ends within about 8.5 minutes), DO_BENCH_REP_MS (500).
# Needs torch (+ triton on a GPU), transformers, timm and torchvision; no network.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: timing-check.sh OUT [capture flags]}; shift
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
PY=${PYTHON:-python3}
JOBS=${JOBS:-4}
REPEATS=${REPEATS:-3}
BENCH=${BENCH:-auto}
ONLY=${ONLY:-}
DEADLINE=${DEADLINE:-480}  # seconds after the start: no process runs past it, so the table is written in time
START=$(date +%s)
CORES=$(nproc)
export COMPILE_VIZ_TIMING_LOCK="$OUT/gpu.lock"
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-$(( (CORES - 2) / JOBS > 0 ? (CORES - 2) / JOBS : 1 ))}
export COMPILE_VIZ_WARM=0  # no warm child left behind
MODELS=tests/third_party/models.py
# name | model | flags (slowest first: they start first)
RUNS=(
  "gpt2_train|$MODELS:GPT2_TRAIN|--train --dtype autocast"
  "gpt_small|gpt_small|"
  "llama_bf16|$MODELS:LLAMA_GQA|--no-train --dtype bf16"
  "bert_fp16|$MODELS:BERT_MASK|--no-train --dtype fp16"
  "vit_fp32|$MODELS:VIT|--no-train --dtype fp32"
  "mobilenet_fp32|$MODELS:MOBILENET|--no-train --dtype fp32"
)
for s in $($PY -c "from sample_models import sample_names; print(' '.join(n for n in sample_names() if n not in ('gpt_deep', 'gpt_small')))"); do
  RUNS+=("$s|$s|")
done

left() { echo $(( DEADLINE - ($(date +%s) - START) )); }

one() {  # name model flags...: capture --measure, then REPEATS fresh do_bench processes, then OUT/name.json
  local name=$1 model=$2 flags=$3; shift 3
  local start=$SECONDS run i
  rm -f "$OUT/$name".bench*.json "$OUT/$name.json"
  # shellcheck disable=SC2086  # flags is a list of words
  timeout "$(left)" $PY -m compile_viz.cli capture "$model" $flags --measure --home "$OUT/home" \
    "$@" > "$OUT/$name.capture.log" 2>&1 || echo "timing-check: the capture exited with $? ($(left) s left before DEADLINE)" >> "$OUT/$name.capture.log"
  run=$(grep -v '^timing-check: ' "$OUT/$name.capture.log" | tail -1)
  if [ -f "$run/measure.json" ]; then
    for i in $(seq 1 "$REPEATS"); do
      [ "$(left)" -gt 5 ] || { echo "$name: do_bench process $i not started: DEADLINE reached"; break; }
      timeout "$(left)" env -u TORCH_COMPILE_DEBUG TORCHINDUCTOR_CACHE_DIR="$OUT/cache/$name" \
        $PY bench/timing_check.py "$run" --out "$OUT/$name.bench$i.json" --bench "$BENCH" \
        > "$OUT/$name.bench$i.log" 2>&1 || { echo "$name: do_bench process $i failed"; tail -3 "$OUT/$name.bench$i.log"; }
    done
  else
    echo "$name: capture failed"; tail -3 "$OUT/$name.capture.log"
  fi
  echo "$name ($((SECONDS - start)) s): $($PY scripts/timing_table.py collect "$OUT" "$name" "$model" "$flags")"
}

for row in "${RUNS[@]}"; do
  IFS='|' read -r name model flags <<< "$row"
  if [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  if [ "$(left)" -lt 90 ]; then echo "$name: not started, $(left) s left before DEADLINE"; continue; fi
  one "$name" "$model" "$flags" "$@" &
done
wait
$PY scripts/timing_table.py table "$OUT" > "$OUT/timing.md"
cat "$OUT/timing.md"
echo "total: $SECONDS s"
