#!/usr/bin/env bash
# The first real GPU runs, as one prepared script for a lent GPU machine (README "GPU"):
# the device's facts, `pytest -m gpu`, then benchmarks/gpu_same.py at NYTimes shape.
# Everything lands in the folder given as $1 (default results/gpu/session): env.txt,
# pytest_gpu.log, gpu_same.log and same_nytimes_cupy.json. Each step has its own time limit,
# so a hang in one still returns what the others measured.
#
#   bash benchmarks/gpu_session.sh OUT [GPU_SAME_ARGS...]
set -uo pipefail
out="${1:-results/gpu/session}"; shift || true
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
{
  date -u +%FT%TZ; git rev-parse HEAD 2>/dev/null || true
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  python3 - <<'PY'
import importlib.metadata as md, platform
print("python", platform.python_version())
for name in ("numpy", "scipy", "numba", "numba-cuda", "llvmlite", "cupy-cuda13x", "cupy-cuda12x",
             "cuda-bindings", "scikit-learn", "pooch"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "absent")
PY
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
timeout "${PYTEST_LIMIT:-240}" python3 -m pytest -q -p no:cacheprovider -m gpu -rA tests/model/test_cuda.py \
  tests/model/test_backend.py 2>&1 | tee "$out/pytest_gpu.log"
timeout "${SAME_LIMIT:-330}" python3 benchmarks/gpu_same.py --out "$out/same_nytimes_cupy.json" "$@" 2>&1 \
  | tee "$out/gpu_same.log"
