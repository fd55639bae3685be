#!/usr/bin/env bash
# On the GPU machine (issue 36): bench/gpu_fleet.toml's eight third-party models as a Ray sweep, one GPU a
# cell, against the same cells captured one after another on one GPU (the sequential baseline), and a
# second sweep (max-autotune) compared with the first by `compile-viz fleet A B`.
#
#   bench/gpu_fleet.sh PHASE OUT_DIR      PHASE: sweep | sweep1 | sequential | diff | report | all
#
# sweep1 is the same sweep on one GPU (CUDA_VISIBLE_DEVICES=0): Ray's own scaling from one GPU to two,
# apart from what the warm capture children save against `compile-viz capture` one after another.
#
# Ray is not on that machine: bench/gpu_ray_wheels.sh brings it to /tmp/site first. Each phase fits one
# call of 10 minutes on two H100s; state ($STATE: the store, the timings) stays in /tmp between calls
# while the machine is held, so a phase cut off by its limit is run again and goes on where it stopped
# (`sweep --resume`, and the sequential loop skips the cells it has timed). `report` writes the figures:
# $OUT/fleet_timing.json (sweep wall, sequential wall, their ratio) and the fleet documents.
set -uo pipefail
PHASE=${1:?usage: gpu_fleet.sh sweep|sequential|diff|report|all OUT_DIR}
OUT=${2:?usage: gpu_fleet.sh PHASE OUT_DIR}
. "$(dirname "$0")/gpu_env.sh"
export PYTHONPATH=/tmp/site:$PYTHONPATH  # ray, from bench/gpu_ray_wheels.sh install
STATE=${STATE:-/tmp/gpu_fleet}
HOME_DIR=$STATE/home
mkdir -p "$STATE" "$OUT" "$HOME_DIR"
CV="$PY -m compile_viz"
now() { date +%s.%N; }

run_sweep() {  # toml, name: a new sweep, or the rest of one cut off earlier
  local toml=$1 name=$2 t0 t1 code
  t0=$(now)
  if [ -f "$HOME_DIR/sweeps/$name.json" ]; then
    $CV sweep --resume "$name" --home "$HOME_DIR" 2>&1 | tee -a "$OUT/$name.log"; code=${PIPESTATUS[0]}
  else
    $CV sweep "$toml" --name "$name" --home "$HOME_DIR" 2>&1 | tee -a "$OUT/$name.log"; code=${PIPESTATUS[0]}
  fi
  t1=$(now)
  echo "$t0 $t1 $code" >> "$STATE/$name.walls"
}

sequential() {  # each cell as `compile-viz capture`, one after another on GPU 0; walls summed
  local model t0 t1  # the setting of bench/gpu_fleet.toml: cuda, measure
  touch "$STATE/sequential.walls"
  for model in $($PY -c "import tomllib; print(' '.join(tomllib.load(open('bench/gpu_fleet.toml','rb'))['models']))"); do
    grep -q " $model\$" "$STATE/sequential.walls" && continue
    t0=$(now)
    CUDA_VISIBLE_DEVICES=0 $CV capture "$model" --device cuda --measure --timeout 420 --home "$STATE/seq_home" \
      > "$OUT/seq_$(basename "${model//:/_}").log" 2>&1
    t1=$(now)
    echo "$t0 $t1 $model" >> "$STATE/sequential.walls"
    awk -v a="$t0" -v b="$t1" -v m="$model" 'BEGIN { printf "sequential: %s %.1f s\n", m, b - a }'
  done
}

report() {
  $CV fleet gpu-default --json --home "$HOME_DIR" > "$OUT/fleet_gpu_default.json"
  $CV fleet gpu-default --home "$HOME_DIR" | tee "$OUT/fleet_gpu_default.txt"
  $PY - "$HOME_DIR" > "$OUT/cells.json" <<'PY'
import json, sys
from compile_viz.fleet.records import cell_runs
from compile_viz.store import RunStore
store = RunStore(sys.argv[1])
out = {}
for sweep in ("gpu-default", "gpu-one"):
    for key, runs in cell_runs(store, sweep).items():
        m = runs[0].meta
        out.setdefault(sweep, {})[key] = {"wall_s": m.get("timings", {}).get("wall_s"), "warm_child": m.get("warm_child"),
                                          "status": m.get("status"), "created": m.get("created"), "finished": m.get("finished")}
print(json.dumps(out, indent=1))
PY
  if [ -f "$HOME_DIR/sweeps/gpu-autotune.json" ]; then
    $CV fleet gpu-default gpu-autotune --json --home "$HOME_DIR" > "$OUT/fleet_diff.json"
    $CV fleet gpu-default gpu-autotune --home "$HOME_DIR" | tee "$OUT/fleet_diff.txt"
  fi
  $PY - "$STATE" "$OUT" <<'PY'
import json, sys
from pathlib import Path
state, out = Path(sys.argv[1]), Path(sys.argv[2])
def walls(name):
    p = state / name
    return [float(b) - float(a) for a, b, *_ in (l.split() for l in p.read_text().splitlines() if l.strip())] if p.exists() else []
sweep, seq = sum(walls("gpu-default.walls")), sum(walls("sequential.walls"))
one = sum(walls("gpu-one.walls"))
doc = {"sweep_wall_s": round(sweep, 1), "sweep_calls": len(walls("gpu-default.walls")),
       "sweep_one_gpu_wall_s": round(one, 1) or None,
       "two_gpus_over_one": round(one / sweep, 2) if one and sweep else None,
       "sequential_wall_s": round(seq, 1), "sequential_cells": len(walls("sequential.walls")),
       "speedup": round(seq / sweep, 2) if sweep and seq else None,
       "autotune_wall_s": round(sum(walls("gpu-autotune.walls")), 1) or None}
(out / "fleet_timing.json").write_text(json.dumps(doc, indent=1))
print(json.dumps(doc))
PY
  nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/gpus.txt"
  $PY -c "import ray, torch; print('ray', ray.__version__, 'torch', torch.__version__)" > "$OUT/versions.txt"
}

case $PHASE in
  sweep) run_sweep bench/gpu_fleet.toml gpu-default ;;
  sweep1) CUDA_VISIBLE_DEVICES=0 run_sweep bench/gpu_fleet.toml gpu-one ;;
  sequential) sequential ;;
  diff) run_sweep bench/gpu_fleet_autotune.toml gpu-autotune ;;
  report) report ;;
  all) run_sweep bench/gpu_fleet.toml gpu-default; sequential; run_sweep bench/gpu_fleet_autotune.toml gpu-autotune; report ;;
  *) echo "unknown phase $PHASE" >&2; exit 2 ;;
esac
