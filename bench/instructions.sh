#!/usr/bin/env bash
# Instructions of one parse and one link of a capture (default: sample_runs/gpt_small.zip), by
# callgrind, the imports and the file loading subtracted. Usage: bench/instructions.sh [PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
count() {
  PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$PY" bench/instructions.py "$@" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
load=$(count load "$@"); parse=$(count parse "$@"); link=$(count link "$@")
echo "parse: $(( (parse - load) / 100000 ))e5 instructions; link: $(( (link - parse) / 100000 ))e5 instructions ($(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty))"
