"""Synthetic corpora: the LDA generative process and paper-shaped timing corpora."""

import numpy as np
import pytest

from same.data.synthetic import lda_corpus, shaped_corpus


def test_lda_corpus_shapes_and_lengths():
    syn = lda_corpus(n_docs=50, n_words=30, n_topics=4, doc_length=40, seed=1)
    assert syn.counts.shape == (50, 30)
    np.testing.assert_array_equal(np.asarray(syn.counts.sum(axis=1)).ravel(), 40)
    np.testing.assert_allclose(syn.topic_word.sum(axis=1), 1)
    np.testing.assert_allclose(syn.doc_topic.sum(axis=1), 1)


def test_shaped_corpus_has_the_requested_shape():
    m = shaped_corpus(2000, 5000, 150_000, n_tokens=220_000, seed=3)
    assert m.shape == (2000, 5000)
    assert m.nnz == 150_000
    assert m.has_sorted_indices and m.data.min() >= 1
    # no duplicate (doc, word) pairs: strictly increasing indices within each row
    steps = np.diff(m.indices)
    row_starts = m.indptr[1:-1]
    inside = np.ones(steps.size, dtype=bool)
    inside[row_starts[row_starts > 0] - 1] = False
    assert np.all(steps[inside] > 0)
    # token total within 5 standard deviations of the target (Poisson extras)
    extra = 220_000 - 150_000
    assert abs(m.sum() - 220_000) < 5 * np.sqrt(extra)
    # Zipf-like: the 10 most frequent word ids are far more common than the median word
    df = np.bincount(m.indices, minlength=5000)
    assert df[:10].mean() > 20 * np.median(df)


def test_shaped_corpus_rejects_impossible_shapes():
    with pytest.raises(ValueError, match=r"nnz=100 exceeds n_docs × n_words = 50"):
        shaped_corpus(5, 10, 100)
    with pytest.raises(ValueError, match=r"n_tokens=10 must be >= nnz=20"):
        shaped_corpus(5, 10, 20, n_tokens=10)
    with pytest.raises(ValueError, match=r"lda_corpus|n_docs must be > 0"):
        lda_corpus(n_docs=0)
