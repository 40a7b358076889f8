"""CPU kernels (numba) for the two hot steps of SAME Gibbs LDA.

Both loop over the nonzeros of a CSR block of documents, parallel over
documents (``prange``), and never build an nnz × K temporary.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

__all__ = ["sddmm_csr"]


@njit(parallel=True, cache=True, nogil=True)
def sddmm_csr(indptr, indices, theta, phi_t, out):  # pragma: no cover - compiled
    """μ_j = Σ_k θ[d, k] φᵀ[w_j, k] for every nonzero j of document d (SDDMM).

    indptr : (D+1,) int; indices : (nnz,) int word ids; theta : (D, K);
    phi_t : (W, K) C-contiguous (φ transposed); out : (nnz,) written in place.
    """
    n_docs = indptr.shape[0] - 1
    n_topics = theta.shape[1]
    for d in prange(n_docs):
        for j in range(indptr[d], indptr[d + 1]):
            w = indices[j]
            s = 0.0
            for k in range(n_topics):
                s += theta[d, k] * phi_t[w, k]
            out[j] = s
    return out


def set_threads(n: int | None) -> int:
    """Pin numba's thread count (None = all cores); returns the count in force."""
    if n is not None:
        numba.set_num_threads(int(n))
    return numba.get_num_threads()
