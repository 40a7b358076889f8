"""The evaluator's input checks, shared by :mod:`same.model.evaluate` and
:mod:`same.model.lefttoright`: α, φ (rows on the simplex), the split, and sparse count
arguments through the one input gate (:func:`same.data.count_matrix.validate_counts`); and
:func:`check_prior_totals`, the float32 bound on K·α and W·β that the sampler (both
backends), the runner's spec and the evaluator share."""

from __future__ import annotations

import scipy.sparse as sp

from same.data.count_matrix import validate_counts

from .backend import array_module, sparse_module, to_backend

__all__ = ["check_doc_topic_prior", "check_topic_word", "check_prior_totals", "PRIOR_TOTAL_MAX",
           "check_heldout_split"]

#: The largest K·α or W·β allowed: 2^127, half float32's largest number, so that θ's and φ̂'s
#: totals (the prior's plus the counts') stay finite where the sampler keeps them in float32
#: (θ, μ and IncNorm's row totals; β = 1e38 over 80 words made them inf, and φ kept its
#: random start without a word).
PRIOR_TOTAL_MAX = 2.0 ** 127


def check_prior_totals(n_topics: int, doc_topic_prior, n_words: int | None = None,
                       topic_word_prior=None) -> None:
    """Refuse α with K·α, or β with W·β, above :data:`PRIOR_TOTAL_MAX` (either pair may be
    left out: β with ``n_words`` None).  The priors are positive finite numbers already.

    Raises
    ------
    ValueError
        ``doc_topic_prior=1e+308 is too large for 4 topics: 4 × 1e+308 is above 2^127 ≈
        1.7e+38, beyond what float32 totals hold; give doc_topic_prior of at most 4.25e+37``.
    """
    from same.io.textinput import int_text

    for name, value, n, unit in (("doc_topic_prior", doc_topic_prior, n_topics, "topics"),
                                 ("topic_word_prior", topic_word_prior, n_words, "words")):
        value = value.item() if hasattr(value, "item") else value  # a NumPy scalar: exact
        if value is None or n is None or _product(int(n), value) <= PRIOR_TOTAL_MAX:
            continue
        shown = int_text(value) if isinstance(value, int) else f"{value:g}"
        count = int_text(n)
        raise ValueError(f"{name}={shown} is too large for {count} {unit}: {count} × {shown} "
                         f"is above 2^127 ≈ {PRIOR_TOTAL_MAX:.2g}, beyond what float32 totals "
                         f"hold; give {name} of at most {_down(PRIOR_TOTAL_MAX, int(n)):.4g}")


def _product(n: int, value) -> float:
    try:
        return n * value
    except OverflowError:  # a float times an int beyond a float's range
        return float("inf")


def _down(total: float, n: int) -> float:
    """total / n cut (not rounded) to 4 significant digits: a bound said "at most" that holds."""
    import math

    x = total / n if n.bit_length() < 1000 else 0.0
    if not x > 0:
        return 0.0
    q = 10.0 ** (math.floor(math.log10(x)) - 3)
    return math.floor(x / q) * q


def check_doc_topic_prior(doc_topic_prior) -> float:
    """α as a float: a positive finite real scalar (a Python int of any size is one: numpy's
    isfinite refuses those beyond 64 bits); a bool, array, string or NaN is not.

    Raises
    ------
    ValueError
        ``doc_topic_prior must be a positive finite number, got ...``.
    """
    import numpy as np

    try:
        alpha = float(doc_topic_prior) if np.isscalar(doc_topic_prior) and not isinstance(
            doc_topic_prior, (bool, str, bytes)) else np.nan
    except (TypeError, ValueError, OverflowError):
        alpha = np.nan
    if not (np.isfinite(alpha) and alpha > 0):
        from same.io.textinput import int_text

        shown = (int_text(doc_topic_prior) if isinstance(doc_topic_prior, int)
                 and not isinstance(doc_topic_prior, bool) else repr(doc_topic_prior))
        raise ValueError(f"doc_topic_prior must be a positive finite number, got {shown}")
    return alpha


def check_topic_word(topic_word, n_words: int | None = None, atol: float = 1e-4):
    """Validate φ: 2-D, finite, non-negative, rows summing to 1 (± ``atol``).

    Raises
    ------
    TypeError
        Not an array, or a sparse matrix (φ is dense: its rows are distributions).
    ValueError
        With the offending property (dtype, rank, NaN/inf, negative) and, for rows, the
        first bad topic index.
    """
    if sp.issparse(topic_word) or sparse_module(array_module(topic_word)).issparse(topic_word):
        raise TypeError(f"topic_word must be a dense NumPy or CuPy array (n_topics, n_words), "
                        f"got a sparse {type(topic_word).__name__}; pass topic_word.toarray()")
    if not (hasattr(topic_word, "ndim") and hasattr(topic_word, "dtype")):
        raise TypeError(f"topic_word must be a NumPy or CuPy array (n_topics, n_words), got "
                        f"{type(topic_word).__name__}")
    if topic_word.dtype.kind not in "iuf":
        raise ValueError(f"topic_word has dtype {topic_word.dtype}, expected real numbers")
    xp = array_module(topic_word)
    if topic_word.ndim != 2:
        raise ValueError(f"topic_word must be 2-D (n_topics, n_words), got shape {topic_word.shape}")
    if n_words is not None and topic_word.shape[1] != n_words:
        raise ValueError(f"topic_word has {topic_word.shape[1]} words but the data has {n_words}")
    if not bool(xp.all(xp.isfinite(topic_word))):
        raise ValueError("topic_word contains NaN or inf")
    if bool(xp.any(topic_word < 0)):
        raise ValueError("topic_word contains negative entries")
    sums = topic_word.sum(axis=1)
    bad = xp.abs(sums - 1) > atol
    if bool(xp.any(bad)):
        k = int(xp.argmax(bad))
        raise ValueError(f"topic_word rows must sum to 1; row {k} sums to {float(sums[k]):.6g}")


def check_heldout_split(split) -> None:
    """The evaluator's ``split``: a :class:`same.data.split.HeldOutSplit` (a
    :class:`~same.data.split.ValidationSplit` is one).

    Raises
    ------
    TypeError
        ``split must be a HeldOutSplit (load it with same.data.split.load_split), got str``.
    """
    from same.data.split import HeldOutSplit

    if not isinstance(split, HeldOutSplit):
        raise TypeError(f"split must be a HeldOutSplit (load it with "
                        f"same.data.split.load_split), got {type(split).__name__}")


def _as_csr(counts, xp, n_words, name):
    """A sparse count argument through the input gate (:func:`same.data.count_matrix.validate_counts`),
    as canonical CSR on backend ``xp``; never modified in place.

    Raises
    ------
    TypeError
        ``counts`` is not a SciPy (or, with CuPy φ, CuPy) sparse matrix.
    ValueError
        Its vocabulary size is not φ's, or it fails the gate (malformed structure, an index
        out of range, NaN/inf, negative or complex counts): one line naming ``name``.
    """
    if not (sp.issparse(counts) or sparse_module(xp).issparse(counts)):
        raise TypeError(f"{name} must be a sparse (CSR) matrix, got {type(counts).__name__}")
    if len(counts.shape) == 2 and counts.shape[1] != n_words:
        raise ValueError(f"{name} has {counts.shape[1]} words but topic_word has {n_words}")
    return to_backend(validate_counts(counts, name, require_tokens=False, min_docs=0), xp)
