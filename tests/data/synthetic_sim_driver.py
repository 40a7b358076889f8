"""shaped_corpus's CUDA path under numba-cuda's simulator against its CPU path (run by
tests/data/test_synthetic_cuda.py).

Must run in its own process with ``NUMBA_ENABLE_CUDASIM=1`` set before numba is imported::

    NUMBA_ENABLE_CUDASIM=1 python tests/data/synthetic_sim_driver.py

Prints one JSON object: case → {"equal": bool, "nnz": int}.  Blocks are lowered to 8 threads
and grids to 2 blocks, so that every thread takes several documents (the grid-stride loop).
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1 first"

from same.data import synthetic, synthetic_cuda  # noqa: E402

# the simulator runs the per-document code as Python, whose uint64 arithmetic wraps with a warning
warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)
synthetic_cuda.THREADS, synthetic_cuda.MAX_BLOCKS = 8, 2

#: name → shaped_corpus arguments: ~20 nonzeros a document; λ below 1 (sizes clipped at 1,
#: counts mostly 1); documents of the whole vocabulary (clipped at W); many tokens a nonzero.
CASES = {
    "typical": dict(n_docs=40, n_words=300, nnz=800, n_tokens=1300, seed=5),
    "sparse": dict(n_docs=50, n_words=30, nnz=20, seed=1),
    "dense": dict(n_docs=12, n_words=9, nnz=100, zipf_exponent=1.5, seed=2),
    "many_tokens": dict(n_docs=20, n_words=500, nnz=300, n_tokens=30_000, seed=3),
}


def main() -> None:
    out = {}
    for name, kw in CASES.items():
        cpu = synthetic.shaped_corpus(**kw)
        gpu = synthetic.shaped_corpus(**kw, device="cuda")
        equal = cpu.shape == gpu.shape and all(
            np.array_equal(getattr(cpu, f), getattr(gpu, f)) for f in ("indptr", "indices", "data"))
        out[name] = {"equal": bool(equal), "nnz": int(cpu.nnz)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
