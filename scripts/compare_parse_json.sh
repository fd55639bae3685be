#!/usr/bin/env bash
# Show that two revisions print the same `compile-viz parse --json` values on every capture:
# ../shared/corpus (each set), sample_runs/*.zip and tests/fixtures/third_party/*.zip, and (with --trace)
# the TORCH_TRACE logs of the run zips and of ../shared/corpus/traces. Outputs are
# compared as parsed JSON (equal values, in the same key order), so a change of layout only, such
# as indent=1 to compact, counts as the same; byte-identical outputs are reported as such.
# Usage: scripts/compare_parse_json.sh REV_A REV_B     (for a refactor: its parent and itself)
# Each revision runs from its own worktree under /tmp with this checkout's .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-$ROOT/.venv/bin/python}
A=${1:?usage: compare_parse_json.sh REV_A REV_B}; B=${2:?usage: compare_parse_json.sh REV_A REV_B}
sources() {
  ls -d "$ROOT"/../shared/corpus/*/*/ 2>/dev/null | grep -v '/traces/' || true
  ls "$ROOT"/sample_runs/*.zip "$ROOT"/tests/fixtures/third_party/*.zip 2>/dev/null || true
}
trace_sources() {  # read with --trace: every TORCH_TRACE log the run zips hold, and tlparse's own inputs
  ls "$ROOT"/sample_runs/*.zip "$ROOT"/tests/fixtures/third_party/*.zip "$ROOT"/tests/fixtures/scale/*.zip \
    "$ROOT"/tests/fixtures/unseen/*.zip 2>/dev/null || true
  find "$ROOT"/../shared/corpus/traces -type f 2>/dev/null | sort || true
}
dump() {  # rev outdir
  local wt; wt=$(mktemp -d /tmp/cv-rev-XXXX)
  git worktree add -q --detach "$wt" "$1"
  mkdir -p "$2"
  for s in $(sources); do
    name=$(basename "$(dirname "$s")")__$(basename "$s")
    (cd "$wt" && PYTHONPATH="$wt" "$PY" -c 'import sys; sys.path.insert(0, "."); from compile_viz.cli import main; sys.exit(main())' \
      parse --json "$s" > "$2/$name.json" 2>/dev/null) || echo "exit $? $name" >> "$2/errors"
  done
  for s in $(trace_sources); do
    name=trace__$(basename "$(dirname "$s")")__$(basename "$s")
    (cd "$wt" && PYTHONPATH="$wt" "$PY" -c 'import sys; sys.path.insert(0, "."); from compile_viz.cli import main; sys.exit(main())' \
      parse --json --trace "$s" > "$2/$name.json" 2>/dev/null) || echo "exit $? $name" >> "$2/errors"
  done
  git worktree remove --force "$wt"
}
OUT=$(mktemp -d /tmp/cv-cmp-XXXX)
dump "$A" "$OUT/a"; dump "$B" "$OUT/b"
n=$(ls "$OUT/a" | wc -l)
if diff -r -q "$OUT/a" "$OUT/b" > /dev/null; then
  echo "identical: $n outputs of parse --json ($A vs $B), byte for byte"
elif "$PY" - "$OUT/a" "$OUT/b" <<'PY'
import json, sys
from pathlib import Path

a, b = Path(sys.argv[1]), Path(sys.argv[2])
names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
bad = []
for name in names:
    pa, pb = a / name, b / name
    if not (pa.exists() and pb.exists()):
        bad.append(f"{name}: only in {'A' if pa.exists() else 'B'}")
    elif pa.read_bytes() != pb.read_bytes():
        if name == "errors":
            bad.append("errors differ")
            continue
        va, vb = json.loads(pa.read_bytes()), json.loads(pb.read_bytes())
        # == ignores key order; the layout of indent=1 does not: compare both
        if va != vb or json.dumps(va) != json.dumps(vb):
            bad.append(f"{name}: values differ")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
then
  echo "same values: $n outputs of parse --json ($A vs $B); the layout differs"
else
  echo "DIFFERENT (outputs kept in $OUT)"; exit 1
fi
rm -rf "$OUT"
