"""One NYTimes-shaped minibatch (15,000 documents, K = 256, m = 100) through the per-nonzero
sampler and one summed T sweep, twice each, for a profiler to read on a GPU machine
(benchmarks/gpu_session.sh with PROFILE=1 runs it under Nsight Compute, ``ncu``, and keeps
its per-kernel report: occupancy, warp stall reasons, memory throughput).

    python benchmarks/gpu_profile.py      # needs CuPy and a CUDA device; takes no options
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_kernels import problem, sync  # noqa: E402

from same.io.cli import ArgumentParser  # noqa: E402


def main(argv=None) -> None:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args(argv)
    from same.model.backend import BackendUnavailableError, get_xp

    try:  # no CuPy or no device: one line, exit 2, before any work
        cp = get_xp("cupy")
    except BackendUnavailableError as exc:
        ap.error(str(exc))

    from same.data.corpus import REGISTRY
    from same.data.synthetic import shaped_corpus
    from same.model import kernels
    from same.model.params import paper_batch_size

    info = REGISTRY["nytimes"]
    docs = paper_batch_size(info.n_docs)
    counts = shaped_corpus(docs, info.n_words, int(info.nnz * docs / info.n_docs),
                           n_tokens=int(info.n_tokens * docs / info.n_docs), seed=0)
    block, theta, phi_t = problem(cp, counts, 256)
    mu = kernels.sddmm(block.indptr, block.indices, theta, phi_t)
    T = cp.empty(theta.shape, dtype=cp.int32)
    P = cp.empty(phi_t.shape, dtype=cp.int32)
    th = theta.copy()
    for _ in range(2):
        kernels.sample_accumulate(block.indptr, block.indices, block.data, theta, phi_t, mu,
                                  100.0, 7, T, P)
        kernels.summed_t_sweeps(block, th, phi_t, 100.0, 1.0, 0.1, [11], None)
    sync(cp)


if __name__ == "__main__":
    main()
