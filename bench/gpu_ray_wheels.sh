#!/usr/bin/env bash
# Ray for the GPU machine (issue 36), which has no Ray and reaches no package registry: its wheel for
# Python 3.12 (~79 MB) is more than one call there may carry (64 MiB, the working tree included), so it
# travels in parts over consecutive calls while the machine stays held, and is joined and installed there.
#
#   here:   bench/gpu_ray_wheels.sh download        # .rayparts/1 .. .rayparts/N (git-ignored), each small
#                                                     # enough to ride beside the working tree
#   there:  bench/gpu_ray_wheels.sh stage K         # call K, with carry [".rayparts/K"]: keep part K in /tmp
#           bench/gpu_ray_wheels.sh install         # after the last part: join, check sha256, install
#                                                     # into /tmp/site (then PYTHONPATH=/tmp/site)
#
# The dependencies that machine lacks (KINDS.md's package list: jsonschema and its own) ride in part 1.
set -euo pipefail
cd "$(dirname "$0")/.."
RAY=${RAY_VERSION:-2.60.0}
PARTS=.rayparts
KEEP=/tmp/ray-wheels
SITE=/tmp/site
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
# What Ray needs that the GPU image does not hold (click, filelock, msgpack, packaging, protobuf, pyyaml and
# requests it does): jsonschema, and jsonschema's referencing, jsonschema-specifications and rpds-py.
MISSING=(jsonschema==4.25.1 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==0.28.0)

download() {
  grep -qx "/$PARTS/" .git/info/exclude 2>/dev/null || echo "/$PARTS/" >> .git/info/exclude
  rm -rf "$PARTS" && mkdir -p "$PARTS/wheels"
  local pip=(python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
             "${PLATFORMS[@]}" -d "$PARTS/wheels")
  "${pip[@]}" "ray==$RAY"
  for dep in "${MISSING[@]}"; do "${pip[@]}" "$dep"; done
  local wheel tree_bytes part_bytes
  wheel=$(ls "$PARTS"/wheels/ray-*.whl)
  # a call carries 64 MiB with the working tree (tracked and untracked files git does not ignore)
  tree_bytes=$( (git ls-files -z; git ls-files -z -o --exclude-standard) | xargs -0 du -cb 2>/dev/null | awk 'END { print $1 }')
  part_bytes=$(( (62 << 20) - tree_bytes - (2 << 20) ))
  [ "$part_bytes" -gt $((4 << 20)) ] || { echo "the working tree leaves no room to carry a part" >&2; exit 1; }
  split -b "$part_bytes" -d -a 2 "$wheel" "$PARTS/wheels/ray.part."
  local n=0 p
  for p in "$PARTS"/wheels/ray.part.*; do
    n=$((n + 1)); mkdir -p "$PARTS/$n"; mv "$p" "$PARTS/$n/"
  done
  mv "$PARTS"/wheels/*.whl "$PARTS/1/" 2>/dev/null || true
  mv "$PARTS/1/$(basename "$wheel")" "$PARTS/"  # the whole wheel stays here, only its parts travel
  (cd "$PARTS" && sha256sum "$(basename "$wheel")" > manifest.sha256 && echo "$n" > manifest.parts)
  for k in $(seq 1 "$n"); do cp "$PARTS/manifest.sha256" "$PARTS/manifest.parts" "$PARTS/$k/"; done
  rmdir "$PARTS/wheels"
  du -sh "$PARTS"/[0-9]* | sed 's|^|carry |'
  echo "then, on the GPU machine: stage 1 .. stage $n (carry .rayparts/K each), then install"
}

stage() {
  local k=${1:?stage K}
  mkdir -p "$KEEP"
  cp "$PARTS/$k"/* "$KEEP/"
  echo "part $k kept in $KEEP: $(ls "$KEEP" | tr '\n' ' ')"
}

install() {
  cd "$KEEP"
  local want wheel
  want=$(cat manifest.parts)
  [ "$(ls ray.part.* | wc -l)" -eq "$want" ] || { echo "have $(ls ray.part.* | wc -l) of $want parts: stage the rest" >&2; exit 1; }
  wheel=$(awk '{ print $2 }' manifest.sha256)
  cat ray.part.* > "$wheel"
  sha256sum -c manifest.sha256
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" ./*.whl
  PYTHONPATH=$SITE python3 -c "import ray, jsonschema; print('ray', ray.__version__, 'in $SITE')"
}

case ${1:-} in
  download) download ;;
  stage) stage "${2:-}" ;;
  install) install ;;
  *) echo "usage: gpu_ray_wheels.sh download | stage K | install" >&2; exit 2 ;;
esac
