"""Held-out split: determinism, token conservation, binomial halves, integrity."""

from __future__ import annotations

import numpy as np
import pytest

from same import split as splitmod
from same.split import SplitIntegrityError, load_split, make_split
from same.synthetic import lda_corpus


@pytest.fixture(scope="module")
def counts():
    return lda_corpus(n_docs=400, n_words=150, n_topics=4, doc_length=60, seed=3).counts


def test_deterministic_and_seeded(counts):
    a, b = make_split(counts, 0.2, seed=7), make_split(counts, 0.2, seed=7)
    assert a.checksum() == b.checksum()
    c = make_split(counts, 0.2, seed=8)
    assert c.checksum() != a.checksum()


def test_partition_and_token_conservation(counts):
    s = make_split(counts, 0.25, seed=1)
    n_docs = counts.shape[0]
    assert len(s.test_docs) == round(0.25 * n_docs)
    assert np.intersect1d(s.train_docs, s.test_docs).size == 0
    assert np.union1d(s.train_docs, s.test_docs).size == n_docs
    assert (s.train != counts[s.train_docs]).nnz == 0
    assert (s.test_full != counts[s.test_docs]).nnz == 0
    for m in (s.train, s.test_observed, s.test_heldout):
        assert m.data.min() >= 1  # explicit zeros removed
        assert m.dtype == np.int32


def test_halves_are_binomial(counts):
    """Held-out tokens ~ Binomial(N, 1/2): within 4 standard deviations (p ≈ 6e-5 to fail)."""
    s = make_split(counts, 0.3, seed=2)
    n = int(s.test_full.sum())
    h = int(s.test_heldout.sum())
    assert abs(h - n / 2) <= 4 * np.sqrt(n / 4)
    # a count of 1 goes to exactly one half
    ones = s.test_full.multiply(s.test_full == 1)
    both = ones.multiply(s.test_observed).multiply(s.test_heldout)
    assert both.nnz == 0


def test_save_load_roundtrip(tmp_path, counts):
    s = make_split(counts, 0.1, seed=4)
    path = tmp_path / "split.npz"
    digest = s.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["split.npz"]
    t = load_split(path)
    assert t.checksum() == digest
    assert (t.test_heldout != s.test_heldout).nnz == 0


def test_tampered_split_is_rejected(tmp_path, counts):
    s = make_split(counts, 0.1, seed=4)
    path = tmp_path / "split.npz"
    s.save(path)
    from same.artefact import save_npz

    with np.load(path) as z:
        arrays = dict(z)
    arrays["test_heldout_data"] = arrays["test_heldout_data"].copy()
    arrays["test_heldout_data"][0] += 1
    save_npz(path, arrays)  # edited, then sealed again: the content checksum still objects
    with pytest.raises(SplitIntegrityError, match=r"split\.npz: content does not match its "
                                                  r"checksum [0-9a-f]{64}; rerun `same-lda split`"):
        load_split(path)
    np.savez_compressed(path, **arrays)  # written by another program: no seal
    with pytest.raises(SplitIntegrityError, match=r"split\.npz: not a sealed split file"):
        load_split(path)
    path.write_bytes(b"not a zip")
    with pytest.raises(SplitIntegrityError, match=r"split\.npz: not a sealed split file"):
        load_split(path)
    with pytest.raises(FileNotFoundError, match=r"nope\.npz: no such split file"):
        load_split(tmp_path / "nope.npz")


@pytest.mark.parametrize("frac", [0, 1, -0.5, 1.5, "0.1"])
def test_bad_fraction(counts, frac):
    with pytest.raises(ValueError, match=r"test_fraction must be in \(0, 1\)"):
        make_split(counts, frac)


def test_bad_counts():
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="non-negative integers"):
        make_split(sp.csr_matrix(np.array([[1.5, 0], [0, 1]])), 0.5)
    with pytest.raises(ValueError, match="at least 2 documents"):
        make_split(sp.csr_matrix(np.array([[1, 2]])), 0.5)


def test_kos_split(kos):
    s = make_split(kos, 0.1, seed=0)
    assert s.train.shape == (3087, 6906)
    assert s.test_observed.shape == (343, 6906)
    assert int(s.train.sum() + s.test_full.sum()) == 467714
    assert s.vocab_sha256 == kos.vocab_checksum()
    assert splitmod.HeldOutSplit is type(s)


def test_train_subset_nested_seeded_and_test_untouched(counts):
    s = make_split(counts, 0.2, seed=4)
    quarter, half = splitmod.train_subset(s, 0.25), splitmod.train_subset(s, 0.5)
    n = s.train.shape[0]
    assert quarter.train.shape[0] == -(-n // 4) and half.train.shape[0] == -(-n // 2)
    assert set(quarter.train_docs) < set(half.train_docs) < set(s.train_docs)  # nested
    assert list(half.train_docs) == sorted(half.train_docs)  # corpus order kept
    rows = np.searchsorted(s.train_docs, half.train_docs)
    assert (half.train != s.train[rows]).nnz == 0  # the same documents' counts
    for m in ("test_observed", "test_heldout"):
        assert getattr(half, m) is getattr(s, m)
    assert splitmod.train_subset(s, 1.0) is s
    again = splitmod.train_subset(make_split(counts, 0.2, seed=4), 0.5)
    assert np.array_equal(again.train_docs, half.train_docs)
    other = splitmod.train_subset(make_split(counts, 0.2, seed=5), 0.5)
    assert not np.array_equal(np.sort(other.train_docs), half.train_docs)


@pytest.mark.parametrize("frac", [0, -0.1, 1.01, True])
def test_train_subset_bad_fraction(counts, frac):
    s = make_split(counts, 0.2, seed=4)
    with pytest.raises(ValueError, match=r"train_fraction must be in \(0, 1\], got "):
        splitmod.train_subset(s, frac)


def _is_mapped(a) -> bool:
    """True when ``a``'s memory is a file mapping (a memmap, or a view of one)."""
    import mmap

    while isinstance(a, np.ndarray):
        if isinstance(a, np.memmap):
            return True
        a = a.base
    return isinstance(a, mmap.mmap)


def test_mmap_load_equals_read_and_maps_the_arrays(tmp_path, monkeypatch):
    """A split of at least MMAP_MIN_BYTES is mapped when mmap=True; a smaller one is read
    (an outside in-place change cannot then pull pages from under a fit)."""
    import scipy.sparse as sp

    import same.artefact
    from same.split import make_split

    X = sp.random(200, 50, density=0.2, format="csr", random_state=0, dtype=np.float64)
    X.data = np.ceil(X.data * 5)
    split = make_split(X, 0.1, seed=3)
    digest = split.save(tmp_path / "s.npz")
    assert not _is_mapped(load_split(tmp_path / "s.npz", mmap=True).train.data)  # small: read
    monkeypatch.setattr(same.artefact, "MMAP_MIN_BYTES", 0)
    mapped = load_split(tmp_path / "s.npz", mmap=True)
    read = load_split(tmp_path / "s.npz")
    assert mapped.checksum() == read.checksum() == digest
    assert _is_mapped(mapped.train.indices) and _is_mapped(mapped.train.data)
    assert not _is_mapped(read.train.data)
    assert (mapped.train != read.train).nnz == 0


def test_mmap_falls_back_to_reading_a_compressed_split(tmp_path, monkeypatch):
    import scipy.sparse as sp

    import same.artefact
    from same.split import make_split

    monkeypatch.setattr(same.artefact, "MMAP_MIN_BYTES", 0)
    X = sp.csr_matrix(np.arange(1, 41, dtype=np.int32).reshape(8, 5))
    split = make_split(X, 0.25, seed=0)
    digest = split.save(tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as z:  # compressed members cannot be mapped
        same.artefact.save_npz(tmp_path / "old.npz", dict(z), compress=True)
    old = load_split(tmp_path / "old.npz", mmap=True)
    assert old.checksum() == digest and not _is_mapped(old.train.data)


def test_training_from_a_mapped_split_does_not_copy_the_corpus(tmp_path, monkeypatch):
    """SAME trained on a memory-mapped split allocates far less than the training CSR: the
    corpus is read minibatch by minibatch from the file (tracemalloc sees every NumPy
    allocation, not the file-backed pages)."""
    import tracemalloc

    import scipy.sparse as sp

    from same.sampler import SameLDA
    from same.split import make_split

    rng = np.random.default_rng(0)
    X = sp.random(20_000, 400, density=0.25, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.ceil(X.data * 3)
    make_split(X.astype(np.int32), 0.05, seed=0).save(tmp_path / "s.npz")
    import same.artefact

    monkeypatch.setattr(same.artefact, "MMAP_MIN_BYTES", 0)  # map it as a paper-scale split
    split = load_split(tmp_path / "s.npz", mmap=True)
    csr_bytes = split.train.data.nbytes + split.train.indices.nbytes + split.train.indptr.nbytes
    model = SameLDA(n_topics=4, n_samples=5, max_iter=1, sampler="summed", random_state=0)
    model.fit(split.train[:50])  # compiles the kernels (their allocations are not the corpus)
    tracemalloc.start()
    model.fit(split.train)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert csr_bytes > 15_000_000
    # the model is tiny (K=4, W=400); a minibatch is 1/20 of the corpus and its step's
    # temporaries a few times that: well under half the CSR, where any whole copy would not be
    assert peak < 0.5 * csr_bytes, (peak, csr_bytes)
