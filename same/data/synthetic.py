"""Synthetic corpora: the LDA generative process (for correctness tests) and
corpora of a given shape (for timing at paper scale without the real data)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from same.io.values import check_seed

__all__ = ["SyntheticLDA", "lda_corpus", "shaped_corpus"]


@dataclass
class SyntheticLDA:
    """A corpus drawn from LDA with known parameters.

    counts : csr_matrix (n_docs, n_words) int32; topic_word : (K, W) float64, rows sum to 1;
    doc_topic : (n_docs, K) float64, rows sum to 1.
    """

    counts: sp.csr_matrix
    topic_word: np.ndarray
    doc_topic: np.ndarray


def lda_corpus(n_docs: int = 500, n_words: int = 200, n_topics: int = 5, doc_length: int = 100,
               doc_topic_prior: float = 0.1, topic_word_prior: float = 0.05,
               seed: int = 0) -> SyntheticLDA:
    """Draw a corpus by the LDA generative process (Blei et al. 2003).

    φ_k ~ Dir(β), θ_d ~ Dir(α), and each document has ``doc_length`` tokens with
    word counts c_d ~ Multinomial(doc_length, θ_d φ) (the token-level process
    summed over topics).  Seeded with NumPy PCG64.

    Raises
    ------
    ValueError
        Non-positive sizes or priors; ``seed`` not an integer ≥ 0 (:mod:`same.io.values`).
    """
    seed = check_seed(seed)
    for name, v in (("n_docs", n_docs), ("n_words", n_words), ("n_topics", n_topics),
                    ("doc_length", doc_length), ("doc_topic_prior", doc_topic_prior),
                    ("topic_word_prior", topic_word_prior)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_words, topic_word_prior), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, doc_topic_prior), size=n_docs)
    p = theta @ phi
    p /= p.sum(axis=1, keepdims=True)
    dense = np.stack([rng.multinomial(doc_length, row) for row in p])
    counts = sp.csr_matrix(dense.astype(np.int32))
    counts.eliminate_zeros()
    return SyntheticLDA(counts=counts, topic_word=phi, doc_topic=theta)


#: ``device`` values of :func:`shaped_corpus`.
DEVICES = ("cpu", "cuda")
#: Poisson CDF tables span λ ± (this many standard deviations + 40): the mass left out is
#: below 1e-30, far under the 2^-53 resolution of the uniforms that index them.
_TAIL_SDS = 12.0


def _poisson_table(lam: float) -> tuple[np.ndarray, int]:
    """(CDF table, offset): entry i is P(X ≤ offset + i) for X ~ Poisson(λ), the last 1.0."""
    from scipy.stats import poisson

    if not lam > 0:
        return np.ones(1), 0
    spread = _TAIL_SDS * np.sqrt(lam) + 40.0
    lo, hi = max(0, int(np.floor(lam - spread))), int(np.ceil(lam + spread))
    table = poisson.cdf(np.arange(lo, hi + 1), lam).astype(np.float64)
    table[-1] = 1.0
    return table, lo


def _zipf_table(n_words: int, zipf_exponent: float) -> np.ndarray:
    """Cumulative weights of p(rank r) ∝ r^−s, r = 1..W (word id r − 1), normalised, last 1.0."""
    cdf = np.cumsum(1.0 / np.arange(1, n_words + 1, dtype=np.float64) ** zipf_exponent)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return cdf


def _seed_key(seed) -> np.uint64:
    from .synthetic_kernels import mix64

    return np.uint64(int(mix64(np.uint64(check_seed(seed) % 2**64))))


def _generate_cpu(n_docs, n_words, size_cdf, size_offset, word_cdf, count_cdf, count_offset,
                  key):
    """(indptr, indices, data) of the CPU path: the documents' sizes in parallel, their
    prefix sums, then every document's words and counts in parallel (numba ``prange``)."""
    from .synthetic_kernels import fill_cpu, sizes_cpu

    sizes = sizes_cpu(n_docs, size_cdf, np.int64(size_offset), np.int64(n_words), key)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    del sizes
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    data = np.empty(int(indptr[-1]), dtype=np.int32)
    fill_cpu(indptr, word_cdf, count_cdf, np.int64(count_offset), key, indices, data)
    return indptr, indices, data


def shaped_corpus(n_docs: int, n_words: int, nnz: int, n_tokens: int | None = None,
                  zipf_exponent: float = 1.0, seed: int = 0,
                  device: str = "cpu") -> sp.csr_matrix:
    """A random count matrix with a given shape (D, W, about NNZ nonzeros, about N tokens).

    For timing at paper scale without the real data (e.g. NYTimes: D=300,000,
    W=102,660, NNZ=69,679,427, ~100M tokens).  Each document independently:

    - its number of distinct words k_d ~ Poisson(NNZ/D), clipped to [1, W], so the
      nonzero total is about ``nnz`` (not exactly: the actual figures are in the
      returned matrix);
    - k_d distinct word ids from a Zipf-like law p(rank r) ∝ r^−``zipf_exponent``
      (word id r − 1), by inversion (binary search of the cumulative weights), a word
      already drawn for the document drawn again;
    - each count 1 + Poisson((N − NNZ)/NNZ), so the token total is about ``n_tokens``
      (default 1.43 × NNZ, NYTimes' ratio).

    The draws are counter-based (SplitMix64 of (seed, document, draw index),
    :mod:`same.data.synthetic_kernels`), so the matrix depends on the arguments only: not
    on the number of threads, nor on ``device``.  ``device="cpu"``: numba, parallel over
    documents (``numba.set_num_threads``); ``"cuda"``: the same per-document code as a
    numba-cuda kernel, a thread per document, on CuPy's current device and stream (under
    numba-cuda's simulator, ``NUMBA_ENABLE_CUDASIM=1``, on the host); the result is copied
    to the host.  Either way: sizes, their prefix sums (the row pointers), then every
    document's slice.

    Returns
    -------
    csr_matrix (n_docs, n_words), int32 data and column indices (sorted within each
    row), int32 row pointers (int64 from 2^31 nonzeros).

    Raises
    ------
    ValueError
        Non-positive sizes, nnz > n_docs × n_words, n_tokens < nnz, a seed not an integer ≥ 0 or an
        unknown device.
    """
    for name, v in (("n_docs", n_docs), ("n_words", n_words), ("nnz", nnz)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    if nnz > n_docs * n_words:
        raise ValueError(f"nnz={nnz} exceeds n_docs × n_words = {n_docs * n_words}")
    n_tokens = int(n_tokens or round(1.43 * nnz))
    if n_tokens < nnz:
        raise ValueError(f"n_tokens={n_tokens} must be >= nnz={nnz}")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    n_docs, n_words = int(n_docs), int(n_words)
    key = _seed_key(seed)
    size_cdf, size_offset = _poisson_table(nnz / n_docs)
    count_cdf, count_offset = _poisson_table((n_tokens - nnz) / nnz)
    word_cdf = _zipf_table(n_words, zipf_exponent)
    if device == "cuda":
        from .synthetic_cuda import generate

        indptr, indices, data = generate(n_docs, n_words, size_cdf, size_offset, word_cdf,
                                         count_cdf, count_offset, key)
    else:
        indptr, indices, data = _generate_cpu(n_docs, n_words, size_cdf, size_offset,
                                              word_cdf, count_cdf, count_offset, key)
    if indices.size < 2**31:
        indptr = indptr.astype(np.int32)
    m = sp.csr_matrix((data, indices, indptr), shape=(n_docs, n_words))
    m.has_sorted_indices = True  # by construction (fill_doc keeps each row sorted)
    return m
