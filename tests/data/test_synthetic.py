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


def _rows_strictly_increasing(m) -> bool:
    """Column indices strictly increase within every row (sorted, no duplicate (doc, word))."""
    steps = np.diff(m.indices.astype(np.int64))
    inside = np.ones(steps.size, dtype=bool)
    starts = m.indptr[1:-1]
    inside[starts[(starts > 0) & (starts <= steps.size)] - 1] = False
    return bool(np.all(steps[inside] > 0))


def _same_matrix(a, b) -> bool:
    return (a.shape == b.shape and all(np.array_equal(getattr(a, f), getattr(b, f))
                                       for f in ("indptr", "indices", "data")))


def test_shaped_corpus_has_the_requested_shape():
    # 75 nonzeros per document on average, tokens/nonzeros = 1.47
    m = shaped_corpus(2000, 5000, 150_000, n_tokens=220_000, seed=3)
    assert m.shape == (2000, 5000)
    assert (m.indptr.dtype, m.indices.dtype, m.data.dtype) == (np.int32,) * 3
    assert m.data.min() >= 1
    assert _rows_strictly_increasing(m)
    assert m.has_sorted_indices
    sizes = np.diff(m.indptr)
    assert sizes.min() >= 1 and sizes.max() <= 5000
    # nnz is a sum of 2000 independent Poisson(75) sizes (clipping at 1 has probability e^-75):
    # variance 150,000; 5 standard deviations
    assert abs(m.nnz - 150_000) < 5 * np.sqrt(150_000)
    # given nnz, the extra tokens are a sum of nnz Poisson(λ) draws, λ = 70,000/150,000
    lam = 70_000 / 150_000
    extra = m.sum() - m.nnz
    assert abs(extra - lam * m.nnz) < 5 * np.sqrt(lam * m.nnz)
    # counts: P(count = 1) = e^-λ; binomial standard deviation over nnz counts
    p1 = np.exp(-lam)
    assert abs(np.mean(m.data == 1) - p1) < 5 * np.sqrt(p1 * (1 - p1) / m.nnz)
    # Zipf-like: the 10 most frequent word ids are far more common than the median word
    df = np.bincount(m.indices, minlength=5000)
    assert df[:10].mean() > 20 * np.median(df)


def test_shaped_corpus_document_sizes_are_clipped_poisson():
    from scipy.stats import poisson

    # λ = 0.5: sizes max(X, 1), mean λ + P(X = 0)
    sizes = np.diff(shaped_corpus(20_000, 50, 10_000, seed=1).indptr)
    assert sizes.min() == 1
    x = np.arange(200)
    pmf = poisson.pmf(x, 0.5)
    mean, var = _moments(np.maximum(x, 1), pmf)
    assert abs(sizes.mean() - mean) < 5 * np.sqrt(var / sizes.size)
    # λ = 4 with W = 5: sizes min(max(X, 1), 5)
    sizes = np.diff(shaped_corpus(20_000, 5, 80_000, seed=2).indptr)
    assert sizes.max() == 5
    mean, var = _moments(np.clip(x, 1, 5), poisson.pmf(x, 4.0))
    assert abs(sizes.mean() - mean) < 5 * np.sqrt(var / sizes.size)
    # a document of W nonzeros holds every word once
    m = shaped_corpus(50, 7, 350, seed=0)
    full = np.diff(m.indptr) == 7
    assert full.sum() > 10
    np.testing.assert_array_equal(m[full].toarray() > 0, True)


def _moments(values, pmf):
    mean = float(np.sum(values * pmf))
    return mean, float(np.sum((values - mean) ** 2 * pmf))


def test_shaped_corpus_words_follow_zipf_without_replacement():
    """Document frequencies of the head words match NumPy's weighted sampling without
    replacement (``Generator.choice(replace=False, p=...)``: successive draws, duplicates
    drawn again: the same law) for the same document sizes."""
    n_docs, n_words, s = 3000, 2000, 1.1
    m = shaped_corpus(n_docs, n_words, 60_000, zipf_exponent=s, seed=7)
    assert _rows_strictly_increasing(m)
    p = 1.0 / np.arange(1, n_words + 1) ** s
    p /= p.sum()
    rng = np.random.default_rng(0)
    ref = np.zeros(n_words)
    for k in np.diff(m.indptr):
        ref[rng.choice(n_words, size=k, replace=False, p=p)] += 1
    df = np.bincount(m.indices, minlength=n_words)
    # two independent sums of n_docs Bernoulli draws per word: the difference has standard
    # deviation at most sqrt(2 · n_docs · q(1 − q)) (q the pooled frequency); 5 of them
    for r in (0, 1, 2, 5, 10, 50, 200, 1000):
        q = (df[r] + ref[r]) / (2 * n_docs)
        sd = max(np.sqrt(2 * n_docs * q * (1 - q)), 1.0)
        assert abs(df[r] - ref[r]) < 5 * sd, (r, df[r], ref[r])
    # the head is more frequent than the tail
    assert df[0] > df[10] > df[1000]


def test_shaped_corpus_is_the_same_for_any_thread_count():
    import numba

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = shaped_corpus(3000, 4000, 120_000, seed=11)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = shaped_corpus(3000, 4000, 120_000, seed=11)
    finally:
        numba.set_num_threads(before)
    assert _same_matrix(one, many)
    assert not _same_matrix(one, shaped_corpus(3000, 4000, 120_000, seed=12))


def test_shaped_corpus_rejects_impossible_shapes():
    with pytest.raises(ValueError, match=r"nnz=100 exceeds n_docs × n_words = 50"):
        shaped_corpus(5, 10, 100)
    with pytest.raises(ValueError, match=r"n_tokens=10 must be >= nnz=20"):
        shaped_corpus(5, 10, 20, n_tokens=10)
    with pytest.raises(ValueError, match=r"nnz must be > 0, got 0"):
        shaped_corpus(5, 10, 0)
    with pytest.raises(ValueError, match=r"device must be one of \('cpu', 'cuda'\), got 'tpu'"):
        shaped_corpus(5, 10, 20, device="tpu")
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer, got 1.5"):
        shaped_corpus(5, 10, 20, seed=1.5)
    with pytest.raises(ValueError, match=r"lda_corpus|n_docs must be > 0"):
        lda_corpus(n_docs=0)
