#!/usr/bin/env bash
# On the GPU machine (one GPU; python3 with torch 2.11+, triton and transformers 5.x): capture the same
# transformers models once with torch.compile (JIT) and once ahead of time (--aoti: torch.export, then
# AOTInductor's aoti_compile_and_package), inference on cuda, with the project's own CLI; export each
# run to OUT/<name>.zip (the package's binaries and weights are never kept in a run: a zip stays small)
# and write what parse says of each and what diff says of each JIT/AOT pair beside them.
# Usage: bench/gpu_aoti.sh OUT_DIR [MODEL_SPEC...]   (default: GPT2_INFER and BERT_MASK of tests/third_party/models.py)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_aoti.sh OUT_DIR [MODEL_SPEC...]}; shift
SPECS=${*:-GPT2_INFER BERT_MASK}
. bench/gpu_env.sh
mkdir -p "$OUT"
HOME_DIR=$(mktemp -d)
# AOTInductor builds its C++ wrapper against the CUDA headers (torch.utils.cpp_extension's CUDA_HOME); on a
# machine without a CUDA toolkit, take the headers pip's nvidia packages bring, and say so
if [ -z "${CUDA_HOME:-}" ] && ! command -v nvcc > /dev/null && [ ! -d /usr/local/cuda ]; then
  CUDA_HOME=$($PY - <<'EOF'
import glob, importlib, os
for mod in ("nvidia.cuda_runtime", "nvidia.cu13", "nvidia.cu12", "nvidia.cuda_nvcc"):
    try:
        paths = list(importlib.import_module(mod).__path__)
    except ImportError:
        continue
    for base in paths:
        if glob.glob(os.path.join(base, "include", "cuda*.h")):
            print(base)
            raise SystemExit
EOF
)
  if [ -n "$CUDA_HOME" ]; then export CUDA_HOME; echo "no CUDA toolkit: CUDA_HOME=$CUDA_HOME (pip's nvidia headers)"; fi
fi
$PY -c 'import torch, triton, transformers; print("torch", torch.__version__, "triton", triton.__version__, "transformers", transformers.__version__, torch.cuda.get_device_name(0))' | tee "$OUT/versions.txt"

capture() {  # capture NAME SPEC [flags...]: the run's folder on stdout's last line of OUT/NAME.log
  local name=$1 spec=$2; shift 2
  local start=$SECONDS
  $PY -m compile_viz capture "tests/third_party/models.py:$spec" --device cuda --no-train --home "$HOME_DIR" \
    "$@" > "$OUT/$name.log" 2>&1
  local rc=$? run
  run=$(tail -1 "$OUT/$name.log")
  echo "$name: capture exit $rc in $((SECONDS - start)) s -> $run"
  grep -h "capture failed" "$OUT/$name.log"
  [ -d "$run" ] || return 1
  $PY -m compile_viz export "$run" "$OUT/$name.zip" --home "$HOME_DIR" >> "$OUT/$name.log" 2>&1
  $PY -m compile_viz parse "$OUT/$name.zip" > "$OUT/$name.parse.txt" 2>&1
  $PY -m compile_viz parse --trace "$OUT/$name.zip" > "$OUT/$name.parse_trace.txt" 2>&1
  echo "$name: $(du -h "$OUT/$name.zip" | cut -f1); $(tail -n 2 "$OUT/$name.parse.txt" | tr '\n' ' ')"
}

for spec in $SPECS; do
  base=$(echo "$spec" | tr 'A-Z' 'a-z')
  capture "${base}_jit" "$spec"
  capture "${base}_aoti" "$spec" --aoti
  if [ -f "$OUT/${base}_jit.zip" ] && [ -f "$OUT/${base}_aoti.zip" ]; then
    $PY -m compile_viz diff "$OUT/${base}_jit.zip" "$OUT/${base}_aoti.zip" > "$OUT/${base}_diff.txt" 2>&1
    $PY -m compile_viz diff "$OUT/${base}_jit.zip" "$OUT/${base}_aoti.zip" --json > "$OUT/${base}_diff.json" 2>&1
    head -n 20 "$OUT/${base}_diff.txt"
  fi
done
ls -la "$OUT"
