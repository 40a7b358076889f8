"""Variational Bayes for LDA with gensim's LdaModel: online (Hoffman, Blei, Bach 2010)
and batch (Blei, Ng, Jordan 2003).

- online: ``update_every=1``, ``chunksize`` = 1/20 of the documents (the paper's
  minibatch), ρ_t = (τ0 + t)^−κ over minibatches t, κ = ``decay`` and τ0 = ``offset``
  (gensim's names) with gensim's defaults 0.5 and 1 (:data:`VB_DECAY`, :data:`VB_OFFSET`);
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

from same.data.protocol import paper_batch_size

from . import Checkpoint, Stopwatch, drain, number_in, positive_int

__all__ = ["iter_vb", "fit_vb", "check_vb_params", "VB_DECAY", "VB_OFFSET", "VB_SEED_MAX"]

#: gensim's defaults for κ (``decay``) and τ0 (``offset``) of online VB.
VB_DECAY = 0.5
VB_OFFSET = 1.0
#: Online-only settings: refused in batch mode, where ρ = 1.
_ONLINE_ONLY = ("decay", "offset")
#: gensim's largest seed: it seeds numpy's RandomState (0..2**32 - 1).  Seeds are passed
#: whole; beyond this (or negative, or a bool) they are refused.
VB_SEED_MAX = 2**32 - 1


def _bow(X: sp.csr_matrix):
    """gensim's bag-of-words view of the CSR rows, streamed: each pass builds one document's
    (word id, count) list at a time (``gensim.matutils.Sparse2Corpus``), never the corpus
    (a list of lists costs about 96 bytes per nonzero: 43 GB for PubMed)."""
    from gensim.matutils import Sparse2Corpus

    return Sparse2Corpus(X, documents_columns=False)


def check_vb_params(params: dict, seed=None, mode: str | None = None) -> None:
    """Check the VB settings a run spec gives (``chunksize``, ``iterations``, ``decay``,
    ``offset``; other keys are checked by the spec): ``chunksize`` None or a positive
    integer, ``iterations`` a positive integer (not a bool, not a string), ``decay`` (κ) in
    [0, 1] and ``offset`` (τ0) in [1, ∞) (below 1 the first step would exceed ρ = 1), and in
    ``mode`` "batch" neither of the last two (they would have no effect); ``seed`` when given:
    an integer in 0..:data:`VB_SEED_MAX`.  A value None counts as not given.  The one check,
    used by :func:`iter_vb` and by :meth:`same.experiments.spec.RunSpec.validate`.

    Raises
    ------
    ValueError
        Naming the parameter and the value, e.g. ``chunksize must be a positive integer
        (documents per chunk), got 0``, ``seed 4294967296 is outside gensim's seed range
        0..4294967295 (numpy RandomState)``, ``decay has no effect in batch mode (ρ = 1),
        got 0.7``.
    """
    import numbers

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or not 0 <= seed <= VB_SEED_MAX):
        raise ValueError(f"seed {seed!r} is outside gensim's seed range 0..{VB_SEED_MAX} "
                         "(numpy RandomState)")
    given = {k: v for k, v in params.items() if v is not None}
    if mode == "batch" and (online := [k for k in _ONLINE_ONLY if k in given]):
        raise ValueError(f"{online[0]} has no effect in batch mode (ρ = 1), got "
                         f"{given[online[0]]!r}")
    if "chunksize" in given:
        positive_int("chunksize", given["chunksize"], "documents per chunk")
    if "iterations" in given:
        positive_int("iterations", given["iterations"], "E-step iterations per document")
    if "decay" in given:
        number_in("decay", given["decay"], 0.0, 1.0, "κ, the step size's decay")
    if "offset" in given:
        number_in("offset", given["offset"], 1.0, float("inf"), "τ0, the step size's offset")


def iter_vb(X: sp.csr_matrix, *, n_topics: int, doc_topic_prior: float, topic_word_prior: float,
            random_state: int, passes: int = 20, mode: str = "online",
            chunksize: int | None = None, iterations: int = 50, decay: float | None = None,
            offset: float | None = None):
    """Train gensim LdaModel (``mode`` "online" or "batch"), yielding (φ, info) after each pass.

    Parameters
    ----------
    X : csr_matrix (n_docs, n_words) counts
    chunksize : documents per E-step chunk (and per M-step when online); default ceil(D/20)
    iterations : E-step iterations per document (gensim default 50)
    decay, offset : κ, τ0 of ρ_t = (τ0 + t)^−κ (gensim's names); default gensim's 0.5, 1
        (:data:`VB_DECAY`, :data:`VB_OFFSET`); online only

    Yields
    ------
    (φ of shape (n_topics, n_words), float64, rows sum to 1; info dict: pass, iteration,
    samples_per_word (None), train_seconds (time between yields excluded), tokens_seen,
    native_score (None))

    Raises
    ------
    ValueError
        Unknown mode, passes < 1, or a bad chunksize, iterations, decay, offset or seed
        (:func:`check_vb_params`).
    """
    from gensim.models import LdaModel

    if mode not in ("online", "batch"):
        raise ValueError(f"mode must be 'online' or 'batch', got {mode!r}")
    positive_int("passes", passes)
    check_vb_params({"chunksize": chunksize, "iterations": iterations, "decay": decay,
                     "offset": offset}, seed=random_state, mode=mode)
    from same.data.count_matrix import validate_counts  # the input gate, before any C code

    X = validate_counts(X, "X", require_tokens=False)
    n_docs, n_words = X.shape
    corpus = _bow(X)
    chunksize = paper_batch_size(n_docs) if chunksize is None else int(chunksize)
    n_tokens = float(X.sum())
    online = mode == "online"
    id2word = {i: str(i) for i in range(n_words)}  # num_terms = W: φ covers the full vocabulary
    model = LdaModel(num_topics=n_topics, id2word=id2word, alpha=np.full(n_topics, doc_topic_prior),
                     eta=topic_word_prior, chunksize=chunksize,
                     decay=(VB_DECAY if decay is None else decay) if online else 0.0,
                     offset=VB_OFFSET if offset is None else offset, iterations=iterations,
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
