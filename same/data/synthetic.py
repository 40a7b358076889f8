"""Synthetic corpora: the LDA generative process (for correctness tests) and
corpora of a given shape (for timing at paper scale without the real data)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

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
        Non-positive sizes or priors.
    """
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


def _doc_sizes(rng, n_docs: int, n_words: int, nnz: int) -> np.ndarray:
    """Distinct words per document: Poisson around NNZ/D, in 1..W, summing to ``nnz``."""
    per_doc = rng.poisson(nnz / n_docs, size=n_docs).astype(np.int64)
    per_doc = np.clip(per_doc, 1, n_words)
    # adjust so the total is nnz (spread the difference over random documents)
    diff = nnz - int(per_doc.sum())
    while diff != 0:
        idx = rng.integers(0, n_docs, size=abs(diff))
        if diff > 0:
            np.add.at(per_doc, idx, 1)
        else:
            np.subtract.at(per_doc, idx, 1)
        per_doc = np.clip(per_doc, 1, n_words)
        diff = nnz - int(per_doc.sum())
    return per_doc


def _distinct_words(rng, per_doc: np.ndarray, n_words: int, cdf: np.ndarray) -> list:
    """Sorted (doc × W + word) keys of ``per_doc[d]`` distinct Zipf-drawn words per document."""
    n_docs = per_doc.shape[0]
    # Draw each document's words with replacement (oversampled), merge duplicates, keep a
    # random subset of the distinct words of the wanted size; documents with too few distinct
    # words are drawn again with more oversampling.
    is_pending = np.ones(n_docs, dtype=bool)
    chosen = []
    factor = 1.5
    while is_pending.any():
        pending = np.flatnonzero(is_pending)
        draws = np.ceil(per_doc[pending] * factor).astype(np.int64)
        docs = np.repeat(pending, draws)
        words = np.minimum(np.searchsorted(cdf, rng.random(docs.size), side="right"),
                           n_words - 1)
        uniq = np.unique(docs * n_words + words)
        del docs, words
        udoc = uniq // n_words
        have = np.bincount(udoc, minlength=n_docs)
        done = is_pending & (have >= per_doc)
        keep = done[udoc]
        uniq, udoc = uniq[keep], udoc[keep]
        order = np.lexsort((rng.random(uniq.size), udoc))  # random order within each document
        uniq, udoc = uniq[order], udoc[order]
        starts = np.searchsorted(udoc, udoc, side="left")
        rank = np.arange(uniq.size) - starts
        chosen.append(uniq[rank < per_doc[udoc]])
        is_pending &= ~done
        factor *= 1.5
    return chosen


def shaped_corpus(n_docs: int, n_words: int, nnz: int, n_tokens: int | None = None,
                  zipf_exponent: float = 1.0, seed: int = 0) -> sp.csr_matrix:
    """A random count matrix with a given shape (D, W, about NNZ nonzeros, about N tokens).

    For timing at paper scale without the real data (e.g. NYTimes: D=300,000,
    W=102,660, NNZ=69,679,427, ~100M tokens).  Word ids follow a Zipf-like law
    p(rank r) ∝ r^−``zipf_exponent``; nonzeros per document vary (Poisson
    around NNZ/D); counts are 1 + Poisson extra so that the token total is
    about ``n_tokens`` (default 1.43 × NNZ, NYTimes' ratio).  Duplicate
    (doc, word) draws are merged, so the nonzero count can fall slightly
    short of ``nnz``; the actual figures are in the returned matrix.

    Returns
    -------
    csr_matrix (n_docs, n_words), int32, sorted indices.

    Raises
    ------
    ValueError
        Non-positive sizes, or nnz > n_docs × n_words.
    """
    for name, v in (("n_docs", n_docs), ("n_words", n_words), ("nnz", nnz)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    if nnz > n_docs * n_words:
        raise ValueError(f"nnz={nnz} exceeds n_docs × n_words = {n_docs * n_words}")
    n_tokens = int(n_tokens or round(1.43 * nnz))
    if n_tokens < nnz:
        raise ValueError(f"n_tokens={n_tokens} must be >= nnz={nnz}")
    rng = np.random.default_rng(seed)
    per_doc = _doc_sizes(rng, n_docs, n_words, nnz)
    cdf = np.cumsum(1.0 / np.arange(1, n_words + 1) ** zipf_exponent)
    cdf /= cdf[-1]
    chosen = _distinct_words(rng, per_doc, n_words, cdf)
    key = np.sort(np.concatenate(chosen))
    del chosen
    rows, cols = np.divmod(key, n_words)
    del key
    counts = 1 + rng.poisson((n_tokens - nnz) / nnz, size=rows.size)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_docs), out=indptr[1:])
    idx_dtype = np.int32 if rows.size < 2**31 else np.int64
    return sp.csr_matrix((counts.astype(np.int32), cols.astype(np.int32),
                          indptr.astype(idx_dtype)), shape=(n_docs, n_words))
