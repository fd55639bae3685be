#!/usr/bin/env bash
# Check the many_row_sums teaching note on a GPU: kernel launches by default, with a larger
# max_fusion_size, and written as one reduction. Usage: scripts/verify-many-row-sums.sh
set -uo pipefail
cd "$(dirname "$0")/.."
H=$(mktemp -d)
count() { python3 -m compile_viz.cli parse "$1" 2>/dev/null | sed -n 's/.*ops, \([0-9]*\) kernels, \([0-9]*\) launches.*/\1 kernels, \2 launches/p'; }
for opt in "" "--option max_fusion_size=256"; do
  run=$(python3 -m compile_viz.cli capture many_row_sums --device cuda --home "$H" $opt 2>/dev/null | tail -1)
  echo "many_row_sums ${opt:-default}: $(count "$run")"
done
run=$(python3 -m compile_viz.cli capture tests/third_party/one_row_sum.py --device cuda --home "$H" 2>/dev/null | tail -1)
echo "one reduction over a stacked scale: $(count "$run")"
