"""Synthetic corpora: the LDA generative process (for correctness tests) and
corpora of a given shape (for timing at paper scale without the real data)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["SyntheticLDA", "lda_corpus"]


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
