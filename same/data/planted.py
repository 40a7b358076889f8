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
from .registry import check_own_name
from .synthetic import SyntheticLDA

__all__ = ["SPEC_KEYS", "SPEC_SCHEMA", "lda_sparse_corpus", "synthetic_corpus", "save_synthetic",
           "load_synthetic", "describe"]

#: numpy's largest Poisson rate (``np.random.Generator.poisson`` refuses a larger one).
_POISSON_MAX = float(np.iinfo(np.int64).max - 10 * np.sqrt(np.iinfo(np.int64).max))

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
        A non-positive size, prior, concentration or shape, naming it; a concentration or
        prior too large, or a length shape too small, for its draws to stay finite.
    """
    for name, v in (("n_docs", n_docs), ("n_words", n_words), ("n_tokens", n_tokens),
                    ("n_topics", n_topics), ("doc_topic_prior", doc_topic_prior),
                    ("topic_word_concentration", topic_word_concentration),
                    ("length_shape", length_shape)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore"):  # a steep Zipf law: the rarest words' weight is 0
        base = 1.0 / np.arange(1, n_words + 1) ** zipf_exponent
    base *= topic_word_concentration / base.sum()
    phi = rng.standard_gamma(np.broadcast_to(base, (n_topics, n_words)))
    _normalise_rows(phi, rng)
    if not np.isfinite(phi).all():
        raise ValueError(f"topic_word_concentration={topic_word_concentration!r} is too large "
                         "to draw topics from (their Gamma draws overflow float64)")
    theta = rng.standard_gamma(doc_topic_prior, size=(n_docs, n_topics))
    _normalise_rows(theta, rng)
    if not np.isfinite(theta).all():
        raise ValueError(f"doc_topic_prior={doc_topic_prior!r} is too large to draw "
                         "documents' topic shares from (their Gamma draws overflow float64)")
    mean = n_tokens / n_docs
    rate = rng.gamma(length_shape, mean / length_shape, n_docs)
    if not (np.isfinite(rate).all() and rate.max() < _POISSON_MAX):
        raise ValueError(f"length_shape={length_shape!r} is too small: the Poisson rate of a "
                         f"document's length, Gamma(length_shape, {mean:g} / length_shape), "
                         "is beyond what can be drawn; give a larger length_shape")
    lengths = np.maximum(rng.poisson(rate), 1)
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
    concentrations) puts its mass on one uniformly drawn coordinate, the Dirichlet's limit; a
    row whose sum overflows (huge concentrations) is scaled by its largest draw first."""
    with np.errstate(over="ignore"):
        total = a.sum(axis=1)
    for i in np.flatnonzero(total == 0):
        a[i, rng.integers(a.shape[1])] = 1.0
    huge = ~np.isfinite(total)
    if huge.any():
        with np.errstate(invalid="ignore"):  # a draw that is itself infinite: NaN, refused
            a[huge] /= a[huge].max(axis=1, keepdims=True)
    a /= a.sum(axis=1, keepdims=True)


#: The one declaration of a spec's keys, types and ranges (the workflow config's schema refers
#: to it for its ``synthetic:`` entries); checked strictly by :mod:`same.io.schema`.
SPEC_SCHEMA = Path(__file__).with_name("synthetic.schema.json")


def _check_spec(name: str, spec) -> dict:
    """``spec`` with its defaults filled in, after :data:`SPEC_SCHEMA` (every key: its type,
    its range, numbers finite, integers ints, no boolean for a number) and the dataset's
    name are checked."""
    from same.io.schema import check_schema

    check_own_name(name, f"synthetic dataset {name!r}", "synthetic dataset")
    check_schema(spec, SPEC_SCHEMA, f"synthetic dataset {name!r}", sep=": ")
    return {k: spec.get(k, default) for k, default in SPEC_KEYS.items()}


def synthetic_corpus(name: str, spec: dict) -> SyntheticLDA:
    """The LDA corpus of a workflow's synthetic dataset ``name``.

    spec : {"like": UCI corpus whose shape is copied, "fraction": its D and tokens are
        multiplied by this (W kept), "n_topics": true K, and optionally "doc_topic_prior",
        "topic_word_concentration", "zipf_exponent", "length_shape", "seed"} (the arguments
        of :func:`lda_sparse_corpus`).

    Raises
    ------
    ValueError
        The spec refused by :data:`SPEC_SCHEMA` (an unknown or missing key, a value of the
        wrong type, out of range or not finite), or values whose draws cannot be made: one
        line naming the dataset and the key.
    MemoryError
        Drawing it needs more memory than is available (:func:`draw_memory_lower_bound`),
        one line naming like, fraction and n_topics, before anything is allocated.
    """
    s = _check_spec(name, spec)
    info = REGISTRY[s["like"]]
    n_docs, n_tokens = max(2, round(info.n_docs * s["fraction"])), max(
        1, round(info.n_tokens * s["fraction"]))
    _check_draw_memory(name, s, n_docs, info.n_words, n_tokens)
    try:
        return lda_sparse_corpus(
            n_docs, info.n_words, n_tokens, int(s["n_topics"]),
            doc_topic_prior=float(s["doc_topic_prior"]),
            topic_word_concentration=float(s["topic_word_concentration"]),
            zipf_exponent=float(s["zipf_exponent"]), length_shape=float(s["length_shape"]),
            seed=int(s["seed"]))
    except ValueError as exc:  # values the schema admits whose draws cannot be made
        raise ValueError(f"synthetic dataset {name!r}: {exc}") from None


def draw_memory_lower_bound(n_docs: int, n_words: int, n_topics: int, n_tokens: int) -> int:
    """Bytes :func:`lda_sparse_corpus` holds at once, at least: the (K, W) topics and the
    (D, K) topic shares (float64), the (D, K) topic counts (int64), 16 bytes per token."""
    return (int(n_topics) * int(n_words) * 8 + int(n_docs) * int(n_topics) * 16
            + int(n_tokens) * 16)


def _check_draw_memory(name: str, s: dict, n_docs: int, n_words: int, n_tokens: int) -> None:
    """Refuse a spec whose draws need more memory than is available now, as a fit's memory is
    checked (:mod:`same.model.fit_memory`): one line naming the spec's keys, before numpy's
    "Unable to allocate 61.1 GiB" deep in the draws."""
    import psutil

    from same.io.textinput import gib_text, int_text

    need = draw_memory_lower_bound(n_docs, n_words, s["n_topics"], n_tokens)
    have = psutil.virtual_memory().available
    if need > have:
        raise MemoryError(
            f"synthetic dataset {name!r}: like={s['like']!r}, fraction={s['fraction']:g} and "
            f"n_topics={int_text(s['n_topics'])} make {int_text(n_docs)} documents × "
            f"{int_text(n_words)} words, whose draws need at least {gib_text(need)} GiB, more "
            f"than the {gib_text(have)} GiB available; use a smaller fraction or fewer n_topics")


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
    ValueError
        The true topics are no distributions (NaN or infinite values, negative, a row without
        mass: what :func:`load_synthetic` refuses); nothing is written.
    """
    X = syn.counts
    topic_word = syn.topic_word.astype(np.float32)
    try:
        _check_topics(topic_word, X.shape[1], f"synthetic dataset {name!r}")
    except ArtefactError as exc:
        raise ValueError(f"{exc}; {path} is not written") from None
    save_npz(Path(path), {"data": X.data, "indices": X.indices, "indptr": X.indptr,
                          "shape": np.asarray(X.shape, dtype=np.int64),
                          "topic_word": topic_word,
                          "meta": np.asarray(json.dumps({"name": name, "spec": spec}))},
             option=option)


def _check_topics(phi, n_words: int, where: str) -> np.ndarray:
    """True topics as written and read: (K, W) floats, finite, ≥ 0, every row with mass.

    Raises
    ------
    ArtefactError
        ``<where>: topic_word holds NaN or infinite values`` (negative values, another
        shape, a row without mass).
    """
    phi = check_array(phi, "topic_word", where, ndim=2, kind="f")
    if phi.shape[1] != n_words or not (phi.sum(axis=1) > 0).all():
        raise ArtefactError(f"{where}: topic_word of shape {phi.shape} does not fit "
                            f"{n_words} words with positive rows")
    return phi


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
        phi = _check_topics(z["topic_word"], X.shape[1], str(path))
    phi = phi.astype(np.float64)
    phi /= phi.sum(axis=1, keepdims=True)
    return Corpus(name=meta["name"], counts=X, source=str(path), meta=meta), phi
