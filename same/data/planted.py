"""Synthetic LDA corpora of a real corpus's shape, with their true topics (scale profile).

The paper's corpora (NYTimes, PubMed) cannot be downloaded on this project's machines, and a
random count matrix of their shape (:func:`same.data.synthetic.shaped_corpus`) times the code but
has no topics to learn.  :func:`lda_sparse_corpus` draws a corpus from LDA itself at any size
(no dense (D, W) arrays), so that a workflow run on it exercises the paper profile's code
path at a shape where NYTimes' make-up, not KOS's smallness, dominates, and so that each
method's topic-word matrix can be compared with the true one (:mod:`same.model.topic_recovery`).

A workflow dataset is described in the config (``synthetic: {name: spec}``) and made by
``same-lda synthesize``; the spec's keys are those of :func:`synthetic_corpus`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .artefact import ArtefactError, check_array, csr_from_parts, open_npz, remedied, save_npz
from .corpus import REGISTRY, Corpus
from .synthetic import SyntheticLDA

__all__ = ["SPEC_KEYS", "lda_sparse_corpus", "synthetic_corpus", "save_synthetic",
           "load_synthetic", "describe"]

#: Keys of a synthetic dataset's spec and their defaults (None: required).
SPEC_KEYS = {"like": None, "fraction": None, "n_topics": None, "doc_topic_prior": 0.1,
             "topic_word_concentration": 1000.0, "zipf_exponent": 1.0, "length_shape": 2.0,
             "seed": 0}


def lda_sparse_corpus(n_docs: int, n_words: int, n_tokens: int, n_topics: int,
                      doc_topic_prior: float = 0.1, topic_word_concentration: float = 1000.0,
                      zipf_exponent: float = 1.0, length_shape: float = 2.0,
                      seed: int = 0) -> SyntheticLDA:
    """A corpus drawn from LDA at any size, without dense (D, W) arrays.

    The generative process of Blei et al. (2003) with Zipf-shaped topics:
    φ_k ~ Dirichlet(c · z) with z_w ∝ (w + 1)^−``zipf_exponent`` (word id = frequency rank;
    c = ``topic_word_concentration``: the smaller, the sparser and more distinct the topics);
    θ_d ~ Dirichlet(α = ``doc_topic_prior``); document length n_d ~ Poisson(λ_d), λ_d ~
    Gamma(``length_shape``, mean / shape), mean ``n_tokens / n_docs``, at least one token;
    a document's topic counts ~ Multinomial(n_d, θ_d); each topic's tokens draw words from
    φ_k.  Repeated (document, word) draws add up, so the number of nonzeros follows from c
    and the lengths: at NYTimes' shape / 16 (D = 18,750, W = 102,660, 6.2M tokens) c = 1000
    gives 4.28M nonzeros against NYTimes/16's 4.35M.  Memory: the (K, W) topics (float64)
    plus 16 bytes per token while drawing.  Seeded (NumPy PCG64).

    Returns
    -------
    SyntheticLDA: counts (n_docs, n_words) int32 CSR with sorted indices and no empty
    document; topic_word (K, W) float64 and doc_topic (n_docs, K) float64, rows summing to 1.

    Raises
    ------
    ValueError
        A non-positive size, prior, concentration or shape, naming it.
    """
    for name, v in (("n_docs", n_docs), ("n_words", n_words), ("n_tokens", n_tokens),
                    ("n_topics", n_topics), ("doc_topic_prior", doc_topic_prior),
                    ("topic_word_concentration", topic_word_concentration),
                    ("length_shape", length_shape)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_words + 1) ** zipf_exponent
    base *= topic_word_concentration / base.sum()
    phi = rng.standard_gamma(np.broadcast_to(base, (n_topics, n_words)))
    _normalise_rows(phi, rng)
    theta = rng.standard_gamma(doc_topic_prior, size=(n_docs, n_topics))
    _normalise_rows(theta, rng)
    mean = n_tokens / n_docs
    lengths = np.maximum(rng.poisson(rng.gamma(length_shape, mean / length_shape, n_docs)), 1)
    per_topic = rng.multinomial(lengths, theta)  # (n_docs, K): tokens of each topic
    keys = []
    for k in range(n_topics):
        docs = np.repeat(np.arange(n_docs, dtype=np.int64), per_topic[:, k])
        cdf = np.cumsum(phi[k])
        words = np.minimum(np.searchsorted(cdf, rng.random(docs.size) * cdf[-1], side="right"),
                           n_words - 1)
        keys.append(docs * n_words + words)
    del per_topic
    key, counts = np.unique(np.concatenate(keys), return_counts=True)
    del keys
    rows, cols = np.divmod(key, n_words)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_docs), out=indptr[1:])
    idx_dtype = np.int32 if key.size < 2**31 else np.int64
    X = sp.csr_matrix((counts.astype(np.int32), cols.astype(np.int32), indptr.astype(idx_dtype)),
                      shape=(n_docs, n_words))
    return SyntheticLDA(counts=X, topic_word=phi, doc_topic=theta)


def _normalise_rows(a: np.ndarray, rng) -> None:
    """Gamma draws → Dirichlet rows, in place; a row that underflowed to all zeros (tiny
    concentrations) puts its mass on one uniformly drawn coordinate, the Dirichlet's limit."""
    for i in np.flatnonzero(a.sum(axis=1) == 0):
        a[i, rng.integers(a.shape[1])] = 1.0
    a /= a.sum(axis=1, keepdims=True)


def _check_spec(name: str, spec: dict) -> dict:
    if name in REGISTRY:  # its outputs would go where the real corpus's do (results/<name>/)
        raise ValueError(f"synthetic dataset {name!r}: {name!r} is the name of a UCI corpus "
                         f"({', '.join(REGISTRY)}); give the synthetic dataset another name")
    if not isinstance(spec, dict):
        raise ValueError(f"synthetic dataset {name!r}: spec must be a mapping, got {spec!r}")
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ValueError(f"synthetic dataset {name!r}: unknown key {unknown[0]!r}; known: "
                         f"{', '.join(SPEC_KEYS)}")
    full = {k: spec.get(k, default) for k, default in SPEC_KEYS.items()}
    missing = [k for k, v in full.items() if v is None]
    if missing:
        raise ValueError(f"synthetic dataset {name!r}: missing key {missing[0]!r}")
    if full["like"] not in REGISTRY:
        raise ValueError(f"synthetic dataset {name!r}: like={full['like']!r} is not a UCI "
                         f"corpus; known: {', '.join(REGISTRY)}")
    f = full["fraction"]
    if isinstance(f, bool) or not (isinstance(f, (int, float)) and 0 < f <= 1):
        raise ValueError(f"synthetic dataset {name!r}: fraction must be in (0, 1], got {f!r}")
    return full


def synthetic_corpus(name: str, spec: dict) -> SyntheticLDA:
    """The LDA corpus of a workflow's synthetic dataset ``name``.

    spec : {"like": UCI corpus whose shape is copied, "fraction": its D and tokens are
        multiplied by this (W kept), "n_topics": true K, and optionally "doc_topic_prior",
        "topic_word_concentration", "zipf_exponent", "length_shape", "seed"} (the arguments
        of :func:`lda_sparse_corpus`).

    Raises
    ------
    ValueError
        An unknown or missing key, or a bad value, naming the dataset and the key.
    """
    s = _check_spec(name, spec)
    info = REGISTRY[s["like"]]
    return lda_sparse_corpus(
        max(2, round(info.n_docs * s["fraction"])), info.n_words,
        max(1, round(info.n_tokens * s["fraction"])), int(s["n_topics"]),
        doc_topic_prior=float(s["doc_topic_prior"]),
        topic_word_concentration=float(s["topic_word_concentration"]),
        zipf_exponent=float(s["zipf_exponent"]), length_shape=float(s["length_shape"]),
        seed=int(s["seed"]))


def describe(name: str, spec: dict) -> str:
    """One line naming a synthetic dataset as such, e.g. for figure captions."""
    s = _check_spec(name, spec)
    return (f"{name} (SYNTHETIC: LDA-generated, {s['like']} shape × {s['fraction']:g}, "
            f"{s['n_topics']} true topics)")


_REMEDY = "rerun `same-lda synthesize` to rewrite it"


def save_synthetic(path: str | os.PathLike, syn: SyntheticLDA, name: str, spec: dict, *,
                   option: str | None = None) -> None:
    """Write a synthetic corpus and its true topics (float32) as a sealed ``.npz``
    (:func:`same.data.artefact.save_npz`): ``path`` may replace only an earlier synthetic corpus;
    ``option`` names it in messages.

    Raises
    ------
    same.io.outputs.OutputError
        ``path`` exists and is not a synthetic corpus written by same-lda.
    """
    X = syn.counts
    save_npz(Path(path), {"data": X.data, "indices": X.indices, "indptr": X.indptr,
                          "shape": np.asarray(X.shape, dtype=np.int64),
                          "topic_word": syn.topic_word.astype(np.float32),
                          "meta": np.asarray(json.dumps({"name": name, "spec": spec}))},
             option=option)


def load_synthetic(path: str | os.PathLike) -> tuple[Corpus, np.ndarray]:
    """Read a file written by :func:`save_synthetic`: (Corpus, true topic_word (K, W) float64),
    after checking its seal and its arrays (CSR structure, topics finite, ≥ 0, K × W).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError (same.data.artefact.ArtefactError)
        Not a sealed synthetic-corpus file, seal mismatch, or malformed arrays (one line
        naming the path and the fault).
    """
    path = Path(path)
    with remedied(_REMEDY):
        z = open_npz(path, "synthetic corpus file", _REMEDY,
                     ("meta", "data", "indices", "indptr", "shape", "topic_word"))
        try:
            meta = json.loads(str(z["meta"]))
            if not (isinstance(meta, dict) and isinstance(meta.get("name"), str)):
                raise ValueError("no dataset name")
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise ArtefactError(f"{path}: unreadable synthetic corpus metadata ({exc})") from None
        X = csr_from_parts(z["data"], z["indices"], z["indptr"], z["shape"], str(path))
        phi = check_array(z["topic_word"], "topic_word", str(path), ndim=2, kind="f")
        if phi.shape[1] != X.shape[1] or not (phi.sum(axis=1) > 0).all():
            raise ArtefactError(f"{path}: topic_word of shape {phi.shape} does not fit "
                                f"{X.shape[1]} words with positive rows")
    phi = phi.astype(np.float64)
    phi /= phi.sum(axis=1, keepdims=True)
    return Corpus(name=meta["name"], counts=X, source=str(path), meta=meta), phi
