#!/usr/bin/env bash
# What benchmarks/gpu_session.sh needs beside the tree on a GPU machine with no network,
# fetched here (with network) into git-ignored folders that the device tool carries:
# .whl/ (the wheels the device image lacks, for CPython 3.12 on manylinux x86_64) and
# .gpudata/uci/ (KOS's UCI files, from SAME_DATA_DIR or ../shared/datasets/uci).
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then  # the comment above, nothing run
  echo "usage: benchmarks/gpu_wheels.sh  (no arguments)"
  awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"
  exit 0
fi
(( $# == 0 )) || { echo "gpu_wheels.sh: takes no arguments, got $*" >&2; exit 2; }
mkdir -p .whl .gpudata/uci
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .whl pooch==1.9.0 platformdirs==4.14.8 \
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
src="${SAME_DATA_DIR:-../shared/datasets/uci}"
cp "${src%%:*}/docword.kos.txt.gz" "${src%%:*}/vocab.kos.txt" .gpudata/uci/
du -sh .whl .gpudata
