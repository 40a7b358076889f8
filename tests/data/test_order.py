"""The stored order of a corpus (issue 48): a text corpus is stored in one seeded shuffle (as
scikit-learn's load_files does), records its labels and file positions through the cache and
the split; the check that tells an order grouped by label."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from same.data import textcorpus
from same.data.artefact import save_npz
from same.data.corpus import Corpus
from same.data.order import (
    grouped_run,
    longest_run,
    order_description,
    resolve_document_order,
    shuffled_indices,
    split_order,
    training_permutation,
)
from same.data.split import (
    SplitIntegrityError,
    load_split,
    make_split,
    train_subset,
    validation_split,
)
from same.data.textcorpus import TextCorpusError, load_corpus

WORDS = {"a": "rocket orbit launch crew moon shuttle engine thrust planet comet".split(),
         "b": "goal match team penalty league striker keeper referee cup season".split()}


def two_categories(root, n=30, seed=0):
    """``root/a/`` and ``root/b/``, ``n`` documents each, words of their own category."""
    rng = np.random.default_rng(seed)
    for cat, words in WORDS.items():
        (root / cat).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / cat / f"{i:03d}.txt").write_text(" ".join(rng.choice(words, 12)))
    return root


def rows(X) -> list[tuple]:
    X = sp.csr_matrix(X)
    return sorted(tuple(zip(X[i].indices.tolist(), X[i].data.tolist()))
                  for i in range(X.shape[0]))


def test_folder_corpus_shuffled_once_seeded_not_grouped(tmp_path, cache):
    folder = two_categories(tmp_path / "docs")
    spec = {"source": "folder", "path": str(folder)}
    default = load_corpus("mine", spec)
    in_file = load_corpus("mine", {**spec, "shuffle": False})
    other = load_corpus("mine", {**spec, "shuffle_seed": 1})
    # the same rows (as a multiset) and vocabulary as file order
    assert default.vocab == in_file.vocab == other.vocab
    assert rows(default.counts) == rows(in_file.counts) == rows(other.counts)
    # file order is grouped: 30 of a, then 30 of b; the shuffle is not
    assert in_file.labels.tolist() == ["a"] * 30 + ["b"] * 30 and in_file.file_positions is None
    assert grouped_run(in_file.labels).length == 30
    assert longest_run(default.labels).length <= 8 and grouped_run(default.labels) is None
    # the permutation is load_files(shuffle=True, random_state=seed)'s, recorded per row
    assert np.array_equal(default.file_positions, shuffled_indices(60, 0))
    assert (default.counts != in_file.counts[default.file_positions]).nnz == 0
    assert np.array_equal(default.labels, in_file.labels[default.file_positions])
    assert (in_file.counts != default.counts[np.argsort(default.file_positions)]).nnz == 0
    # identical for the same seed, different for another
    again = load_corpus("mine", spec, use_cache=False)
    assert (again.counts != default.counts).nnz == 0
    assert not np.array_equal(other.file_positions, default.file_positions)
    assert default.meta["order"] == {"shuffled": True, "seed": 0, "on_purpose": False}
    assert other.meta["order"] == {"shuffled": True, "seed": 1, "on_purpose": False}
    assert in_file.meta["order"] == {"shuffled": False, "seed": None, "on_purpose": True}
    assert default.meta["text_sha256"] == in_file.meta["text_sha256"]  # of the text, in file order
    assert [order_description(c) for c in (default, other, in_file)] == [
        "one seeded shuffle (seed 0)", "one seeded shuffle (seed 1)",
        "file order (shuffle: false)"]


def test_order_labels_positions_survive_the_cache_and_the_split(tmp_path, cache, monkeypatch):
    folder = two_categories(tmp_path / "docs")
    spec = {"source": "folder", "path": str(folder)}
    first = load_corpus("mine", spec)
    calls, real = [], textcorpus.vectorize
    monkeypatch.setattr(textcorpus, "vectorize", lambda *a: calls.append(1))
    cached = load_corpus("mine", spec)  # read back: vectorize is not called
    assert calls == [] and (cached.counts != first.counts).nnz == 0
    assert np.array_equal(cached.labels, first.labels)
    assert np.array_equal(cached.file_positions, first.file_positions)
    assert cached.meta["order"] == first.meta["order"]
    assert len(list((cache / "text").glob("*.npz"))) == 1
    monkeypatch.setattr(textcorpus, "vectorize", real)
    split = make_split(cached, 0.2, seed=3)
    assert split.order == "shuffled:0" and split.label_names == ("a", "b")
    assert np.array_equal(np.asarray(split.label_names)[split.train_labels],
                          first.labels[split.train_docs])
    assert np.array_equal(split.train_file_positions, first.file_positions[split.train_docs])
    split.save(tmp_path / "split.npz")
    back = load_split(tmp_path / "split.npz")
    assert back.checksum() == split.checksum()
    assert back.order == "shuffled:0" and back.label_names == ("a", "b")
    assert np.array_equal(back.train_labels, split.train_labels)
    assert np.array_equal(back.train_file_positions, split.train_file_positions)
    # file order on purpose: no positions (identity), labels kept, its own checksum
    kept = make_split(load_corpus("mine", {**spec, "shuffle": False}), 0.2, seed=3)
    kept.save(tmp_path / "kept.npz")
    back = load_split(tmp_path / "kept.npz")
    assert back.order == "file:on_purpose" and back.train_file_positions is None
    assert back.checksum() == kept.checksum() != split.checksum()


def test_subsets_carry_labels_and_positions(tmp_path, cache):
    corpus = load_corpus("mine", {"source": "folder", "path": str(two_categories(tmp_path / "docs"))})
    split = make_split(corpus, 0.2, seed=0)
    for sub in (train_subset(split, 0.5), validation_split(split, 0.25, seed=1)):
        assert sub.order == split.order and sub.label_names == split.label_names
        assert np.array_equal(np.asarray(sub.label_names)[sub.train_labels],
                              corpus.labels[sub.train_docs])
        assert np.array_equal(sub.train_file_positions, corpus.file_positions[sub.train_docs])


def test_csv_label_column_and_its_errors(tmp_path, cache):
    (tmp_path / "t.csv").write_text("body,topic\n" + "".join(
        f"{' '.join(WORDS[c][i:i + 4])},{c}\n" for c in "ab" for i in range(5)))
    c = load_corpus("t", {"source": "csv", "path": str(tmp_path / "t.csv"), "column": "body",
                          "label": "topic"})
    assert sorted(c.labels.tolist()) == ["a"] * 5 + ["b"] * 5
    in_file = ["a"] * 5 + ["b"] * 5
    assert c.labels.tolist() == [in_file[p] for p in c.file_positions]
    (tmp_path / "j.jsonl").write_text('{"body": "rocket orbit", "topic": "a"}\n'
                                      '{"body": "goal match"}\n')
    with pytest.raises(TextCorpusError) as exc:
        load_corpus("t", {"source": "jsonl", "path": str(tmp_path / "j.jsonl"),
                          "column": "body", "label": "topic"})
    assert str(exc.value) == (f"{tmp_path / 'j.jsonl'}: line 2: no label (column 'topic'); "
                              "see corpora.t.label")
    with pytest.raises(TextCorpusError, match=r"no column 'kind' \(columns: body, topic\); "
                                              r"see corpora\.t\.label$"):
        load_corpus("t", {"source": "csv", "path": str(tmp_path / "t.csv"), "column": "body",
                          "label": "kind"})


@pytest.mark.parametrize("spec, message", [
    ({"source": "folder", "path": "d", "shuffle": "yes"}, "corpora.toy.shuffle: must be true "
                                                          "or false"),
    ({"source": "folder", "path": "d", "shuffle_seed": -1},
     "corpora.toy.shuffle_seed: must be a non-negative integer below 2**32"),
    ({"source": "folder", "path": "d", "shuffle_seed": True},
     "corpora.toy.shuffle_seed: must be a non-negative integer below 2**32"),
    ({"source": "folder", "path": "d", "shuffle": False, "shuffle_seed": 3},
     "corpora.toy.shuffle_seed: applies only with shuffle: true"),
    ({"source": "uci", "docword": "d", "shuffle_seed": 3},
     "corpora.toy.shuffle_seed: applies only with shuffle: true (a uci corpus keeps file order "
     "by default)"),
    ({"source": "csv", "path": "x.csv", "column": "body", "label": 3},
     "corpora.toy.label: must be a non-empty string"),
    ({"source": "folder", "path": "d", "label": "x"}, "corpora.toy.label: not a key of a folder "
                                                      "corpus"),
])
def test_bad_order_keys_name_the_setting(spec, message):
    with pytest.raises(TextCorpusError) as exc:
        textcorpus.check_corpus_spec("toy", spec)
    assert str(exc.value).startswith(message)


def test_uci_spec_keeps_file_order_unless_told(tmp_path, cache):
    X = sp.random(40, 15, density=0.3, format="coo", random_state=1,
                  data_rvs=lambda n: np.random.default_rng(1).integers(1, 4, n))
    body = "".join(f"{d + 1} {w + 1} {int(c)}\n" for d, w, c in zip(X.row, X.col, X.data))
    (tmp_path / "docword.txt").write_text(f"40\n15\n{X.nnz}\n{body}")
    spec = {"source": "uci", "docword": str(tmp_path / "docword.txt")}
    plain, shuffled = load_corpus("mine", spec), load_corpus("mine", {**spec, "shuffle": True})
    assert plain.file_positions is None and plain.labels is None
    assert plain.meta["order"] == {"shuffled": False, "seed": None, "on_purpose": False}
    assert np.array_equal(shuffled.file_positions, shuffled_indices(40, 0))
    assert (shuffled.counts != plain.counts[shuffled.file_positions]).nnz == 0
    assert make_split(shuffled, 0.2).order == "shuffled:0"
    assert order_description(spec) == order_description("kos") == "file order (UCI)"
    assert order_description({**spec, "shuffle": True, "shuffle_seed": 5}) == \
        "one seeded shuffle (seed 5)"
    assert order_description({"source": "folder", "path": "d"}) == "one seeded shuffle (seed 0)"
    assert order_description({"source": "uci", "docword": "d", "shuffle": False}) == \
        "file order (shuffle: false)"
    assert order_description(make_split(plain.counts, 0.2)) == "order not recorded"


def test_checksum_unchanged_without_labels_or_a_shuffle(tmp_path):
    """A split of a corpus in file order without labels (every UCI corpus) hashes as before
    the order was recorded; an old split file without the order members loads as unknown."""
    X = sp.random(50, 20, density=0.3, format="csr", random_state=0)
    X.data = np.ceil(X.data * 4)
    unknown = make_split(Corpus("c", X.astype(np.int32)), 0.2, seed=1)
    in_file = make_split(Corpus("c", X.astype(np.int32), meta={"order": {"shuffled": False}}),
                         0.2, seed=1)
    assert (unknown.order, in_file.order) == ("unknown", "file")
    assert unknown.checksum() == in_file.checksum()
    in_file.save(tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as z:
        old = {k: z[k] for k in z.files if k != "order"}
    save_npz(tmp_path / "old.npz", old)
    back = load_split(tmp_path / "old.npz")
    assert back.order == "unknown" and back.train_labels is None
    assert back.checksum() == in_file.checksum()


def test_changed_labels_or_order_fail_the_checksum(tmp_path):
    X = sp.csr_matrix(np.random.default_rng(0).integers(0, 3, (30, 8)))
    corpus = Corpus("c", X.astype(np.int32), labels=np.array(["a", "b", "c"] * 10))
    make_split(corpus, 0.2).save(tmp_path / "s.npz")
    with np.load(tmp_path / "s.npz") as z:
        arrays = dict(z)
    for key, value in (("train_labels", arrays["train_labels"][::-1].copy()),
                       ("order", np.asarray("file:on_purpose"))):
        save_npz(tmp_path / "bad.npz", {**arrays, key: value})
        with pytest.raises(SplitIntegrityError, match="content does not match its checksum"):
            load_split(tmp_path / "bad.npz")
    save_npz(tmp_path / "bad.npz", {**arrays, "order": np.asarray("sorted")})
    with pytest.raises(SplitIntegrityError, match="order 'sorted' is not file, "):
        load_split(tmp_path / "bad.npz")
    save_npz(tmp_path / "bad.npz", {**arrays, "train_labels": arrays["train_labels"] + 5})
    with pytest.raises(SplitIntegrityError, match="train_labels do not match"):
        load_split(tmp_path / "bad.npz")


def test_grouped_is_the_union_bound_on_a_random_order():
    # two labels of 30: a run of 30 has bound 60 * 2**-30 ≈ 6e-8: grouped
    run = grouped_run(["a"] * 30 + ["b"] * 30)
    assert run.length == 30 and run.describe() == "30 documents of 'a' in a row, at positions 0–29"
    # the threshold n * p**L <= 1e-6: with n = 1000 and p = 1/2, L >= log2(1e9) ≈ 29.9
    for length, grouped in ((29, False), (30, True)):
        labels = ["a"] * length + ["b", "a"] * (500 - length) + ["b"] * length
        assert longest_run(labels).length == length
        assert (grouped_run(labels) is not None) is grouped
    assert grouped_run(["a"] * 50) is None  # one label cannot be grouped
    assert grouped_run(["a", "a", "b"]) is None  # too short to tell
    rng = np.random.default_rng(0)
    random = rng.permutation(np.repeat(list("abcdefghij"), 100))
    assert grouped_run(random) is None and longest_run(random).length < 6


def test_document_orders_and_their_permutations():
    assert resolve_document_order("other") == "shuffled"  # whatever the stored order
    assert resolve_document_order("stored") == "stored"
    assert resolve_document_order("file") == "file"
    with pytest.raises(ValueError, match="document_order must be one of stored, shuffled, "):
        resolve_document_order("random")
    assert training_permutation("stored", 5, 0) is None
    assert training_permutation("file", 5, 0) is None  # no positions: file order already
    positions = np.array([3, 0, 4, 1, 2])
    assert positions[training_permutation("file", 5, 0, positions)].tolist() == [0, 1, 2, 3, 4]
    a, b = training_permutation("shuffled", 100, 1), training_permutation("shuffled", 100, 2)
    assert np.array_equal(a, training_permutation("shuffled", 100, 1)) and \
        not np.array_equal(a, b) and sorted(a) == list(range(100))
    assert split_order(None) == "unknown"
    assert split_order({"shuffled": True, "seed": 4}) == "shuffled:4"
