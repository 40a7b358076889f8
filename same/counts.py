"""Validation of document–word count matrices (the input of every method).

A count matrix is documents × words, non-negative and finite; dense arrays and
any SciPy sparse format are accepted and converted to CSR with sorted,
unique indices and no stored zeros.  The caller's matrix is never modified.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array, check_non_negative, validate_data

__all__ = ["validate_counts", "check_counts", "canonical_csr", "check_count_bound",
           "word_totals", "doc_totals", "CountsWarning"]


class CountsWarning(UserWarning):
    """An estimator was given values that are not whole token counts.

    SAME (paper Algorithm 3) draws m samples per token of c_dw, so 1e-6 · X carries almost
    no tokens and trains a near-uniform φ without any error; tf-idf weights are read as
    token counts too.  Integer-valued floats are counts and never warn."""

#: Nonzeros per block of the blockwise reductions (bounded temporaries on a mapped corpus).
_NNZ_BLOCK = 1 << 18


def _row_blocks(X):
    """Consecutive row slices of X of about ``_NNZ_BLOCK`` nonzeros each (at least one row)."""
    n = X.shape[0]
    a = 0
    while a < n:
        b = int(np.searchsorted(X.indptr, X.indptr[a] + _NNZ_BLOCK, side="right")) - 1
        b = min(max(b, a + 1), n)
        yield X[a:b]
        a = b


def word_totals(X: sp.csr_matrix) -> np.ndarray:
    """Σ_d c_dw per word, (n_words,) float64, a block of rows at a time (``X.sum(axis=0)``
    would allocate int64 copies of the whole matrix)."""
    out = np.zeros(X.shape[1])
    for blk in _row_blocks(X):
        out += np.bincount(blk.indices, weights=blk.data, minlength=X.shape[1])
    return out


def doc_totals(X: sp.csr_matrix) -> np.ndarray:
    """Σ_w c_dw per document, (n_docs,) float64, a block of rows at a time."""
    return np.concatenate([np.asarray(blk.sum(axis=1), dtype=np.float64).ravel()
                           for blk in _row_blocks(X)] or [np.zeros(0)])


def canonical_csr(X, name: str = "X", require_tokens: bool = True) -> sp.csr_matrix:
    """CSR with sorted, summed indices and no stored zeros, copying only when needed.

    Raises
    ------
    ValueError
        ``require_tokens`` and X holds no tokens at all (every count is zero).
    """
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.nnz and not np.all(X.data):
        X = X.copy()
        X.eliminate_zeros()
    if require_tokens and X.nnz == 0:
        raise ValueError(f"{name} holds no tokens: every count is zero "
                         f"(shape {X.shape[0]} documents × {X.shape[1]} words)")
    return X


def validate_counts(X, name: str = "X", require_tokens: bool = True) -> sp.csr_matrix:
    """Check a document–word count matrix and return it as canonical CSR.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_docs, n_words), non-negative counts
    name : str — used in error messages
    require_tokens : bool — refuse a matrix whose counts are all zero

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_docs, n_words), X's numeric dtype

    Raises
    ------
    ValueError
        Empty, not 2-D, negative, NaN/inf or complex counts, or no tokens; the message
        names ``name``.
    """
    if not sp.issparse(X):
        try:
            import cupyx.scipy.sparse as csp

            if csp.issparse(X):
                X = X.get()
        except ImportError:
            pass
    X = check_array(X, accept_sparse="csr", dtype="numeric", input_name=name)
    check_non_negative(X, f"the count matrix {name}")
    return canonical_csr(X, name, require_tokens)


def check_counts(estimator, X, *, reset: bool, name: str = "X",
                 require_tokens: bool = True) -> sp.csr_matrix:
    """:func:`validate_counts` through scikit-learn's ``validate_data``.

    Records (``reset=True``) or checks (``reset=False``) ``n_features_in_`` and
    ``feature_names_in_`` on ``estimator``.
    """
    X = validate_data(estimator, X, accept_sparse="csr", dtype="numeric", reset=reset)
    check_non_negative(X, f"{type(estimator).__name__} ({name})")
    X = canonical_csr(X, name, require_tokens)
    _warn_if_not_counts(X, name, type(estimator).__name__)
    return X


def _warn_if_not_counts(X: sp.csr_matrix, name: str, who: str) -> None:
    """:class:`CountsWarning` when X holds a value that is not a whole number."""
    if X.dtype.kind != "f" or not X.nnz:
        return
    frac = np.flatnonzero(np.mod(X.data, 1))
    if frac.size:
        total, docs = float(X.data.sum(dtype=np.float64)), X.shape[0]
        warnings.warn(f"{name} holds non-integer values (e.g. {X.data[frac[0]]:g}): {who} reads "
                      f"each as a number of tokens, so {name} holds {total:.4g} tokens in "
                      f"{docs} documents ({total / docs:.3g} per document); pass word counts",
                      CountsWarning, stacklevel=_outside_package())


def _outside_package() -> int:
    """The ``stacklevel`` of a warning raised by this module's caller that names the first
    frame outside the ``same`` package and scikit-learn (whose ``_fit_context`` wraps fit):
    the user's call of fit, partial_fit, transform..."""
    import os
    import sys

    import sklearn

    packages = (os.path.dirname(os.path.abspath(__file__)),
                os.path.dirname(os.path.abspath(sklearn.__file__)))
    frame, level = sys._getframe(2), 2  # the function that calls warnings.warn, level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(packages):
        frame, level = frame.f_back, level + 1
    return level


def check_count_bound(X, bounds, n_samples: float, m_schedule: str) -> None:
    """Refuse settings whose expected counts per P cell could overflow int32.

    E[P_wk] ≤ m_t × (occurrences of word w in the minibatch), and m_t ≤ 2 m under annealing.

    Raises
    ------
    ValueError
        When 2 m × (largest per-minibatch word count) reaches 2^30.
    """
    peak = 0.0
    for a, b in bounds:
        block = X[a:b]
        peak = max(peak, float(np.bincount(block.indices, weights=block.data,
                                           minlength=X.shape[1]).max(initial=0.0)))
    m_max = n_samples * (1.0 if m_schedule == "constant" else 2.0)
    if m_max * peak >= 2.0 ** 30:
        raise ValueError(f"n_copies={n_samples:g} is too large for int32 counts: a word occurs "
                         f"{peak:g} times in one minibatch, so P could exceed 2^30 per cell; "
                         "use smaller minibatches (batch_size) or a smaller m")
