"""Held-out split: determinism, token conservation, binomial halves, integrity."""

from __future__ import annotations

import re

import numpy as np
import pytest

from same.data import split as splitmod
from same.data.split import SplitIntegrityError, load_split, make_split
from same.data.synthetic import lda_corpus


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
    from same.data.artefact import save_npz

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


def test_checksum_is_of_what_is_trained_and_scored_only(counts):
    """A count of documents in neither part (``n_dropped_empty``, recorded by a later
    version) leaves the checksum as it was: the runs of a corpus recorded before it was kept
    still name their split."""
    s = make_split(counts, 0.2, seed=1)
    before = s.checksum()
    again = make_split(counts, 0.2, seed=1)
    again.n_dropped_empty = 572
    assert again.checksum() == before


def test_committed_kos_runs_name_the_split_this_code_makes(kos):
    """Every committed KOS run's meta.json records the checksum of the split the split rule
    makes now (config/config.yaml's test fraction and seed): a change to what a split hashes
    that would orphan the committed runs fails here."""
    import json
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    cfg = yaml.safe_load((root / "config/config.yaml").read_text())["split"]
    want = make_split(kos, cfg["test_fraction"], seed=cfg["seed"]).checksum()
    metas = sorted((root / "results/kos").glob("*/K*/seed*/meta.json"))
    assert len(metas) > 50
    recorded = {json.loads(m.read_text())["split"]["sha256"] for m in metas}
    assert recorded == {want}


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

    import same.data.artefact
    from same.data.split import make_split

    X = sp.random(200, 50, density=0.2, format="csr", random_state=0, dtype=np.float64)
    X.data = np.ceil(X.data * 5)
    split = make_split(X, 0.1, seed=3)
    digest = split.save(tmp_path / "s.npz")
    assert not _is_mapped(load_split(tmp_path / "s.npz", mmap=True).train.data)  # small: read
    monkeypatch.setattr(same.data.artefact, "MMAP_MIN_BYTES", 0)
    mapped = load_split(tmp_path / "s.npz", mmap=True)
    read = load_split(tmp_path / "s.npz")
    assert mapped.checksum() == read.checksum() == digest
    assert _is_mapped(mapped.train.indices) and _is_mapped(mapped.train.data)
    assert not _is_mapped(read.train.data)
    assert (mapped.train != read.train).nnz == 0


def test_mmap_falls_back_to_reading_a_compressed_split(tmp_path, monkeypatch):
    import scipy.sparse as sp

    import same.data.artefact
    from same.data.split import make_split

    monkeypatch.setattr(same.data.artefact, "MMAP_MIN_BYTES", 0)
    X = sp.csr_matrix(np.arange(1, 41, dtype=np.int32).reshape(8, 5))
    split = make_split(X, 0.25, seed=0)
    digest = split.save(tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as z:  # compressed members cannot be mapped
        same.data.artefact.save_npz(tmp_path / "old.npz", dict(z), compress=True)
    old = load_split(tmp_path / "old.npz", mmap=True)
    assert old.checksum() == digest and not _is_mapped(old.train.data)


def test_training_from_a_mapped_split_does_not_copy_the_corpus(tmp_path, monkeypatch):
    """SAME trained on a memory-mapped split allocates far less than the training CSR: the
    corpus is read minibatch by minibatch from the file (tracemalloc sees every NumPy
    allocation, not the file-backed pages)."""
    import tracemalloc

    import scipy.sparse as sp

    from same.data.split import make_split
    from same.model.sampler import SameLDA

    rng = np.random.default_rng(0)
    X = sp.random(20_000, 400, density=0.25, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.ceil(X.data * 3)
    make_split(X.astype(np.int32), 0.05, seed=0).save(tmp_path / "s.npz")
    import same.data.artefact

    monkeypatch.setattr(same.data.artefact, "MMAP_MIN_BYTES", 0)  # map it as a paper-scale split
    split = load_split(tmp_path / "s.npz", mmap=True)
    csr_bytes = split.train.data.nbytes + split.train.indices.nbytes + split.train.indptr.nbytes
    model = SameLDA(n_components=4, n_copies=5, max_iter=1, sampler="summed", random_state=0)
    model.fit(split.train[:50])  # compiles the kernels (their allocations are not the corpus)
    tracemalloc.start()
    model.fit(split.train)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert csr_bytes > 15_000_000
    # the model is tiny (K=4, W=400); a minibatch is 1/20 of the corpus and its step's
    # temporaries a few times that: well under half the CSR, where any whole copy would not be
    assert peak < 0.5 * csr_bytes, (peak, csr_bytes)


def test_validation_split_partitions_training_documents_only(counts):
    """Validation documents and the remaining training documents are disjoint, their union is
    exactly the split's training documents, no test document enters, the parent is untouched,
    and the one evaluator scores on it."""
    import dataclasses

    from same.model import evaluate as ev

    s = make_split(counts, 0.2, seed=4)
    before = s.checksum()
    arrays = {m: getattr(s, m).copy() for m in ("train", "test_observed", "test_heldout",
                                                 "train_docs", "test_docs")}
    v = splitmod.validation_split(s, 0.1, seed=0)
    n_train = s.train.shape[0]
    assert len(v.test_docs) == round(0.1 * n_train) and isinstance(v, splitmod.HeldOutSplit)
    assert np.intersect1d(v.train_docs, v.test_docs).size == 0
    assert np.array_equal(np.union1d(v.train_docs, v.test_docs), s.train_docs)
    assert np.intersect1d(np.union1d(v.train_docs, v.test_docs), s.test_docs).size == 0
    assert list(v.train_docs) == sorted(v.train_docs)  # corpus order kept
    assert (v.train != counts[v.train_docs]).nnz == 0
    assert (v.test_full != counts[v.test_docs]).nnz == 0  # halves of the full counts
    for m in (v.train, v.test_observed, v.test_heldout):
        assert m.dtype == np.int32 and m.data.min() >= 1 and m.shape[1] == counts.shape[1]
    # the parent: same arrays, same checksum recomputed from scratch
    assert dataclasses.replace(s).checksum() == before == s.checksum()
    for m, a in arrays.items():
        b = getattr(s, m)
        assert (b != a).nnz == 0 if hasattr(a, "nnz") else np.array_equal(a, b)
    # its own checksum, recording the parent's; provenance is part of it
    assert v.parent_sha256 == before and v.checksum() != before
    plain = splitmod.HeldOutSplit(**{f.name: getattr(v, f.name) for f in dataclasses.fields(v)
                                     if f.init and f.name != "parent_sha256"})
    assert plain.checksum() != v.checksum()
    other_parent = dataclasses.replace(v, parent_sha256="0" * 64)
    assert other_parent.checksum() != v.checksum()
    uniform = np.full((4, counts.shape[1]), 1 / counts.shape[1])
    assert np.isfinite(ev.evaluate(uniform, 0.1, v).ll)


def test_validation_documents_are_halved_as_test_documents_are(counts, monkeypatch):
    s = make_split(counts, 0.1, seed=2)
    v = splitmod.validation_split(s, 0.3, seed=5)
    n, h = int(v.test_full.sum()), int(v.test_heldout.sum())
    assert abs(h - n / 2) <= 4 * np.sqrt(n / 4)  # Binomial(N, 1/2): p ≈ 6e-5 to fail
    ones = v.test_full.multiply(v.test_full == 1)
    assert ones.multiply(v.test_observed).multiply(v.test_heldout).nnz == 0
    calls = []
    halve = splitmod._halve
    monkeypatch.setattr(splitmod, "_halve", lambda docs, rng: calls.append(docs.shape) or
                        halve(docs, rng))
    make_split(counts, 0.1, seed=2)
    splitmod.validation_split(s, 0.3, seed=5)
    assert calls == [(40, counts.shape[1]), (108, counts.shape[1])]  # one halving for both


def test_validation_split_deterministic_per_seed(counts):
    s = make_split(counts, 0.2, seed=4)
    a, b = splitmod.validation_split(s, 0.25, seed=3), splitmod.validation_split(s, 0.25, seed=3)
    assert a.checksum() == b.checksum() and np.array_equal(a.test_docs, b.test_docs)
    c = splitmod.validation_split(s, 0.25, seed=4)
    assert c.checksum() != a.checksum() and not np.array_equal(c.test_docs, a.test_docs)
    default = splitmod.validation_split(s, 0.25)  # the split's own seed
    assert default.seed == s.seed and default.checksum() == c.checksum()
    again = splitmod.validation_split(make_split(counts, 0.2, seed=4), 0.25, seed=3)
    assert again.checksum() == a.checksum()


@pytest.mark.parametrize("frac", [0, 1, -0.1, 1.5, "0.1", True, None])
def test_validation_split_bad_fraction(counts, frac):
    s = make_split(counts, 0.2, seed=4)
    with pytest.raises(ValueError, match=re.escape(
            f"validation_fraction must be in (0, 1), got {frac!r}")):
        splitmod.validation_split(s, frac)


def test_validation_split_bad_seed_sizes_and_save(counts, tmp_path):
    import scipy.sparse as sp

    s = make_split(counts, 0.2, seed=4)
    for bad in (-1, True, 1.5, "0"):
        with pytest.raises(ValueError, match=re.escape(
                f"validation_seed must be a non-negative integer, got {bad!r}")):
            splitmod.validation_split(s, 0.1, seed=bad)
    one_train = make_split(sp.csr_matrix(np.array([[1, 2], [3, 0]])), 0.5, seed=0)
    with pytest.raises(ValueError, match=re.escape(
            "need at least 2 training documents to carve validation documents, got 1")):
        splitmod.validation_split(one_train, 0.5)
    n_train = s.train.shape[0]
    assert len(splitmod.validation_split(s, 1e-6).test_docs) == 1  # at least one each side
    assert len(splitmod.validation_split(s, 0.9999).train_docs) == 1
    assert n_train > 2
    with pytest.raises(TypeError, match="a validation split is not saved"):
        splitmod.validation_split(s, 0.1).save(tmp_path / "v.npz")
    assert not (tmp_path / "v.npz").exists()


@pytest.mark.parametrize("call, message", [
    (lambda c: make_split(c, 0.2, seed=True), "seed must be a non-negative integer, got True"),
    (lambda c: make_split(c, 0.2, seed=1.5), "seed must be a non-negative integer, got 1.5"),
    (lambda c: make_split(c, 0.2, seed=-1), "seed must be a non-negative integer, got -1"),
    (lambda c: make_split(c, True), "test_fraction must be in (0, 1), got True"),
    (lambda c: make_split(c, float("nan")), "test_fraction must be in (0, 1), got nan"),
    (lambda c: splitmod.train_subset(make_split(c, 0.2), True),
     "train_fraction must be in (0, 1], got True"),
])
def test_seeds_and_fractions_have_one_check_across_the_split_functions(counts, call, message):
    """make_split took seed=True as seed 1 and passed 1.5 and -1 to numpy (a TypeError, a
    message naming nothing); every seed and fraction goes through same.io.values."""
    with pytest.raises(ValueError) as e:
        call(counts)
    assert str(e.value) == message


def test_a_numpy_fraction_or_seed_is_a_number_for_every_split_function(counts):
    """np.float32(0.1) was refused by make_split while validation_split accepted it."""
    s = make_split(counts, np.float32(0.2), seed=np.int64(3))
    assert s.seed == 3 and s.test_fraction == float(np.float32(0.2))
    assert splitmod.train_subset(s, np.float32(0.5)).train.shape[0] > 0
    assert splitmod.validation_split(s, np.float32(0.25), seed=np.uint8(2)).seed == 2
