"""The evaluator's input checks, shared by :mod:`same.model.evaluate` and
:mod:`same.model.lefttoright`: α, φ (rows on the simplex) and sparse count arguments through
the one input gate (:func:`same.data.count_matrix.validate_counts`)."""

from __future__ import annotations

import scipy.sparse as sp

from same.data.count_matrix import validate_counts

from .backend import array_module, sparse_module, to_backend

__all__ = ["check_doc_topic_prior", "check_topic_word"]


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
        Not an array.
    ValueError
        With the offending property (dtype, rank, NaN/inf, negative) and, for rows, the
        first bad topic index.
    """
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
