"""Issue 36, root cause 2: no user array reaches numba unchecked.

Every count matrix passes one gate (:func:`same.data.count_matrix.validate_counts`, whose structural
core :func:`same.data.csr_structure.check_compressed` our artefacts and the kernels' dispatch call too).
Each reproduction of the issue runs in a child process, so that a SIGSEGV or SIGABRT of the
code as it was shows as a failing return code (< 0: the signal) instead of killing the test
run; the child prints the one-line error (or the value) as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

DRIVER = Path(__file__).with_name("input_gate_driver.py")

PRELUDE = """
import json, warnings
import numpy as np, scipy.sparse as sp
from same import SameLDA
from same.data.count_matrix import validate_counts
warnings.simplefilter("ignore")
X = sp.csr_matrix(np.array([[1, 2, 0, 0, 1], [0, 1, 3, 0, 0], [2, 0, 0, 1, 1]]))


def model(**kw):
    return SameLDA(n_components=3, max_iter=1, n_copies=5, random_state=0, **kw)


def report(call):
    try:
        value = call()
    except ValueError as exc:
        print(json.dumps({"error": str(exc)}))
    else:
        print(json.dumps({"value": np.asarray(value).tolist()}))
"""


def child(body: str) -> dict:
    """Run PRELUDE + ``body`` in a fresh interpreter; its last stdout line, parsed."""
    res = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (f"child ended with {res.returncode} (negative: the signal "
                                 f"that killed it): {res.stderr[-2000:]}")
    return json.loads(res.stdout.splitlines()[-1])


def test_transform_of_an_index_beyond_W_is_refused_not_a_segfault():
    """``SameLDA().fit(X).transform(Y)`` with a column index ≥ W in Y: SIGSEGV."""
    assert child("""
        Y = X.copy()
        Y.indices[1] = 10**8
        report(lambda: model().fit(X).transform(Y))
    """) == {"error": "X: word index 100000000 out of range 0..4"}


def test_transform_of_a_small_index_overshoot_is_refused_not_read_out_of_bounds():
    """With a small overshoot (index W + 1, through SciPy's constructor, which does not
    check it) transform returned θ read from beyond φ, exit 0."""
    assert child("""
        indices = X.indices.copy()
        indices[-1] = 6
        Y = sp.csr_matrix((X.data, indices, X.indptr), shape=X.shape)
        report(lambda: model().fit(X).transform(Y))
    """) == {"error": "X: word index 6 out of range 0..4"}


def test_fit_of_a_non_monotone_indptr_is_refused_not_sigabrt():
    """``fit`` of a CSR whose indptr decreases: scipy raised, then glibc "corrupted size vs.
    prev_size" / "double free or corruption", SIGABRT."""
    assert child("""
        Y = sp.csr_matrix((X.data, X.indices, np.array([0, 3, 10, 8])), shape=X.shape)
        report(lambda: model().fit(Y).topic_word_)
    """) == {"error": "X: indptr decreases at row 2"}


def test_an_index_beyond_W_in_fit_names_X_not_a_broadcast_error():
    """An index beyond W inside fit ended in "operands could not be broadcast", naming
    nothing."""
    assert child("""
        Y = X.copy()
        Y.indices[-1] = 7
        report(lambda: model().fit(Y).topic_word_)
    """) == {"error": "X: word index 7 out of range 0..4"}


def test_duplicate_uint8_counts_are_summed_not_wrapped_to_zero():
    """Duplicate uint8 entries 128 + 128 were summed in uint8: 0, then dropped as a stored
    zero, silently.  Now summed in int64: 256, and fit trains on exactly the counts of the
    same matrix given as clean int64."""
    got = child("""
        Y = sp.coo_matrix((np.array([128, 128, 1, 2], np.uint8), ([0, 0, 1, 1], [0, 0, 1, 2])),
                          shape=(2, 3))
        clean = np.array([[256, 0, 0], [0, 1, 2]])
        same = np.array_equal(model().fit(Y).topic_word_, model().fit(clean).topic_word_)
        print(json.dumps({"value": validate_counts(Y).toarray().tolist(), "same_fit": same}))
    """)
    assert got == {"value": [[256, 0, 0], [0, 1, 2]], "same_fit": True}


def test_duplicate_int8_counts_are_summed_not_called_negative():
    """Duplicate int8 entries 100 + 100 wrapped to -56: "Negative values in data"."""
    assert child("""
        Y = sp.coo_matrix((np.array([100, 100, 1], np.int8), ([0, 0, 1], [0, 0, 1])),
                          shape=(2, 2))
        report(lambda: validate_counts(Y).toarray())
    """) == {"value": [[200, 0], [0, 1]]}


def test_float16_counts_are_widened_not_refused_by_scipy():
    """float16 counts (which SciPy's sparse matrices cannot hold) were refused with SciPy's
    "scipy.sparse does not support dtype float16", naming nothing; they are widened to
    float64 (so no sum of them can overflow to inf) and train like any counts."""
    assert child("""
        Y = np.array([[60000, 1, 0], [0, 2, 3]], dtype=np.float16)
        report(lambda: [str(validate_counts(Y).dtype),
                        bool(np.array_equal(model().fit(Y).topic_word_,
                                            model().fit(Y.astype(np.int64)).topic_word_))])
    """) == {"value": ["float64", "True"]}


def test_fold_in_of_an_index_beyond_W_is_refused_not_a_segfault():
    """The evaluator's public functions passed a user CSR straight to the numba sddmm."""
    assert child("""
        from same.model.evaluate import fold_in
        Y = X.copy()
        Y.indices[1] = 10**8
        report(lambda: fold_in(model().fit(X).topic_word_, Y, 0.1))
    """) == {"error": "counts: word index 100000000 out of range 0..4"}


def test_sddmm_with_an_index_beyond_W_is_refused_not_a_segfault():
    """same.model.kernels' public functions took raw indptr/indices: numba read out of bounds."""
    assert child("""
        from same.model.kernels import sddmm
        indices = X.indices.copy()
        indices[1] = 10**8
        report(lambda: sddmm(X.indptr, indices, np.ones((3, 2)), np.ones((5, 2))))
    """) == {"error": "sddmm: word index 100000000 out of range 0..4"}


def test_every_sparse_format_is_checked_before_scipy_converts_it():
    """A CSC matrix with a document index ≥ D made scipy's conversion write out of bounds
    ("double free or corruption", SIGABRT); every format's own parts are checked first
    (CSC in its transposed meaning, COO's row and column ranges, LIL's lists, BSR's blocks,
    DIA's diagonals)."""
    got = child("""
        out = {}
        def case(name, Y):
            try:
                SameLDA(n_components=2, max_iter=1).fit(Y)
                out[name] = None
            except ValueError as exc:
                out[name] = str(exc)
        Y = sp.csc_matrix(X.copy()); Y.indices[2] = 7; case("csc_row", Y)
        Y = sp.csc_matrix(X.copy()); Y.indptr[3] = 9; case("csc_indptr", Y)
        Y = sp.coo_matrix(X.copy()); Y.col[0] = 5; case("coo_col", Y)
        Y = sp.coo_matrix(X.copy()); Y.row[0] = -1; case("coo_row", Y)
        Y = sp.lil_matrix(X.copy()); Y.rows[0].append(9); Y.data[0].append(1); case("lil_index", Y)
        Y = sp.lil_matrix(X.copy()); Y.data[1].append(4); case("lil_lengths", Y)
        Y = sp.bsr_matrix(X.copy()); Y.indices[0] = 5; case("bsr", Y)
        Y = sp.dia_matrix(X.copy()); Y.offsets = Y.offsets[:-1]; case("dia", Y)
        print(json.dumps(out))
    """)
    assert got == {
        "csc_row": "X: document index 7 out of range 0..2",
        "csc_indptr": "X: indptr decreases at column 3",
        "coo_col": "X: word index 5 out of range 0..4",
        "coo_row": "X: document index -1 out of range 0..2",
        "lil_index": "X: word index 9 out of range 0..4",
        "lil_lengths": "X: LIL rows and values differ in length",
        "bsr": "X: block column index 5 out of range 0..4",
        "dia": "X: DIA data of shape (5, 5) for 4 diagonals",
    }


def test_partial_fit_refuses_counts_that_overflow_int32():
    """fit refused counts whose Poisson draws could overflow the int32 P; partial_fit drew
    them and returned a φ built from wrapped counts, exit 0."""
    assert child("""
        Y = np.array([[2**40, 1, 0], [0, 3, 1]])
        report(lambda: SameLDA(n_components=2, n_copies=1, random_state=0).partial_fit(Y)
               .topic_word_)
    """) == {"error": "n_copies=1 is too large for int32 counts: a word occurs 1.09951e+12 "
                      "times in one minibatch, so P could exceed 2^30 per cell; use smaller "
                      "minibatches (batch_size) or a smaller m"}


def test_log_likelihood_of_a_matrix_without_tokens_is_refused_not_a_zero_division():
    """``same.model.evaluate.log_likelihood`` divided by the tokens of counts: ZeroDivisionError."""
    from same.model.evaluate import log_likelihood

    phi = np.full((2, 5), 0.2)
    with pytest.raises(ValueError, match=r"^counts hold no tokens$"):
        log_likelihood(phi, np.ones((3, 2)), sp.csr_matrix((3, 5)))


def test_the_callers_matrix_is_never_modified():
    """``same.model.evaluate.fold_in`` sorted a user's CSR indices in place; the gate sums and
    sorts a copy (fit, transform and the evaluator alike)."""
    from same import SameLDA
    from same.model.evaluate import fold_in

    Y = sp.csr_matrix((np.array([1, 2, 3, 1]), np.array([3, 1, 1, 0]), np.array([0, 3, 3, 4])),
                      shape=(3, 5))
    arrays = [a.copy() for a in (Y.data, Y.indices, Y.indptr)]
    m = SameLDA(n_components=2, max_iter=1, random_state=0).fit(Y)
    m.transform(Y)
    fold_in(m.topic_word_, Y, 0.1)
    for before, after in zip(arrays, (Y.data, Y.indices, Y.indptr)):
        np.testing.assert_array_equal(before, after)
    assert not Y.has_sorted_indices


def test_a_canonical_int32_matrix_passes_the_gate_uncopied():
    """Committed results do not move: the split matrices the runner trains on (canonical
    int32 CSR, possibly memory-mapped) leave the gate as the very same arrays, dtype and
    values; a non-canonical or small-dtype one is a widened, summed copy."""
    from same.data.count_matrix import validate_counts

    X = sp.random(40, 30, density=0.2, random_state=0, format="csr")
    X.data = np.ceil(X.data * 7)
    X = X.astype(np.int32)
    Y = validate_counts(X)
    assert Y.dtype == np.int32
    for a, b in ((Y.data, X.data), (Y.indices, X.indices), (Y.indptr, X.indptr)):
        assert np.shares_memory(a, b)
    Z = validate_counts(X.astype(np.uint16))
    assert Z.dtype == np.int64 and not np.shares_memory(Z.data, X.data)
    np.testing.assert_array_equal(Z.toarray(), X.toarray())


def test_artefacts_and_user_matrices_share_one_structural_check():
    """csr_from_parts (our .npz artefacts) and the gate of a user's matrix report a fault in
    the same words: one check, two callers."""
    from same.data.artefact import ArtefactError, csr_from_parts
    from same.data.count_matrix import CountsError, validate_counts

    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [4, 0, 0]]))
    X.indptr[1] = 4
    with pytest.raises(ArtefactError, match=r"^corpus\.npz: indptr decreases at row 1$"):
        csr_from_parts(X.data, X.indices, X.indptr, np.array(X.shape), "corpus.npz")
    with pytest.raises(CountsError, match=r"^X: indptr decreases at row 1$"):
        validate_counts(X)


# ---------------------------------------------------------------------------------------
# Every public entry point × every kind of bad matrix (tests/data/input_gate_driver.py)

ESTIMATOR = ("SameLDA.fit", "SameLDA.iter_fit", "SameLDA.fit_transform",
             "SameLDA.partial_fit (first call)", "SameLDA.partial_fit (later call)",
             "SameLDA.transform", "SameLDA.score", "SameLDA.heldout_score")
OTHERS = ("evaluate.fold_in", "evaluate.heldout_loglik", "evaluate.bidmach_loglik",
          "evaluate.log_likelihood", "evaluate.evaluate", "lefttoright.left_to_right",
          "split.make_split",
          "baselines.cgs.fit_cgs", "baselines.vb.fit_vb", "baselines.sklearn_vb.fit_sklearn")
KERNELS = ("kernels.sddmm", "kernels.sample_accumulate", "kernels.summed_t_sweeps",
           "kernels.summed_p_sweep", "algorithm.minibatch_step (nonzero)",
           "algorithm.minibatch_step (summed)")


def expected_message(entry: str, arg: str, kind: str) -> str:
    """The one line each kind of bad matrix must end in, given as argument ``arg``."""
    kernel, estimator = entry in KERNELS, entry in ESTIMATOR
    return {
        "index_beyond_W": f"{arg}: word index 9 out of range 0..4",
        "index_negative": f"{arg}: word index -2 out of range 0..4",
        "indptr_decreasing": f"{arg}: indptr decreases at row 2",
        "indptr_not_from_0": f"{arg}: indptr runs 1..8 but there are 8 indices and 8 values",
        "indptr_end_not_nnz": f"{arg}: indptr runs 0..7 but there are 8 indices and 8 values",
        "indptr_wrong_length": ("doc_topic has 3 rows, indptr describes 2 documents" if kernel
                                else f"{arg}: indptr has 3 entries, expected rows + 1 = 4"),
        "float_indices": ("indices has dtype float64, expected kind 'iu'" if kernel else
                          f"{arg}: indices has dtype float64, expected signed integers or "
                          "unsigned integers"),
        "nan": f"Input {arg} contains NaN.",
        "inf": f"Input {arg} contains infinity or a value too large for dtype('float64').",
        "negative_count": ("Negative values in data passed to "
                           + (f"SameLDA ({arg})." if estimator else f"the count matrix {arg}.")),
        "complex": f"{arg}: Complex data not supported",
        "too_large": f"{arg}: count 1.15292e+18 of document 0, word 1 exceeds 2^53 = "
                     "9007199254740992, the largest whole number held exactly in float64",
        "W_mismatch": (f"{arg} has 6 features, but SameLDA is expecting 5 features as input."
                       if estimator else f"{arg} has 6 words but topic_word has 5"),
    }[kind]


@pytest.mark.slow
def test_every_public_entry_point_refuses_every_kind_of_bad_matrix(tmp_path):
    """Each public function that takes a count matrix (the estimator's methods, the
    evaluator's, make_split, the baselines' fits) or a CSR block (the kernels, the
    algorithm's step), called with each kind of malformed matrix: a ValueError of one line
    naming the argument and the fault, never a signal; duplicate uint8 counts that overflow
    uint8 are summed and give the result of the same counts as clean int64."""
    res = subprocess.run([sys.executable, str(DRIVER)], capture_output=True, text=True,
                         timeout=900, cwd=tmp_path)
    last = (res.stderr.strip().splitlines() or ["(none)"])[-1]
    assert res.returncode == 0, (f"driver ended with {res.returncode} (negative: a signal) "
                                 f"in case {last!r}: {res.stderr[-2000:]}")
    rows = json.loads(res.stdout.splitlines()[-1])
    assert {r["entry"] for r in rows} == set(ESTIMATOR + OTHERS + KERNELS)
    assert len(rows) >= 250
    for r in rows:
        if r["kind"] == "uint8_duplicates":
            assert r["error"] is None and r["equal"] is True, r
            continue
        assert r["value_error"], r
        assert r["message"] == expected_message(r["entry"], r["arg"], r["kind"]), r


# ------------------------------------------------------------- further cases of the same classes

def test_dense_inputs_that_are_no_counts_are_refused_in_one_line():
    """A masked array's mask was dropped silently (the masked values trained); a string in an
    object array was parsed silently; datetime64 / timedelta64 counts ended in a numpy
    traceback.  Each is one line naming X now, from fit and transform alike."""
    got = child("""
        A = X.toarray()
        masked = np.ma.masked_array(A.astype(float), mask=A == 1)
        text = A.astype(object)
        text[0, 0] = "3"
        out = {}
        for name, bad in (("masked", masked), ("text", text),
                          ("datetime", A.astype("datetime64[s]")),
                          ("timedelta", A.astype("timedelta64[s]"))):
            for how in ("fit", "transform"):
                try:
                    model().fit(bad) if how == "fit" else model().fit(X).transform(bad)
                except ValueError as exc:
                    out[f"{name} {how}"] = str(exc)
        out["unmasked"] = model().fit(np.ma.masked_array(A)).topic_word_.tolist()
        out["plain"] = model().fit(A).topic_word_.tolist()
        print(json.dumps(out))
    """)
    for how in ("fit", "transform"):
        assert got[f"masked {how}"] == ("X: a masked array with masked entries; counts have no "
                                        "missing values (fill them first, e.g. X.filled(0))")
        assert got[f"text {how}"] == "X: holds '3' (str), not a number of tokens"
        assert got[f"datetime {how}"] == ("X: has dtype datetime64[s], not a number type; counts "
                                          "are integers or floats")
        assert got[f"timedelta {how}"] == ("X: has dtype timedelta64[s], not a number type; "
                                           "counts are integers or floats")
    assert got["unmasked"] == got["plain"]  # a mask with nothing masked changes nothing


def test_evaluator_refuses_a_bad_phi_theta_or_size_in_one_line():
    """``log_likelihood`` did not check φ (φ·7 gave a positive "log-likelihood", exit 0; NaN
    was blamed on "probability 0"), nor θ; ``fold_in`` took ``n_iter=-5`` (uniform θ) and
    ``chunk_nnz=0`` silently, and a list φ or an object φ ended in a traceback."""
    got = child("""
        from same.model import evaluate as ev
        phi = np.full((2, 5), 0.2)
        theta = np.full((3, 2), 0.5)
        nan_phi = phi.copy()
        nan_phi[0, 0] = np.nan
        nan_theta = theta.copy()
        nan_theta[1, 1] = np.nan
        out = {}
        for name, call in (
                ("scaled phi", lambda: ev.log_likelihood(phi * 7, theta, X)),
                ("nan phi", lambda: ev.log_likelihood(nan_phi, theta, X)),
                ("nan theta", lambda: ev.log_likelihood(phi, nan_theta, X)),
                ("n_iter", lambda: ev.fold_in(phi, X, 0.1, n_iter=-5)),
                ("chunk_nnz", lambda: ev.fold_in(phi, X, 0.1, chunk_nnz=0)),
                ("object phi", lambda: ev.fold_in(phi.astype(object), X, 0.1)),
                ("list phi", lambda: ev.fold_in(phi.tolist(), X, 0.1))):
            try:
                call()
            except (ValueError, TypeError) as exc:
                out[name] = f"{type(exc).__name__}: {exc}"
        print(json.dumps(out))
    """)
    assert got == {
        "scaled phi": "ValueError: topic_word rows must sum to 1; row 0 sums to 7",
        "nan phi": "ValueError: topic_word contains NaN or inf",
        "nan theta": ("ValueError: doc_topic must be a 2-D array (documents, topics) of finite, "
                      "non-negative weights"),
        "n_iter": "ValueError: n_iter must be an integer >= 0, got -5",
        "chunk_nnz": "ValueError: chunk_nnz must be an integer >= 1, got 0",
        "object phi": "ValueError: topic_word has dtype object, expected real numbers",
        "list phi": ("TypeError: topic_word must be a NumPy or CuPy array (n_topics, n_words), "
                     "got list")}
