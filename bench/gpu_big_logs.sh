#!/usr/bin/env bash
# On a 4-GPU machine, at once:
# 1. a big recorded job for issue 25's big-log figures: a transformers GPT-2 of 48 layers under DDP
#    on every GPU, with length-bucketed batches and torch.compile(dynamic=False), so that each
#    length recompiles the whole model on each rank; its TORCH_TRACE logs (and meta.json) come back
#    as OUT/biglogs.tar.xz.NN pieces of 15 MB (cat them, then tar -xJf);
# 2. the unseen architectures of tests/third_party/families.py (issue 28), zipped into OUT/families.zip.
# Usage: bench/gpu_big_logs.sh OUT   (LAYERS, LENS, STEPS, NPROC, TIMEOUT override the job's size)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: gpu_big_logs.sh OUT}
LAYERS=${LAYERS:-48} LENS=${LENS:-128,192,256} STEPS=${STEPS:-6} TIMEOUT=${TIMEOUT:-420}
. bench/gpu_env.sh
NPROC=${NPROC:-$(nvidia-smi -L | wc -l)}
mkdir -p "$OUT"
H=$(mktemp -d)
$PY -c 'import torch, triton, transformers; print("torch", torch.__version__, "triton", triton.__version__, "transformers", transformers.__version__, "gpus", torch.cuda.device_count(), torch.cuda.get_device_name(0))'
start=$SECONDS
$PY -m compile_viz record --home "$H/big" --name big_gpt2 --timeout "$TIMEOUT" -- torchrun --nproc-per-node "$NPROC" \
  tests/jobs/train_gpt2_dist.py --strategy ddp --layers "$LAYERS" --seq-lens "$LENS" --dynamic false \
  --steps "$STEPS" > "$H/big.log" 2>&1 &
big=$!
scripts/capture-families.sh "$H/families" --device cuda
echo "families done at $((SECONDS - start)) s"
$PY - "$H/families" "$OUT/families.zip" <<'PY'
import pathlib, sys, zipfile
src, dst = pathlib.Path(sys.argv[1]), sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
    for p in sorted(src.iterdir()):
        z.write(p, p.name)
PY
wait $big
echo "big job exit $? at $((SECONDS - start)) s"
tail -n 15 "$H/big.log" | tee "$OUT/big_tail.txt"
run=$(tail -n 1 "$H/big.log")
du -sh "$run" "$run"/trace "$run"/debug 2>&1; ls -la "$run"/trace
du -sb "$run"/trace > "$OUT/big_sizes.txt"; ls -la "$run"/trace >> "$OUT/big_sizes.txt"; cp "$run/meta.json" "$OUT/big_meta.json"
tar -C "$run" -cf - trace meta.json | xz -T0 -9 | split -b 15M -d - "$OUT/biglogs.tar.xz."
echo "packed at $((SECONDS - start)) s"; ls -la "$OUT"
