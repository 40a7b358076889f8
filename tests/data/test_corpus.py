"""Corpus layer: real UCI data from the mirror, and bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from same.data import corpus
from same.data.corpus import CacheWarning, CorpusFormatError, CorpusNotFoundError
from same.data.newsgroups import newsgroups_folders

# ----------------------------------------------------------------------------- helpers

def write_docword(path: Path, header, lines, gz=True) -> Path:
    text = "".join(f"{h}\n" for h in header) + "".join(f"{ln}\n" for ln in lines)
    if gz:
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


def write_vocab(path: Path, n: int) -> Path:
    path.write_text("".join(f"w{i}\n" for i in range(n)))
    return path


GOOD = ["1 1 2", "1 3 1", "2 2 4", "3 1 1", "3 4 7"]  # D=3, W=4, NNZ=5


def leftovers(d: Path) -> list[str]:
    """Files in the cache dir: parsed caches (.npz) or temporaries."""
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def load_bad(tmp_path, cache_path, header, lines, vocab_n=4, **kw):
    dw = write_docword(tmp_path / "docword.toy.txt.gz", header, lines)
    vo = write_vocab(tmp_path / "vocab.toy.txt", vocab_n)
    return corpus.load("toy", docword=dw, vocab=vo, **kw)


# ----------------------------------------------------------------------------- real data

def test_kos_from_mirror(kos):
    assert kos.counts.shape == (3430, 6906)
    assert kos.nnz == 353160
    assert kos.n_tokens == 467714
    assert len(kos.vocab) == 6906
    assert kos.counts.dtype == np.int32
    assert kos.counts.has_sorted_indices
    assert kos.counts.data.min() >= 1


def test_kos_matches_raw_file(kos, uci_dir):
    """Spot check against the raw text: first entries and the row sums."""
    with gzip.open(uci_dir / "docword.kos.txt.gz", "rt") as f:
        lines = [f.readline() for _ in range(6)][3:]
    for ln in lines:
        d, w, c = map(int, ln.split())
        assert kos.counts[d - 1, w - 1] == c
    assert np.asarray(kos.counts.sum(axis=1)).sum() == 467714


def test_second_load_reads_the_cache(uci_dir, monkeypatch, cache_path):
    monkeypatch.setenv("SAME_DATA_DIR", str(uci_dir))
    first = corpus.load("kos", download=False)
    assert (cache_path / "docword.kos.npz").is_file()

    def no_parse(*a, **k):
        raise AssertionError("parsed again although the cache is valid")

    monkeypatch.setattr(corpus, "read_docword", no_parse)
    second = corpus.load("kos", download=False)
    assert (second.counts != first.counts).nnz == 0
    # the mirror is read-only: nothing was written beside the source
    assert not list(uci_dir.glob("*.npz"))


def test_nytimes_excerpt_header_body_mismatch(uci_dir, cache_path):
    path = uci_dir / "docword.nytimes.first10docs.txt.gz"
    with pytest.raises(CorpusFormatError, match=r"header says NNZ=69679427 but the body has 2264"):
        corpus.load("nytimes", docword=path, vocab=uci_dir / "vocab.nytimes.txt")
    assert leftovers(cache_path) == []
    c = corpus.load("nytimes", docword=path, vocab=uci_dir / "vocab.nytimes.txt",
                    allow_recount=True)
    assert c.counts.shape == (10, 102660)
    assert c.nnz == 2264
    assert len(c.vocab) == 102660


@pytest.mark.parametrize("name", ["kos", "nips", "enron", "nytimes", "pubmed"])
def test_every_vocab_in_mirror(uci_dir, name, monkeypatch):
    monkeypatch.setenv("SAME_DATA_DIR", str(uci_dir))
    path = corpus.fetch(name, "vocab", download=False)  # also verifies the SHA-256
    words = corpus.read_vocab(path, corpus.REGISTRY[name].n_words)
    assert len(words) == corpus.REGISTRY[name].n_words
    assert all(words[:100])


# ----------------------------------------------------------------------------- good toy input

def test_toy_parse_and_unsorted_input(tmp_path, cache_path):
    c = load_bad(tmp_path, cache_path, [3, 4, 5], GOOD)
    dense = np.array([[2, 0, 1, 0], [0, 4, 0, 0], [1, 0, 0, 7]])
    np.testing.assert_array_equal(c.counts.toarray(), dense)
    # the same entries shuffled give the same matrix (UCI files are sorted, others may not be)
    shuffled = [GOOD[i] for i in (4, 2, 0, 3, 1)]
    c2 = corpus.load("toy2", docword=write_docword(tmp_path / "docword.toy2.txt.gz", [3, 4, 5],
                                                   shuffled), use_cache=False)
    np.testing.assert_array_equal(c2.counts.toarray(), dense)
    assert c2.counts.has_sorted_indices


def test_plain_text_docword(tmp_path):
    p = write_docword(tmp_path / "docword.toy.txt", [3, 4, 5], GOOD, gz=False)
    assert corpus.read_docword(p).nnz == 5


# ----------------------------------------------------------------------------- bad input

BAD_CASES = {
    # id: (header, body lines, expected message regex)
    "extra_field": ([3, 4, 5], GOOD[:2] + ["2 2 4 9"] + GOOD[3:], r"line 6: expected 'docID wordID count'"),
    "missing_field": ([3, 4, 5], GOOD[:3] + ["3 1"] + GOOD[4:], r"line 7: expected 'docID wordID count'"),
    "not_a_number": ([3, 4, 5], GOOD[:1] + ["1 x 1"] + GOOD[2:], r"line 5: expected 'docID wordID count'"),
    "header_nnz_lies": ([3, 4, 9], GOOD, r"header says NNZ=9 but the body has 5"),
    "header_not_integer": ([3, "four", 5], GOOD, r"line 2: header must hold W"),
    "header_zero": ([0, 4, 5], GOOD, r"line 1: D \(number of documents\) must be > 0"),
    "doc_out_of_range": ([2, 4, 5], GOOD, r"line 7: docID 3 out of range 1..2"),
    "doc_zero": ([3, 4, 5], ["0 1 1"] + GOOD[1:], r"line 4: docID 0 out of range"),
    "word_out_of_range": ([3, 4, 5], GOOD[:4] + ["3 5 7"], r"line 8: wordID 5 out of range 1..4"),
    "zero_count": ([3, 4, 5], GOOD[:2] + ["2 2 0"] + GOOD[3:], r"line 6: count 0 must be >= 1"),
    "negative_count": ([3, 4, 5], GOOD[:2] + ["2 2 -3"] + GOOD[3:], r"line 6: count -3 must be >= 1"),
    "duplicate_sorted": ([3, 4, 5], GOOD[:2] + ["1 3 5"] + GOOD[3:], r"line 6: duplicate entry for docID 1, wordID 3"),
    "duplicate_unsorted": ([3, 4, 5], GOOD[:4] + ["1 1 3"], r"line 8: duplicate entry for docID 1, wordID 1"),
    "empty_body": ([3, 4, 5], [], r"header says NNZ=5 but the body has 0"),
    "short_header": ([3, 4], [], r"line 3: header must hold NNZ"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_docword(tmp_path, cache_path, case):
    header, lines, pattern = BAD_CASES[case]
    with pytest.raises(CorpusFormatError, match=pattern) as err:
        load_bad(tmp_path, cache_path, header, lines)
    assert "docword.toy.txt.gz" in str(err.value)  # names the file
    assert leftovers(cache_path) == []


def test_truncated_gzip(tmp_path, cache_path):
    lines = [f"{d} {w} {1 + (d * w) % 5}" for d in range(1, 400) for w in range(1, 50)]
    full = write_docword(tmp_path / "full.txt.gz", [399, 49, len(lines)], lines)
    raw = full.read_bytes()
    cut = tmp_path / "docword.toy.txt.gz"
    cut.write_bytes(raw[: len(raw) * 2 // 3])
    with pytest.raises(CorpusFormatError, match=r"docword\.toy\.txt\.gz.*(truncated|corrupt|gzip)"):
        corpus.load("toy", docword=cut, vocab=write_vocab(tmp_path / "v.txt", 49))
    assert leftovers(cache_path) == []


def test_vocab_length_mismatch(tmp_path, cache_path):
    with pytest.raises(CorpusFormatError, match=r"vocab\.toy\.txt: vocabulary has 3 lines but the "
                                                r"docword header says W=4"):
        load_bad(tmp_path, cache_path, [3, 4, 5], GOOD, vocab_n=3, use_cache=False)
    assert leftovers(cache_path) == []


def test_vocab_not_utf8(tmp_path):
    p = tmp_path / "vocab.bad.txt"
    p.write_bytes(b"alpha\nbeta\n\xff\xfe\n")
    with pytest.raises(CorpusFormatError, match=r"vocab\.bad\.txt, line 3: not valid UTF-8"):
        corpus.read_vocab(p)


def test_vocab_word_with_a_unicode_line_separator_keeps_its_id(tmp_path):
    """Item 14: a word holding U+2028 or a form feed shifted every later word (lines were split
    on Unicode line boundaries).  Lines end at newline only; CRLF files still read."""
    p = tmp_path / "vocab.odd.txt"
    p.write_bytes("alpha\nbe\u2028ta\ngam\x0cma\ndelta\r\nomega\n".encode())
    assert corpus.read_vocab(p, 5) == ["alpha", "be\u2028ta", "gam\x0cma", "delta", "omega"]
    p.write_bytes(b"alpha\nbeta")  # no final newline
    assert corpus.read_vocab(p, 2) == ["alpha", "beta"]


def test_missing_file_offline(tmp_path, monkeypatch, cache_path):
    monkeypatch.setenv("SAME_DATA_DIR", str(tmp_path))  # empty directory
    with pytest.raises(CorpusNotFoundError) as err:
        corpus.load("nips", download=False)
    msg = str(err.value)
    assert "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/docword.nips.txt.gz" in msg
    assert str(cache_path) in msg
    assert leftovers(cache_path) == []


def test_a_data_dir_that_is_no_directory_is_named_not_skipped(tmp_path, monkeypatch,
                                                              cache_path, uci_dir):
    """``--data-dir`` mistyped was skipped without a word: the corpus came from
    $SAME_DATA_DIR or the cache (or a download was tried), never from where the user said."""
    monkeypatch.setenv("SAME_DATA_DIR", str(uci_dir))  # the corpus is there
    missing, a_file = tmp_path / "no_such_dir", tmp_path / "file.txt"
    a_file.write_text("x")
    for given, why in ((missing, "does not exist"), (a_file, "is not a directory")):
        for load in (lambda d: corpus.load("kos", d, download=False),
                     lambda d: newsgroups_folders(d, download=False)):
            with pytest.raises(CorpusNotFoundError) as err:
                load(given)
            assert str(err.value) == f"{given}: the data directory (data_dir, --data-dir) {why}"
    assert leftovers(cache_path) == []  # nothing fetched, parsed or cached for a refusal
    assert corpus.load("kos", uci_dir, download=False).counts.shape == (3430, 6906)


def test_local_copy_with_wrong_hash(tmp_path, monkeypatch, cache_path):
    write_vocab(tmp_path / "vocab.kos.txt", 6906)  # right length, wrong content
    monkeypatch.setenv("SAME_DATA_DIR", str(tmp_path))
    with pytest.raises(CorpusFormatError, match=r"vocab\.kos\.txt: SHA-256 does not match"):
        corpus.fetch("kos", "vocab", download=False)


def test_unknown_corpus_and_kind():
    with pytest.raises(ValueError, match=r"unknown corpus 'reuters'; known: kos, nips"):
        corpus.fetch("reuters")
    with pytest.raises(ValueError, match=r"kind must be 'docword' or 'vocab', got 'meta'"):
        corpus.fetch("kos", "meta")


def test_corrupted_cache_is_rebuilt(tmp_path, cache_path):
    c = load_bad(tmp_path, cache_path, [3, 4, 5], GOOD)
    cached = cache_path / "docword.toy.npz"
    assert cached.is_file()
    cached.write_bytes(cached.read_bytes()[:40])  # truncate the cache
    with pytest.warns(CacheWarning, match=r"docword\.toy\.npz: unreadable parsed-corpus cache"):
        again = corpus.load("toy", docword=tmp_path / "docword.toy.txt.gz",
                            vocab=tmp_path / "vocab.toy.txt")
    assert (again.counts != c.counts).nnz == 0
    # rebuilt atomically: a valid cache, no temporaries
    assert leftovers(cache_path) == ["docword.toy.npz"]
    with np.load(cached) as z:
        assert int(z["data"].sum()) == 15


def test_stale_cache_is_reparsed(tmp_path, cache_path):
    load_bad(tmp_path, cache_path, [3, 4, 5], GOOD)
    import os
    import time

    dw = tmp_path / "docword.toy.txt.gz"
    write_docword(dw, [3, 4, 5], GOOD[:4] + ["3 4 9"])
    os.utime(dw, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    again = corpus.load("toy", docword=dw, vocab=tmp_path / "vocab.toy.txt")
    assert again.counts[2, 3] == 9


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.npz"

    def boom(f):
        f.write(b"partial")
        raise RuntimeError("disk full")

    from same.io.atomic import atomic_write

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(target, boom)
    assert list(tmp_path.iterdir()) == []


def test_corpus_properties():
    m = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int32))
    c = corpus.Corpus("m", m, vocab=["a", "b", "c"])
    assert (c.n_docs, c.n_words, c.nnz, c.n_tokens) == (2, 3, 3, 6)
    assert c.vocab_checksum() != corpus.Corpus("m", m, vocab=["a", "b", "d"]).vocab_checksum()
