"""Variational Bayes for LDA with gensim's LdaModel: online (Hoffman, Blei, Bach 2010)
and batch (Blei, Ng, Jordan 2003).

- online: ``update_every=1``, ``chunksize`` = 1/20 of the documents (the paper's
  minibatch), ρ_t = (τ0 + t)^−κ over minibatches t with gensim's defaults
  κ = decay = 0.5, τ0 = offset = 1;
- batch: ``update_every=0`` and decay = 0, i.e. ρ = 1: one full M-step per pass
  over all documents (variational EM of Blei, Ng, Jordan).

Both use fixed symmetric α, β (no hyper-parameter learning), 50 E-step
iterations per document (gensim default), gensim's perplexity logging off, and float64
arithmetic.  Not gensim's default float32: on KOS it lowered online VB's held-out ll after
pass 1 by 0.005–0.013 nats/token in every seed (measured 2026-11-23).  The price is memory:
gensim keeps about six K × W arrays (λ, sufficient statistics, E[log β], temporaries),
1.3 GB at NYTimes' W and K = 256 (0.65 GB in float32).
φ is the row-normalised λ (``get_topics()``) over the full vocabulary,
exported after every pass (one ``update()`` call per pass; gensim's epoch-end
callback fires before the pass's last M-step in batch mode, so it is not used).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from same.params import paper_batch_size

from . import Checkpoint, Stopwatch, drain, positive_int

__all__ = ["iter_vb", "fit_vb", "check_vb_params", "VB_DECAY", "VB_OFFSET", "VB_SEED_MAX"]

VB_DECAY = 0.5
VB_OFFSET = 1.0
#: gensim's largest seed: it seeds numpy's RandomState (0..2**32 - 1).  Seeds are passed
#: whole; beyond this (or negative, or a bool) they are refused.
VB_SEED_MAX = 2**32 - 1


def _bow(X: sp.csr_matrix):
    """gensim's bag-of-words view of the CSR rows, streamed: each pass builds one document's
    (word id, count) list at a time (``gensim.matutils.Sparse2Corpus``), never the corpus
    (a list of lists costs about 96 bytes per nonzero: 43 GB for PubMed)."""
    from gensim.matutils import Sparse2Corpus

    return Sparse2Corpus(X, documents_columns=False)


def check_vb_params(params: dict, seed=None) -> None:
    """Check the VB settings a run spec gives (``chunksize``, ``iterations``; other keys are
    checked by the spec): ``chunksize`` None or a positive integer, ``iterations`` a positive
    integer (not a bool, not a string); and ``seed`` when given: an integer in
    0..:data:`VB_SEED_MAX`.  The one check, used by :func:`iter_vb` and by
    :meth:`same.spec.RunSpec.validate`.

    Raises
    ------
    ValueError
        Naming the parameter and the value, e.g. ``chunksize must be a positive integer
        (documents per chunk), got 0``, ``seed 4294967296 is outside gensim's seed range
        0..4294967295 (numpy RandomState)``.
    """
    import numbers

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or not 0 <= seed <= VB_SEED_MAX):
        raise ValueError(f"seed {seed!r} is outside gensim's seed range 0..{VB_SEED_MAX} "
                         "(numpy RandomState)")
    if params.get("chunksize") is not None:
        positive_int("chunksize", params["chunksize"], "documents per chunk")
    if "iterations" in params:
        positive_int("iterations", params["iterations"], "E-step iterations per document")


def iter_vb(X: sp.csr_matrix, *, n_topics: int, doc_topic_prior: float, topic_word_prior: float,
            random_state: int, passes: int = 20, mode: str = "online",
            chunksize: int | None = None, iterations: int = 50):
    """Train gensim LdaModel (``mode`` "online" or "batch"), yielding (φ, info) after each pass.

    Parameters
    ----------
    X : csr_matrix (n_docs, n_words) counts
    chunksize : documents per E-step chunk (and per M-step when online); default ceil(D/20)
    iterations : E-step iterations per document (gensim default 50)

    Yields
    ------
    (φ of shape (n_topics, n_words), float64, rows sum to 1; info dict: pass, iteration,
    samples_per_word (None), train_seconds (time between yields excluded), tokens_seen,
    native_score (None))

    Raises
    ------
    ValueError
        Unknown mode, passes < 1, or a bad chunksize, iterations or seed
        (:func:`check_vb_params`).
    """
    from gensim.models import LdaModel

    if mode not in ("online", "batch"):
        raise ValueError(f"mode must be 'online' or 'batch', got {mode!r}")
    positive_int("passes", passes)
    check_vb_params({"chunksize": chunksize, "iterations": iterations}, seed=random_state)
    X = sp.csr_matrix(X)
    n_docs, n_words = X.shape
    corpus = _bow(X)
    chunksize = paper_batch_size(n_docs) if chunksize is None else int(chunksize)
    n_tokens = float(X.sum())
    online = mode == "online"
    id2word = {i: str(i) for i in range(n_words)}  # num_terms = W: φ covers the full vocabulary
    model = LdaModel(num_topics=n_topics, id2word=id2word, alpha=np.full(n_topics, doc_topic_prior),
                     eta=topic_word_prior, chunksize=chunksize,
                     decay=VB_DECAY if online else 0.0, offset=VB_OFFSET, iterations=iterations,
                     eval_every=None, random_state=int(random_state),
                     update_every=1 if online else 0, dtype=np.float64)
    watch = Stopwatch()  # construction (no corpus given: no training) is not timed
    for p in range(1, passes + 1):
        # one update() per pass: every M-step of the pass is done when φ is exported, and
        # gensim's ρ = (offset + num_updates / chunksize)^−decay is Hoffman's (τ0 + t)^−κ
        model.update(corpus, passes=1, update_every=1 if online else 0, chunks_as_numpy=False)
        seconds = watch.elapsed()
        with watch.pause():
            phi = np.asarray(model.get_topics(), dtype=np.float64)
            phi /= phi.sum(axis=1, keepdims=True)
            yield phi, {"pass": p, "iteration": p, "samples_per_word": None,
                        "train_seconds": seconds, "tokens_seen": p * n_tokens,
                        "native_score": None}


def fit_vb(X: sp.csr_matrix, *, checkpoint: Checkpoint | None = None, **kwargs) -> np.ndarray:
    """:func:`iter_vb` to the end, calling ``checkpoint(φ, info)`` at each pass; returns the
    last φ."""
    return drain(iter_vb(X, **kwargs), checkpoint)
