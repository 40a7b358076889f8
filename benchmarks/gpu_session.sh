#!/usr/bin/env bash
# The GPU check of issue 50 as one prepared script for a lent GPU machine (README "GPU"): it
# fits ten minutes of a fresh machine with no network, start-up included (its own steps stop
# by SESSION_LIMIT, 480 s by default, each with its own time limit so that a hang in one still
# returns what the others measured).
#
#   bash benchmarks/gpu_wheels.sh            # here, with network: .whl/ and .gpudata/uci/
#   SAME_COMMIT=$(git rev-parse HEAD) bash benchmarks/gpu_session.sh OUT   # there
#
# The device image has CuPy, numba-cuda, NumPy 2.5, SciPy, scikit-learn, pyarrow, tqdm and
# psutil; the rest travels as wheels in .whl/ (installed with --no-index --target): pooch,
# platformdirs, jsonschema, jsonschema-specifications, referencing, rpds-py (CPython 3.12,
# manylinux x86_64).  KOS's UCI files travel in .gpudata/uci/ (SAME_DATA_DIR).  NumPy 2.5
# removed np.row_stack, which numba-cuda 0.30.4 overloads: a sitecustomize aliases it.
#
# Steps (results in OUT, at most 8 files as the device tool returns them):
#  1. env.txt: the GPU (nvidia-smi), driver, package versions, commit;
#  2. same_nytimes_cupy.json, gpu_same.log: benchmarks/gpu_same.py --pubmed-step (per-kernel
#     device times, agreement with the CPU, s/pass at NYTimes' shape for the per-nonzero
#     sampler at m = 1, 5, 20, 100, 500 and the summed sampler at m = 1, 100, one PubMed step
#     of each sampler with the device memory it held);
#  3. kos.log, kos_traces.csv, kos_meta_cupy.json: the runner end to end, `same-lda split`,
#     `same-lda fit` with "backend": "cupy" and with "numpy" (same spec and seed), `same-lda
#     score`; the two traces side by side;
#  4. pytest_gpu.log: pytest -m gpu (tests/model/test_cuda.py, test_backend.py).
# PROFILE=1 adds ncu.txt: Nsight Compute's report on the two sampling kernels at NYTimes'
# minibatch (benchmarks/gpu_profile.py); SKIP="same kos pytest" leaves those steps out;
# GPU_SAME_ARGS passes options to gpu_same.py (e.g. --skip agreement_with_cpu).
# A tiny snakemake run is not part of it: snakemake's wheels (and theirs) would not fit beside
# the tree within the device tool's 64 MiB.
set -uo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then  # the comment above, nothing run
  echo "usage: benchmarks/gpu_session.sh [OUT]  (OUT: default results/gpu/session)"
  awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"
  exit 0
fi
out="${1:-results/gpu/session}"
mkdir -p "$out"
T0=$(date +%s)
left() { echo $(( ${SESSION_LIMIT:-480} - ($(date +%s) - T0) )); }
S=$(mktemp -d)
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$S/site" \
    .whl/*.whl || exit 3
fi
mkdir -p "$S/shim"
printf 'import numpy as np\nif not hasattr(np, "row_stack"):\n    np.row_stack = np.vstack\n' \
  > "$S/shim/sitecustomize.py"
export PYTHONPATH="$S/shim:$S/site:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export SAME_DATA_DIR="${SAME_DATA_DIR:-$PWD/.gpudata/uci}" SAME_COMMIT="${SAME_COMMIT:-}"
{
  date -u +%FT%TZ
  echo "commit ${SAME_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  python3 - <<'PY'
import importlib.metadata as md, os, platform
print("python", platform.python_version(), "cores", os.cpu_count())
for name in ("numpy", "scipy", "numba", "numba-cuda", "llvmlite", "cupy-cuda13x", "cupy-cuda12x",
             "cuda-bindings", "scikit-learn", "pooch", "jsonschema"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "absent")
PY
} > "$out/env.txt" 2>&1
cat "$out/env.txt"

if [[ " ${SKIP:-} " != *" same "* ]]; then
  timeout "$(( $(left) > 260 ? 260 : $(left) ))" python3 benchmarks/gpu_same.py \
    ${PUBMED_STEP---pubmed-step} --out "$out/same_nytimes_cupy.json" ${GPU_SAME_ARGS:-} 2>&1 \
    | grep -v -i "warn" | tee "$out/gpu_same.log"
fi

if [ -n "${PROFILE:-}" ] && [ "$(left)" -gt 60 ]; then  # Nsight Compute on the two sampling kernels
  ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  timeout "$(( $(left) > 150 ? 150 : $(left) ))" "$ncu_bin" --kernel-name \
    regex:'sample_kernel|summed_t_partial' --launch-skip 2 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis \
    python3 benchmarks/gpu_profile.py > "$out/ncu.txt" 2>&1
  grep -E "Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Memory Throughput|Block Limit|==PROF==|Error" "$out/ncu.txt" | head -60
fi

kos() {
  local k="$S/kos" spec
  mkdir -p "$k"
  python3 -m same split --dataset kos --out "$k/split.npz" || return
  spec='{"method": "same", "n_components": 64, "doc_topic_prior": 0.1, "topic_word_prior": 0.1, "seed": 0, "budget": 20, "params": {"n_copies": 100}, "backend": "BACKEND"}'
  for b in ${KOS_BACKENDS:-cupy numpy}; do
    local t=$SECONDS
    python3 -m same fit --spec "${spec/BACKEND/$b}" --split "$k/split.npz" --out "$k/$b" \
      --no-progress || return
    echo "fit $b wall $(( SECONDS - t )) s"
    echo "score $b: $(python3 -m same score --model "$k/$b/model.npz" --split "$k/split.npz")"
  done
  local first=${KOS_BACKENDS:-cupy numpy}
  cp "$k/${first%% *}/meta.json" "$out/kos_meta_cupy.json"
  python3 - "$k" "$out/kos_traces.csv" ${KOS_BACKENDS:-cupy numpy} <<'PY'
import sys
import pandas as pd
k, dest, *backends = sys.argv[1:]
traces = [pd.read_csv(f"{k}/{b}/trace.csv").assign(backend=b) for b in backends]
both = pd.concat(traces)
both.to_csv(dest, index=False)
cols = [c for c in ("ll", "train_seconds") if c in both]
print(both.pivot_table(index="pass", columns="backend", values=cols).tail(5).to_string())
PY
}
if [ "$(left)" -gt 60 ] && [[ " ${SKIP:-} " != *" kos "* ]]; then
  timeout "$(( $(left) > 120 ? 120 : $(left) ))" bash -c "$(declare -f kos); S=$S out=$out; kos" \
    > "$out/kos.log" 2>&1
  grep -v -i "warn" "$out/kos.log" | tail -20
fi

if [ "$(left)" -gt 30 ] && [[ " ${SKIP:-} " != *" pytest "* ]]; then
  timeout "$(left)" python3 -m pytest -q -p no:cacheprovider -m gpu -rA -W ignore::Warning \
    tests/model/test_cuda.py tests/model/test_backend.py tests/data/test_synthetic_cuda.py 2>&1 \
    | tail -40 | tee "$out/pytest_gpu.log"
fi
echo "session seconds $(( $(date +%s) - T0 ))" | tee -a "$out/env.txt"
