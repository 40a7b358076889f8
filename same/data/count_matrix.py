"""The one input gate of document–word count matrices, before any compiled code reads them.

A count matrix is documents × words, non-negative and finite; dense arrays and every SciPy
sparse format are accepted and returned as canonical CSR (sorted, unique indices, no stored
zeros).  The caller's matrix is never modified.  :func:`validate_counts` checks, in order:

1. the structure of a sparse matrix's raw parts (``check_compressed`` for CSR, CSC, BSR
   and LIL's lists flattened to CSR; row and column ranges for COO, and for DOK and DIA
   after SciPy's own conversion to COO), before any SciPy or scikit-learn call that trusts
   them: a non-monotone ``indptr`` or an index ≥ W crashes compiled code (SIGSEGV, or heap
   corruption seen as SIGABRT), it does not raise;
2. the values, by scikit-learn's ``check_array`` and ``check_non_negative``: 2-D, at least
   one document and one word, a real numeric dtype (bool counts as 0/1; an object array's
   every entry a real number, each DataFrame column's dtype a number type, checked first:
   scikit-learn's conversion ends in a TypeError), finite, ≥ 0; and no count above
   :data:`MAX_COUNT`;
3. duplicates summed in int64 (float64 for floats) — never in a small dtype, where uint8
   128 + 128 is 0 — and a small dtype widened, so that every matrix leaves the gate as
   int32, int64, float32 or float64.  A canonical CSR matrix of one of those four dtypes
   (every split the runner trains on) is not copied: its arrays pass through unchanged.

:func:`same.data.csr_structure.check_compressed` is the one structural check (also of our ``.npz``
artefacts and in the kernels' dispatch).
"""

from __future__ import annotations

import itertools
import re
import warnings
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from .csr_structure import CountsError, check_compressed, check_part, check_range

__all__ = ["validate_counts", "check_counts", "canonical_csr", "check_count_bound",
           "word_totals", "doc_totals", "CountsError", "CountsWarning", "MAX_COUNT"]

#: The largest count accepted: every whole number up to 2^53 is exact in float64 (the
#: evaluator's arithmetic), and sums of such counts cannot overflow int64 or float64.
MAX_COUNT = 2 ** 53
#: The dtypes a matrix leaves the gate with (others are widened: int64, or float64).
_KEPT = tuple(np.dtype(t) for t in ("int32", "int64", "float32", "float64"))


class CountsWarning(UserWarning):
    """An estimator was given values that are not whole token counts, or an m that draws
    far below one sample per token (:func:`check_count_bound`).

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


def _sound(X, name: str):
    """X with a sparse matrix's parts checked before anything trusts them: CSR (and LIL,
    flattened to CSR) as a fresh CSR object over the same arrays (no cached flags), every
    other format as COO (CSC and BSR after their compressed structure is checked, DOK and DIA
    by SciPy's own conversion, which trusts nothing we have not checked)."""
    if not sp.issparse(X):
        return _sound_dense(X, name)
    if X.ndim != 2:
        raise CountsError(f"{name}: expected a 2-D count matrix (documents × words), got "
                          f"shape {X.shape}")
    n_docs, n_words = X.shape
    if X.format == "lil":  # its lists are flattened as they are: their lengths must agree
        if (len(X.rows) != n_docs or len(X.data) != n_docs
                or any(len(i) != len(v) for i, v in zip(X.rows, X.data))):
            raise CountsError(f"{name}: LIL rows and values differ in length")
        X = X.tocsr()
    data = getattr(X, "data", None)  # DOK has none
    if X.format in ("csr", "csc"):
        check_part(data, "data", name, 1, None)
        n_major, n_minor = (n_docs, n_words) if X.format == "csr" else (n_words, n_docs)
        check_compressed(X.indptr, X.indices, n_major, n_minor, name, nnz=data.shape[0],
                         axes=("row", "word") if X.format == "csr" else ("column", "document"))
        if X.format == "csr":
            return sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape, copy=False)
    elif X.format == "bsr":
        (r, c), shape = X.blocksize, (X.data.shape[0], *X.blocksize)
        if data.ndim != 3 or data.shape != shape or n_docs % r or n_words % c:
            raise CountsError(f"{name}: BSR blocks of shape {data.shape[1:]} do not tile "
                              f"{X.shape} in blocks of {X.blocksize}")
        check_compressed(X.indptr, X.indices, n_docs // r, n_words // c, name,
                         nnz=data.shape[0], axes=("block row", "block column"))
    elif X.format == "dia":
        offsets = check_part(X.offsets, "offsets", name, 1, "iu")
        if data.ndim != 2 or data.shape[0] != offsets.shape[0]:
            raise CountsError(f"{name}: DIA data of shape {data.shape} for {offsets.shape[0]} "
                              "diagonals")
    X = X.tocoo()
    row, col = (check_part(a, n, name, 1, "iu") for a, n in ((X.row, "row"), (X.col, "col")))
    check_part(X.data, "data", name, 1, None)
    if not row.shape == col.shape == X.data.shape:
        raise CountsError(f"{name}: COO row, col and data differ in length ({row.shape[0]}, "
                          f"{col.shape[0]}, {X.data.shape[0]})")
    check_range(row, n_docs, "document", name, CountsError)
    check_range(col, n_words, "word", name, CountsError)
    return sp.coo_matrix((X.data, (row, col)), shape=X.shape, copy=False)


def _sound_dense(X, name: str):
    """A dense X (array, np.matrix, masked array, nested lists, DataFrame) whose values can be
    counts: no masked entries (a mask would be dropped silently), a real number type (no
    dates, durations, text or records; a DataFrame's every column), an object array of
    numbers only (:func:`_check_objects`).  Complex, NaN and negative values are left to
    scikit-learn's messages."""
    if isinstance(X, np.ma.MaskedArray):
        if np.ma.getmaskarray(X).any():
            raise CountsError(f"{name}: a masked array with masked entries; counts have no "
                              "missing values (fill them first, e.g. X.filled(0))")
        X = X.data
    if isinstance(X, np.matrix):
        X = np.asarray(X)
    dtypes = getattr(X, "dtypes", None)  # a DataFrame: each column's own type, before numpy
    if not isinstance(X, np.ndarray) and hasattr(dtypes, "items"):  # promotes them together
        _check_column_names(list(getattr(X, "columns", ())), name)
        for column, dtype in dtypes.items():
            if getattr(dtype, "kind", "O") not in "biufcO":
                raise CountsError(f"{name}: column {column!r} has dtype {dtype}, not a number "
                                  "type; counts are integers or floats")
    try:
        a = X if isinstance(X, np.ndarray) else np.asarray(X)
    except (ValueError, TypeError):  # ragged: scikit-learn's check names it
        return X
    if a.dtype.kind == "O":
        _check_objects(a, name)
    elif a.dtype.kind not in "biufc":
        raise CountsError(f"{name}: has dtype {a.dtype}, not a number type; counts are "
                          "integers or floats")
    return X


def _check_column_names(columns: list, name: str) -> None:
    """A DataFrame's column names: each given once, and all text or none (scikit-learn
    records text names as ``feature_names_in_`` and raises a multi-line TypeError for a mix;
    a name given twice was its multi-line "Expected unique column names")."""
    first: dict = {}
    for i, c in enumerate(columns):
        key = (type(c) is str, c)
        if key in first:
            raise CountsError(f"{name}: column name {c!r} is given twice (columns "
                              f"{first[key]} and {i}); give each column its own name")
        first.setdefault(key, i)
    text = [c for c in columns if isinstance(c, str)]
    other = [c for c in columns if not isinstance(c, str)]
    if text and other:
        kinds = ", ".join(sorted({type(c).__name__ for c in columns}))
        raise CountsError(f"{name}: column names of more than one type ({kinds}: {other[0]!r} "
                          f"beside {text[0]!r}); name every column with text, or none")


def _is_number_type(t: type) -> bool:
    """Whether an object array's entries of type ``t`` are read as numbers of tokens: real
    numbers (Python's, NumPy's, Fraction, Decimal) and None (a missing value: scikit-learn
    names it as NaN); not dates or durations (numpy's timedelta64 is an integer type), text,
    complex numbers, containers or anything else."""
    import decimal
    import numbers

    if t is type(None):
        return True
    if issubclass(t, (np.datetime64, np.timedelta64, str, bytes)):
        return False
    return issubclass(t, (numbers.Real, np.bool_, decimal.Decimal))


def _check_objects(a: np.ndarray, name: str) -> None:
    """An object array's entries are numbers of tokens: each distinct type is judged once
    (:func:`_is_number_type`), then a whole number too large for float64 (which scikit-learn's
    conversion would end in an OverflowError) is named.

    Raises
    ------
    CountsError
        ``X: holds datetime.timedelta(days=1) (timedelta), not a number of tokens``, or the
        count above :data:`MAX_COUNT` (as :func:`_refuse_large` words it).
    """
    from same.io.textinput import int_text

    bad = next((t for t in {type(v) for v in a.flat} if not _is_number_type(t)), None)
    if bad is not None:
        v = next(v for v in a.flat if type(v) is bad)
        text = repr(v) if len(repr(v)) <= 60 else f"{repr(v)[:57]}..."
        raise CountsError(f"{name}: holds {text} ({bad.__name__}), not a number of tokens")
    try:
        a.astype(np.float64)
    except OverflowError:
        for i, v in enumerate(a.flat):
            try:
                float(v)
            except OverflowError:
                where = (f" of document {i // a.shape[1]}, word {i % a.shape[1]}"
                         if a.ndim == 2 else "")
                if v < 0:
                    raise CountsError(f"{name}: holds {int_text(v)} ({type(v).__name__}), not "
                                      "a number of tokens") from None
                raise CountsError(f"{name}: count {int_text(v)}{where} exceeds 2^53 = "
                                  f"{MAX_COUNT}, the largest whole number held exactly in "
                                  "float64") from None


@contextmanager
def _one_line(name: str):
    """A ValueError of the block (scikit-learn's may span lines) as one line naming ``name``,
    without the array it prints (lines not starting with a letter, or with ``array=``)."""
    try:
        yield
    except ValueError as exc:
        text = [ln.strip() for ln in str(exc).splitlines()
                if ln[:1].isalpha() and not ln.startswith("array=")]
        line = " ".join(text) or type(exc).__name__
        if not re.search(rf"\b{re.escape(name)}\b", line):
            line = f"{name}: {line}"
        raise CountsError(line) from None


def _refuse_large(X, name: str) -> None:
    """:class:`CountsError` naming the first count above :data:`MAX_COUNT`, if any."""
    data = X.data if sp.issparse(X) else X
    if data.size == 0 or data.dtype.kind == "b" or not data.max().item() > MAX_COUNT:
        return
    coo = sp.coo_matrix(X)
    limit = np.float64(MAX_COUNT) if data.dtype.kind == "f" else MAX_COUNT  # (no float16 2^53)
    j = int(np.argmax(coo.data > limit))
    v = coo.data[j].item()
    raise CountsError(f"{name}: count {v if isinstance(v, int) else f'{v:.6g}'} of document "
                      f"{int(coo.row[j])}, word {int(coo.col[j])} exceeds 2^53 = {MAX_COUNT}, "
                      "the largest whole number held exactly in float64")


def _features(estimator, X, reset: bool, name: str) -> None:
    """scikit-learn's n_features_in_ and feature_names_in_ record (reset) or check, with
    the argument's own name in its "X has 6 features" message."""
    from sklearn.utils.validation import validate_data

    if not reset:
        _check_names_as_fit(getattr(estimator, "feature_names_in_", None), X, name)
    try:
        validate_data(estimator, X, skip_check_array=True, reset=reset)
    except ValueError as exc:
        msg = str(exc)
        if name == "X" or not msg.startswith("X has "):
            raise
        raise CountsError(name + msg[1:]) from None


def _check_names_as_fit(fit_names, X, name: str) -> None:
    """A DataFrame's column names against those fit recorded, in order: the first that
    differs named in one line (scikit-learn's "The feature names should match" spans lines)."""
    columns = getattr(X, "columns", None)
    if fit_names is None or columns is None or not all(isinstance(c, str) for c in columns):
        return  # no names on one side: scikit-learn's warning
    fit_names, given = list(fit_names), list(columns)
    for i, (want, got) in enumerate(itertools.zip_longest(fit_names, given)):
        if want != got:
            is_ = "is missing" if got is None else f"is {got!r}"
            had = "none" if want is None else repr(want)
            raise CountsError(f"{name}: column {i} {is_}, where fit had {had} (fit had "
                              f"{len(fit_names)} columns, {name} has {len(given)}); give the "
                              "columns fit was given, in its order")


def validate_counts(X, name: str = "X", require_tokens: bool = True, *, estimator=None,
                    reset: bool = True, min_docs: int = 1) -> sp.csr_matrix:
    """Check a document–word count matrix and return it as canonical CSR: the input gate.

    Parameters
    ----------
    X : {array-like, sparse matrix (any SciPy format), CuPy sparse matrix} of shape
        (n_docs, n_words), non-negative counts
    name : str — the argument's name in messages (X, X_heldout, counts, observed, ...)
    require_tokens : bool — refuse a matrix whose counts are all zero
    estimator : estimator or None — record (``reset``) or check its ``n_features_in_`` and
        ``feature_names_in_`` (scikit-learn's ``validate_data``), and name it in messages
    min_docs : int — fewest documents accepted (0 for the evaluator)

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_docs, n_words), sorted unique indices, no stored
    zeros, dtype int32, int64, float32 or float64 (bool, int8/16, uint8/16/32/64 → int64,
    float16 → float64; summed duplicates → int64 or float64).  X's own arrays when X is
    such a matrix already.

    Raises
    ------
    CountsError (a ValueError)
        One line naming ``name`` and the first fault: malformed sparse structure (``indptr``
        not 1-D integer, of the wrong length, not from 0 to nnz, decreasing; an index out
        of range; non-integer indices), not 2-D, no documents or words, a dtype that is no
        number (a DataFrame column's included), an object array entry that is no number
        (text, dates, durations, complex numbers, containers, ...), complex, NaN or
        infinite, negative (scikit-learn's messages), a count above :data:`MAX_COUNT`, a
        vocabulary size other than the fitted estimator's, or no tokens.
    """
    from sklearn.utils.validation import check_array, check_non_negative

    if not sp.issparse(X):
        try:
            import cupyx.scipy.sparse as csp

            if csp.issparse(X):
                X = X.get()
        except ImportError:
            pass
    raw = X
    with _one_line(name):
        X = _sound(X, name)
        X = check_array(X, accept_sparse=("csr", "coo"), dtype="numeric", input_name=name,
                        ensure_min_samples=min_docs)
        if X.nnz if sp.issparse(X) else X.size:  # (scikit-learn fails on an empty array)
            check_non_negative(X, f"{type(estimator).__name__} ({name})"
                               if estimator is not None else f"the count matrix {name}")
    if estimator is not None:
        _features(estimator, raw, reset, name)
    _refuse_large(X, name)
    return canonical_csr(X, name, require_tokens)


def canonical_csr(X, name: str = "X", require_tokens: bool = True) -> sp.csr_matrix:
    """A checked matrix (dense, CSR or COO; :func:`validate_counts`) as canonical CSR.

    Duplicates are summed in a widened copy: int64 for integers and booleans (float64 when
    their largest value times nnz could reach 2^63), float64 for floats; other dtypes than
    int32/int64/float32/float64 are widened likewise; a canonical CSR of those passes as is.

    Raises
    ------
    CountsError
        A summed count above :data:`MAX_COUNT`; ``require_tokens`` and X holds no tokens.
    """
    if not sp.issparse(X):  # SciPy holds no float16: widen first
        X = sp.csr_matrix(X if X.dtype in _KEPT else
                          X.astype(np.float64 if X.dtype.kind == "f" else np.int64))
    if X.format != "csr" or not X.has_canonical_format:
        big = X.nnz and X.dtype.kind != "f" and int(X.data.max()) * X.nnz >= 2 ** 63
        X = X.astype(np.float64 if X.dtype.kind == "f" or big else np.int64, copy=True)
        X = X.tocsr()
        X.sum_duplicates()
        _refuse_large(X, name)
    elif X.dtype not in _KEPT:
        X = X.astype(np.float64 if X.dtype.kind == "f" else np.int64)
    if X.nnz and not np.all(X.data):
        X = X.copy()
        X.eliminate_zeros()
    if require_tokens and X.nnz == 0:
        raise CountsError(f"{name} holds no tokens: every count is zero "
                          f"(shape {X.shape[0]} documents × {X.shape[1]} words)")
    return X


def check_counts(estimator, X, *, reset: bool, name: str = "X",
                 require_tokens: bool = True) -> sp.csr_matrix:
    """:func:`validate_counts` for an estimator's method, which then warns
    (:class:`CountsWarning`) when X holds values that are not whole numbers.

    Records (``reset=True``) or checks (``reset=False``) ``n_features_in_`` and
    ``feature_names_in_`` on ``estimator``; with ``reset=False`` X's vocabulary size must
    be the fitted one ("X has 6 features, but SameLDA is expecting 5 features as input."),
    so every word index of the returned matrix is below the fitted W.
    """
    X = validate_counts(X, name, require_tokens, estimator=estimator, reset=reset)
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

    packages = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # same/
                os.path.dirname(os.path.abspath(sklearn.__file__)))
    frame, level = sys._getframe(2), 2  # the function that calls warnings.warn, level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(packages):
        frame, level = frame.f_back, level + 1
    return level


#: Expected draws per token below which SAME trains (next to) nothing (:func:`check_count_bound`).
MIN_DRAWS_PER_TOKEN = 0.01


def check_count_bound(X, bounds, n_samples: float, m_schedule: str) -> None:
    """Refuse settings whose expected counts per P cell could overflow int32; warn where
    they are far below one draw per token.

    E[P_wk] ≤ m_t × (occurrences of word w in the minibatch), and m_t ≤ 2 m under annealing.
    Every token of X draws m samples on average over the fit, so ``n_copies=1e-6`` trains a
    φ that stays (next to) uniform without an error, as 1e-6 · X does
    (:func:`_warn_if_not_counts`): the same class, the same :class:`CountsWarning`.

    Raises
    ------
    ValueError
        When 2 m × (largest per-minibatch word count) reaches 2^30.

    Warns
    -----
    CountsWarning
        m below :data:`MIN_DRAWS_PER_TOKEN` draws per token, naming n_copies and X's tokens.
    """
    if n_samples < MIN_DRAWS_PER_TOKEN:
        total = float(X.data.sum(dtype=np.float64))
        warnings.warn(f"n_copies={n_samples:g} draws {n_samples:g} samples per token on "
                      f"average: X's {total:.4g} tokens draw {n_samples * total:.3g} samples "
                      "in a pass over them, so φ barely moves from its start; give n_copies of "
                      f"at least {MIN_DRAWS_PER_TOKEN:g}",
                      CountsWarning, stacklevel=_outside_package())
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
