"""Hypothesis properties over the estimator's input space, run in a child process.

Run by tests/data/test_input_properties.py (a native crash then ends this process with a signal;
the parent names the example, which is written to stderr before each call)::

    python tests/data/input_properties_driver.py [SCALE]

Three properties, each over drawn matrices (shapes 0..6 documents × 1..6 words, empty rows
and columns; every integer, unsigned, float and bool dtype; CSR, CSC, COO, LIL, DOK, BSR, DIA
matrices and arrays, dense ndarrays and np.matrix; duplicated and unsorted coordinates;
counts 0, small, near the dtype's maximum; and at most one fault: an index ≥ W or
negative, a broken ``indptr``, NaN, inf, a negative or too large count, or a vocabulary size
other than the fitted model's):

- ``estimator``: SameLDA.fit / partial_fit / transform / score either raise the documented
  ValueError (one line, naming X; which one is predicted from the drawn fault and counts)
  or succeed with exactly the result of the same counts given as a clean int64 array;
- ``evaluator``: same.model.evaluate.fold_in / bidmach_loglik and same.data.count_matrix.validate_counts
  likewise for sparse ``counts`` (documents may be 0);
- ``kernels``: same.model.kernels.sddmm / sample_accumulate / summed_t_sweeps / summed_p_sweep
  given raw CSR arrays (any index dtype, any indptr) either refuse them in one line or, when
  an independent check finds them well formed, return μ equal to the dense θφᵀ at the
  nonzeros (and Σ T = Σ P).

Prints one JSON object: per property, the examples run and how many ended in each outcome.
SCALE (default 1) multiplies the examples (the CI configuration is SCALE = 1, fixed seed).
numba runs on one thread here (NUMBA_NUM_THREADS, unless set): no result depends on it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import types
import warnings
from collections import Counter

# one numba thread: a parallel launch per tiny call costs ~1 ms on a shared 2-core machine,
# and no result depends on the thread count (tests/model/test_kernels.py)
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = {"estimator": 600, "evaluator": 500, "kernels": 500}
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "bool")
FORMATS = ("csr", "csr_array", "csc", "coo", "coo_array", "bsr", "lil", "dok", "dia", "dense",
           "matrix")
DUPLICATES = ("csr", "csr_array", "csc", "coo", "coo_array", "bsr")  # may hold duplicates
STRUCTURAL = ("index_high", "index_negative", "indptr_decrease", "indptr_start", "indptr_end",
              "indptr_short")
VALUE = ("nan", "inf", "negative", "huge")
MAX_COUNT = 2 ** 53
OUTCOMES: dict[str, Counter] = {"estimator": Counter(), "evaluator": Counter(),
                                "kernels": Counter()}


def values(dtype: np.dtype):
    """Counts of ``dtype``: 0, small, large but valid, and at the dtype's maximum."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        top = int(np.iinfo(dtype).max)
        return st.one_of(st.just(0), st.integers(1, 5), st.integers(top - 2, top))
    top = float(np.finfo(dtype).max)
    return st.one_of(st.just(0.0), st.integers(1, 5).map(float),
                     st.sampled_from([2048.0, top] + ([] if dtype == np.float16 else [1e6])))


def fault_value(fault: str, dtype: np.dtype):
    """The value a value fault stores, or None when ``dtype`` cannot hold it."""
    if fault in ("nan", "inf"):
        return None if dtype.kind != "f" else (np.nan if fault == "nan" else np.inf)
    if fault == "negative":
        return None if dtype.kind in "ub" else -3
    return 2 ** 60 if dtype in (np.int64, np.uint64, np.float32, np.float64) else None


@st.composite
def matrices(draw, formats=FORMATS, fault_kinds=STRUCTURAL + VALUE):
    """(X, description, reference dense int64 counts or None, the fault applied or None)."""
    n_docs, n_words = draw(st.integers(0, 6)), draw(st.integers(1, 6))
    fault = draw(st.sampled_from((None,) * 4 + tuple(fault_kinds)))
    dense = [f for f in formats if f in ("dense", "matrix")]  # SciPy holds no float16
    dtype = np.dtype(draw(st.sampled_from(  # one that can hold the fault's value
        [t for t in DTYPES if (dense or t != "float16") and (
            fault not in VALUE or fault_value(fault, np.dtype(t)) is not None)])))
    fmt = draw(st.sampled_from(formats if dtype != np.float16 else dense))
    cells = draw(st.lists(st.tuples(st.integers(0, max(n_docs - 1, 0)),
                                    st.integers(0, n_words - 1), values(dtype)),
                          min_size=1, max_size=10)) if n_docs else []
    if fmt not in DUPLICATES:  # one value per coordinate
        cells = list({(d, w): (d, w, v) for d, w, v in cells}.values())
    typed = [np.array(v, dtype=dtype).item() for _, _, v in cells]
    ref = np.zeros((n_docs, n_words), dtype=object)
    for (d, w, _), v in zip(cells, typed):
        ref[d, w] += int(v) if dtype.kind in "biu" else v
    X, applied = build(fmt, cells, dtype, (n_docs, n_words), fault, draw)
    applied = "words" if fault == "words" else applied  # for the caller to apply
    desc = (f"fmt={fmt} dtype={dtype} shape={(n_docs, n_words)} cells={cells} "
            f"fault={applied}")
    return X, desc, ref, applied


def build(fmt, cells, dtype, shape, fault, draw):
    """The matrix of ``cells`` in format ``fmt``, with ``fault`` applied to its raw parts
    when the format and dtype can carry it (returns the fault applied, or None)."""
    n_docs, n_words = shape
    data = np.array([v for _, _, v in cells], dtype=dtype)
    if fmt in ("csr", "csr_array", "csc", "bsr"):
        by_word = fmt == "csc"
        major = [w if by_word else d for d, w, _ in cells]
        order = sorted(range(len(cells)), key=lambda i: major[i])  # rows unsorted inside
        indptr = np.zeros((n_words if by_word else n_docs) + 1, dtype=np.int32)
        np.add.at(indptr, np.array(major, dtype=np.int64) + 1, 1)
        indptr = np.cumsum(indptr).astype(np.int32)
        minor = np.array([cells[i][0 if by_word else 1] for i in order], dtype=np.int32)
        vals = data[order] if len(cells) else data
        if fmt == "bsr":
            X = sp.bsr_matrix((vals.reshape(-1, 1, 1), minor, indptr), shape=shape,
                              blocksize=(1, 1))
        else:
            cls = {"csr": sp.csr_matrix, "csr_array": sp.csr_array, "csc": sp.csc_matrix}[fmt]
            X = cls((vals, minor, indptr), shape=shape)
        return X, compressed_fault(X, fault, dtype, draw, n_words if not by_word else n_docs)
    if fmt in ("coo", "coo_array"):
        cls = sp.coo_matrix if fmt == "coo" else sp.coo_array
        rows = np.array([d for d, _, _ in cells], dtype=np.int32)
        cols = np.array([w for _, w, _ in cells], dtype=np.int32)
        X = cls((data, (rows, cols)), shape=shape)
        return X, coo_fault(X, fault, dtype, draw, shape)
    dense = np.zeros(shape, dtype=dtype)
    for (d, w, _), v in zip(cells, data):
        dense[d, w] = v
    applied = None
    value = fault_value(fault, dtype) if fault in VALUE else None
    if value is not None and dense.size:
        dense.flat[draw(st.integers(0, dense.size - 1))] = value
        applied = fault
    X = {"dense": lambda a: a, "matrix": np.asmatrix, "lil": sp.lil_matrix,
         "dok": sp.dok_matrix, "dia": sp.dia_matrix}[fmt](dense)
    if fmt == "lil" and fault == "index_high" and n_docs:
        d = draw(st.integers(0, n_docs - 1))
        X.rows[d].append(n_words + draw(st.integers(0, 3)))
        X.data[d].append(np.array(1, dtype=dtype).item())
        applied = fault
    return X, applied


def compressed_fault(X, fault, dtype, draw, n_minor):
    """``fault`` applied in place to a CSR/CSC/BSR matrix's arrays (None if it cannot be)."""
    nnz, n_major = X.indices.shape[0], X.indptr.shape[0] - 1
    if fault in ("index_high", "index_negative") and nnz:
        X.indices[draw(st.integers(0, nnz - 1))] = (n_minor + draw(st.integers(0, 3))
                                                    if fault == "index_high" else -1)
    elif fault == "indptr_decrease" and n_major >= 2:
        r = draw(st.integers(1, n_major - 1))
        X.indptr[r] = X.indptr[r + 1] + 1
    elif fault == "indptr_start":
        X.indptr[0] = 1
    elif fault == "indptr_end":
        X.indptr[-1] += 1
    elif fault == "indptr_short":
        X.indptr = X.indptr[:-1].copy()
    elif fault in VALUE and nnz and fault_value(fault, dtype) is not None:
        X.data.reshape(-1)[draw(st.integers(0, nnz - 1))] = fault_value(fault, dtype)
    else:
        return None
    return fault


def coo_fault(X, fault, dtype, draw, shape):
    nnz = X.data.shape[0]
    if fault in ("index_high", "index_negative") and nnz:
        axis = draw(st.integers(0, 1))
        idx = X.col if axis else X.row
        idx[draw(st.integers(0, nnz - 1))] = (shape[axis] + draw(st.integers(0, 3))
                                              if fault == "index_high" else -1)
    elif fault in VALUE and nnz and fault_value(fault, dtype) is not None:
        X.data[draw(st.integers(0, nnz - 1))] = fault_value(fault, dtype)
    else:
        return None
    return fault


# ---------------------------------------------------------------------------------------
# What must happen

PATTERNS = {
    "structure": r"^{name}: (indptr |indices |.*index -?\d+ out of range |LIL |COO )",
    "empty": r"^{name}: Found array with 0 sample\(s\)",
    "nan": r"^Input {name} contains NaN\.$",
    "inf": r"^Input {name} contains infinity or a value too large for dtype\('float\d+'\)\.$",
    "negative": r"^Negative values in data passed to .*{name}\)?\.$",
    "huge": r"^{name}: count \S+ of document \d+, word \d+ exceeds 2\^53 = 9007199254740992",
    "words": r"^{name} has \d+ (features, but SameLDA is expecting \d+ features as input\.|"
             r"words but topic_word has \d+)$",
    "tokens": r"^{name} holds no tokens",
    "bound": r"^n_copies=1 is too large for int32 counts",
}


def predicted(ref, fault, *, name, min_docs=1, n_fitted=None, tokens=False, bound=False):
    """The outcome the gate must give (a key of PATTERNS, or "ok"), from the drawn fault and
    counts alone, in the gate's order of checks."""
    if fault in STRUCTURAL:
        return "structure"
    if ref.shape[0] < min_docs:
        return "empty"
    if fault in ("nan", "inf", "negative"):
        return fault
    if n_fitted is not None and ref.shape[1] != n_fitted:
        return "words"
    if fault == "huge" or (ref.size and max(abs(v) for v in ref.flat) > MAX_COUNT):
        return "huge"
    if tokens and not any(v for v in ref.flat):
        return "tokens"
    if bound and ref.size and max(sum(col) for col in ref.T) >= 2 ** 30:
        return "bound"
    return "ok"


def outcome(prop: str, desc: str, call, expect: str, name: str, reference=None, tag=""):
    """Run ``call``; check it ended as ``expect`` says; count the outcome (+ ``tag``)."""
    print(f"{prop}: {desc}", file=sys.stderr, flush=True)
    try:
        got = call()
    except ValueError as exc:
        msg = str(exc)
        assert "\n" not in msg, (desc, msg)
        assert expect != "ok", f"{desc}: refused a valid matrix: {msg}"
        assert re.search(PATTERNS[expect].format(name=re.escape(name)), msg), (desc, expect,
                                                                               msg)
    else:
        assert expect == "ok", f"{desc}: accepted, expected {expect}"
        if reference is not None:
            np.testing.assert_array_equal(np.asarray(got), np.asarray(reference()), desc)
    OUTCOMES[prop][expect + (tag if expect == "ok" else "")] += 1


def beyond_dtype(X, ref) -> str:
    """" (summed beyond the dtype)" when duplicates of an integer dtype sum past its maximum
    (uint8 200 + 100): the examples that show the sums are taken in int64."""
    dtype = getattr(X, "dtype", None)
    if dtype is None or dtype.kind not in "iu" or not ref.size:
        return ""
    return " (summed beyond the dtype)" if max(ref.flat) > np.iinfo(dtype).max else ""


# ---------------------------------------------------------------------------------------
# The properties

_MODELS: dict = {}


def model():
    from same import SameLDA

    return SameLDA(n_components=2, max_iter=1, n_inner=1, n_copies=1, batch_size=1.0,
                   random_state=0)


def fitted(n_words: int):
    """A model fitted on a fixed clean matrix of ``n_words`` words (one per W)."""
    if n_words not in _MODELS:
        rng = np.random.default_rng(n_words)
        _MODELS[n_words] = model().fit(rng.integers(0, 4, (8, n_words)) + np.eye(8, n_words,
                                                                                  dtype=int))
    return _MODELS[n_words]


def clean(ref):
    return np.asarray(ref, dtype=np.int64) if ref.size else np.zeros(ref.shape, np.int64)


def cfg(prop):
    n = max(1, int(EXAMPLES[prop] * SCALE))
    return settings(derandomize=True, max_examples=n, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@st.composite
def estimator_cases(draw):
    X, desc, ref, fault = draw(matrices(fault_kinds=STRUCTURAL + VALUE + ("words",)))
    method = draw(st.sampled_from(["fit", "partial_fit", "transform", "score"]))
    extra = 1 if fault == "words" and method in ("transform", "score") else 0
    return X, f"{method} {desc}", ref, (None if fault == "words" else fault), method, extra


def estimator_property():
    @cfg("estimator")
    @given(estimator_cases())
    def prop(case):
        X, desc, ref, fault, method, extra = case
        W = ref.shape[1]
        if method in ("fit", "partial_fit"):
            expect = predicted(ref, fault, name="X", tokens=True, bound=True)

            def run(X):
                return getattr(model(), method)(X).topic_word_
        else:
            m = fitted(W + extra)
            expect = predicted(ref, fault, name="X", n_fitted=W + extra,
                               tokens=method == "score")
            run = getattr(m, method)
        outcome("estimator", desc, lambda: run(X), expect, "X", lambda: run(clean(ref)),
                beyond_dtype(X, ref))
    prop()


def evaluator_property():
    from same.data.count_matrix import validate_counts
    from same.model import evaluate as ev

    sparse = tuple(f for f in FORMATS if f not in ("dense", "matrix"))

    @cfg("evaluator")
    @given(matrices(formats=sparse), st.sampled_from(["fold_in", "bidmach_loglik",
                                                       "validate_counts"]))
    def prop(case, func):
        X, desc, ref, fault = case
        W = ref.shape[1]
        phi = fitted(W).topic_word_
        calls = {"fold_in": lambda Y: ev.fold_in(phi, Y, 0.1),
                 "bidmach_loglik": lambda Y: ev.bidmach_loglik(phi, 0.1, Y),
                 "validate_counts": lambda Y: validate_counts(Y, "counts", False,
                                                              min_docs=0).toarray()}
        expect = predicted(ref, fault, name="counts", min_docs=0)
        if expect == "ok" and func == "bidmach_loglik" and not any(v for v in ref.flat):
            expect = "no tokens"
        if expect == "no tokens":  # the evaluator's own message, not the gate's
            try:
                calls[func](X)
            except ValueError as exc:
                assert str(exc) == "counts hold no tokens", (desc, str(exc))
            else:
                raise AssertionError(f"{desc}: scored a matrix without tokens")
            OUTCOMES["evaluator"]["tokens"] += 1
            return
        outcome("evaluator", f"{func} {desc}", lambda: calls[func](X), expect, "counts",
                lambda: calls[func](sp.csr_matrix(clean(ref))), beyond_dtype(X, ref))
    prop()


@st.composite
def raw_csr(draw):
    """Raw (indptr, indices, n_docs, n_words), well formed about half the time."""
    n_docs, n_words = draw(st.integers(0, 5)), draw(st.integers(1, 6))
    lengths = draw(st.lists(st.integers(0, 4), min_size=n_docs, max_size=n_docs))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    nnz = int(indptr[-1])
    idx = draw(st.lists(st.integers(0, n_words - 1), min_size=nnz, max_size=nnz))
    indices = np.array(idx, dtype=np.int64)
    fault = draw(st.sampled_from(
        [None] * 6 + ["index_high", "index_negative", "indptr_decrease", "indptr_start",
                      "indptr_end", "indptr_short", "indices_float", "indptr_2d"]))
    if fault in ("index_high", "index_negative") and nnz:
        indices[draw(st.integers(0, nnz - 1))] = (n_words + draw(st.integers(0, 10**6))
                                                  if fault == "index_high" else -1)
    elif fault == "indptr_decrease" and n_docs >= 2:
        r = draw(st.integers(1, n_docs - 1))
        indptr[r] = indptr[r + 1] + draw(st.integers(1, 100))
    elif fault == "indptr_start":
        indptr[0] = draw(st.integers(1, 5))
    elif fault == "indptr_end":
        indptr[-1] += draw(st.integers(1, 5))
    elif fault == "indptr_short":
        indptr = indptr[:-1]
    elif fault == "indices_float":
        indices = indices.astype(np.float64)
    elif fault == "indptr_2d":
        indptr = np.stack([indptr, indptr])
    idx_dtype = draw(st.sampled_from(["int32", "int64", "uint32", "int16"]))
    if indices.dtype.kind == "i" and (idx_dtype[0] != "u" or fault != "index_negative"):
        indices = indices.astype(idx_dtype)
    return indptr, indices, n_docs, n_words


def well_formed(indptr, indices, n_docs, n_words) -> bool:
    """An independent check, element by element in Python."""
    if indptr.ndim != 1 or indices.ndim != 1 or indices.dtype.kind not in "iu":
        return False
    p, i = indptr.tolist(), indices.tolist()
    return (len(p) == n_docs + 1 and p[0] == 0 and p[-1] == len(i)
            and all(a <= b for a, b in zip(p, p[1:])) and all(0 <= w < n_words for w in i))


def kernel_property():
    from same.model import kernels

    @cfg("kernels")
    @given(raw_csr(), st.sampled_from(["sddmm", "sample_accumulate", "summed_t_sweeps",
                                       "summed_p_sweep"]))
    def prop(case, func):
        indptr, indices, n_docs, n_words = case
        rng = np.random.default_rng(n_docs * 7 + n_words)
        theta = rng.random((n_docs, 3)).astype(np.float32) + 0.1
        phi_t = rng.random((n_words, 3)).astype(np.float32) + 0.1
        nnz = indices.shape[0] if indices.ndim == 1 else 0
        data = np.ones(nnz, np.float32)
        block = types.SimpleNamespace(indptr=indptr, indices=indices, data=data)
        desc = f"{func} indptr={indptr.tolist()} indices={indices.tolist()} W={n_words}"
        ok = well_formed(indptr, indices, n_docs, n_words)

        def run():
            if func == "sddmm":
                return kernels.sddmm(indptr, indices, theta, phi_t)
            if func == "sample_accumulate":
                T, P = kernels.sample_accumulate(
                    indptr, indices, data, theta, phi_t, np.ones(nnz, np.float32), 3.0, 1,
                    np.empty(theta.shape, np.int32), np.empty(phi_t.shape, np.int32))
                return [int(T.sum()) - int(P.sum())]
            if func == "summed_t_sweeps":
                return kernels.summed_t_sweeps(block, theta.copy(), phi_t, 3.0, 1.0, 0.1, [1],
                                               np.empty(nnz, np.float32))[1].shape
            p = kernels.summed_p_sweep(block, np.ones(nnz, np.float32), theta, phi_t, 3.0, 1,
                                       np.empty(phi_t.shape, np.int32))
            return [int((p < 0).sum())]

        def reference():
            if func == "sddmm":
                rows = np.repeat(np.arange(n_docs), np.diff(indptr))
                return np.einsum("jk,jk->j", theta[rows].astype(np.float64),
                                 phi_t[indices.astype(np.int64)].astype(np.float64)).astype(
                                     np.float32)
            return {"sample_accumulate": [0], "summed_t_sweeps": (nnz,),
                    "summed_p_sweep": [0]}[func]

        print(f"kernels: {desc}", file=sys.stderr, flush=True)
        try:
            got = run()
        except ValueError as exc:
            assert not ok, f"{desc}: refused well-formed arrays: {exc}"
            assert "\n" not in str(exc) and re.match(
                rf"^({func}: |indices |indptr |doc_topic )", str(exc)), (desc, str(exc))
            OUTCOMES["kernels"]["refused"] += 1
            return
        assert ok, f"{desc}: malformed arrays reached the kernel"
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                                   np.asarray(reference(), dtype=np.float64), rtol=1e-6,
                                   err_msg=desc)
        OUTCOMES["kernels"]["ok"] += 1
    prop()


SCALE = 1.0

if __name__ == "__main__":
    SCALE = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    warnings.simplefilter("ignore")
    estimator_property()
    evaluator_property()
    kernel_property()
    print(json.dumps({k: {"examples": sum(v.values()), "outcomes": dict(v)}
                      for k, v in OUTCOMES.items()}))
