"""Every public entry point that takes a count matrix (or a kernel's CSR arrays), called with
every kind of malformed matrix, in one process.

Run by tests/data/test_input_gate.py in a child process (a native crash then shows as a signal,
not as a dead test run)::

    python tests/data/input_gate_driver.py

Prints one JSON list, one object per (entry, kind) call: ``entry``, ``kind``, ``arg`` (the
argument the bad matrix was passed as), ``error`` (the exception's class name or None),
``value_error`` (whether it is a ValueError), ``message`` and, for the kinds that must be
accepted, ``equal`` (whether the result equals the one of the same counts given as a clean
int64 matrix).  Before each call the case is written to stderr, so the parent can name the
case a crash happened in.
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import scipy.sparse as sp

#: The clean matrix every bad one is made from: 3 documents × 5 words, 8 nonzeros.
DENSE = np.array([[1, 2, 0, 0, 1], [0, 1, 3, 0, 0], [2, 0, 0, 1, 1]], dtype=np.int64)
K = 2
STRUCTURE = ("index_beyond_W", "index_negative", "indptr_decreasing", "indptr_not_from_0",
             "indptr_end_not_nnz", "indptr_wrong_length", "float_indices")
VALUES = ("nan", "inf", "negative_count", "complex", "too_large")
KINDS = STRUCTURE + VALUES + ("W_mismatch", "uint8_duplicates")


def bad(kind: str, dtype=np.int64):
    """A matrix of ``kind`` (its arrays changed after construction, as a user's code might,
    so that SciPy's constructor checks nothing), or the clean one for the other kinds; its
    counts of ``dtype`` (for the structural kinds)."""
    X = sp.csr_matrix(DENSE.astype(dtype))
    if kind == "index_beyond_W":
        X.indices[1] = 9
    elif kind == "index_negative":
        X.indices[1] = -2
    elif kind == "indptr_decreasing":
        X.indptr[2] = 10
    elif kind == "indptr_not_from_0":
        X.indptr[0] = 1
    elif kind == "indptr_end_not_nnz":
        X.indptr[-1] = 7
    elif kind == "indptr_wrong_length":
        X.indptr = X.indptr[:-1]
    elif kind == "float_indices":
        X.indices = X.indices.astype(np.float64)
    elif kind in ("nan", "inf", "negative_count", "complex", "too_large"):
        X = X.astype(np.complex128 if kind == "complex" else np.float64)
        X.data[1] = {"nan": np.nan, "inf": np.inf, "negative_count": -1.0, "complex": 1j,
                     "too_large": 2.0 ** 60}[kind]
    elif kind == "W_mismatch":
        X = sp.csr_matrix(np.hstack([DENSE, np.ones((3, 1), dtype=np.int64)]))
    elif kind == "uint8_duplicates":  # 200 + 100 at (0, 0): 44 when summed in uint8
        coo = X.tocoo()
        data = np.where((coo.row == 0) & (coo.col == 0), 100, coo.data)
        X = sp.coo_matrix((np.r_[data, 200].astype(np.uint8),
                           (np.r_[coo.row, 0], np.r_[coo.col, 0])), shape=coo.shape)
    return X


def reference(kind: str):
    """The counts ``bad(kind)`` means, as a clean int64 matrix (for the accepted kinds)."""
    X = DENSE.copy()
    if kind == "uint8_duplicates":
        X[0, 0] = 300
    return sp.csr_matrix(X)


def model(**kw):
    from same import SameLDA

    return SameLDA(n_components=K, max_iter=1, n_inner=2, n_copies=5, random_state=0, **kw)


def estimator_entries():
    """(entry, argument name, call(X) -> a comparable result, kinds that do not apply)."""
    fitted = model().fit(DENSE)
    streamed = model().partial_fit(DENSE)
    good = sp.csr_matrix(DENSE)
    fit_only = ("W_mismatch",)
    return [
        ("SameLDA.fit", "X", lambda X: model().fit(X).topic_word_, fit_only),
        ("SameLDA.iter_fit", "X", lambda X: next(model().iter_fit(X))["pass"], fit_only),
        ("SameLDA.fit_transform", "X", lambda X: model().fit_transform(X), fit_only),
        ("SameLDA.partial_fit (first call)", "X", lambda X: model().partial_fit(X).topic_word_,
         fit_only),
        ("SameLDA.partial_fit (later call)", "X",
         lambda X: _copy(streamed).partial_fit(X).topic_word_, ()),
        ("SameLDA.transform", "X", lambda X: fitted.transform(X), ()),
        ("SameLDA.score", "X", lambda X: fitted.score(X), ()),
        ("SameLDA.heldout_score", "X_observed", lambda X: fitted.heldout_score(X, good), ()),
        ("SameLDA.heldout_score", "X_heldout", lambda X: fitted.heldout_score(good, X), ()),
    ]


def _copy(m):
    import copy

    return copy.deepcopy(m)


def evaluator_entries():
    from same.data.split import HeldOutSplit, make_split
    from same.model import evaluate as ev
    from same.model.lefttoright import left_to_right

    phi = model().fit(DENSE).topic_word_
    good = sp.csr_matrix(DENSE).astype(np.int32)
    theta = np.full((3, K), 0.5)

    def split_with(X):
        s = HeldOutSplit(train=good, test_observed=X, test_heldout=good,
                         train_docs=np.arange(3), test_docs=np.arange(3), corpus="toy", seed=0,
                         test_fraction=0.5, vocab_sha256="")
        return ev.evaluate(phi, 0.1, s).ll

    return [
        ("evaluate.fold_in", "counts", lambda X: ev.fold_in(phi, X, 0.1), ()),
        ("evaluate.heldout_loglik", "observed", lambda X: ev.heldout_loglik(phi, 0.1, X, good),
         ()),
        ("evaluate.heldout_loglik", "heldout", lambda X: ev.heldout_loglik(phi, 0.1, good, X),
         ()),
        ("evaluate.bidmach_loglik", "counts", lambda X: ev.bidmach_loglik(phi, 0.1, X), ()),
        ("evaluate.log_likelihood", "counts", lambda X: ev.log_likelihood(phi, theta, X), ()),
        ("evaluate.evaluate", "observed", split_with, ()),
        ("lefttoright.left_to_right", "counts", lambda X: left_to_right(phi, 0.1, X), ()),
        ("split.make_split", "corpus",
         lambda X: make_split(X, 0.5, seed=0).train.toarray(), ("W_mismatch",)),
    ]


def baseline_entries():
    from baselines.cgs import fit_cgs
    from baselines.sklearn_vb import fit_sklearn
    from baselines.vb import fit_vb

    common = {"n_topics": K, "doc_topic_prior": 0.1, "topic_word_prior": 0.1,
              "random_state": 0}
    return [
        ("baselines.cgs.fit_cgs", "X", lambda X: fit_cgs(X, iterations=2, **common),
         ("W_mismatch",)),
        ("baselines.vb.fit_vb", "X", lambda X: fit_vb(X, passes=1, **common), ("W_mismatch",)),
        ("baselines.sklearn_vb.fit_sklearn", "X", lambda X: fit_sklearn(X, passes=1, **common),
         ("W_mismatch",)),
    ]


def kernel_entries():
    """Kernels and the algorithm's public steps, given the bad matrix's raw arrays: only the
    structural kinds apply (the kernels take whatever counts they are given)."""
    from same.model import algorithm, kernels

    rng = np.random.default_rng(0)
    phi_t = np.ascontiguousarray(rng.dirichlet(np.ones(5), size=K).T.astype(np.float32))
    skip = VALUES + ("W_mismatch", "uint8_duplicates")

    def theta(X):
        return np.ones((X.shape[0], K), dtype=np.float32)

    def sample(X):
        t, nnz = theta(X), X.indices.shape[0]
        mu = np.ones(nnz, dtype=np.float32)
        return kernels.sample_accumulate(X.indptr, X.indices, X.data, t,
                                         phi_t, mu, 5.0, 1, np.empty(t.shape, np.int32),
                                         np.empty(phi_t.shape, np.int32))[0]

    def settings(sampler):
        return algorithm.StepSettings(n_samples=5.0, prior_scale=1.0, doc_topic_prior=0.1,
                                      topic_word_prior=0.1, n_inner=2, sampler=sampler,
                                      learning_rate=lambda *a: 0.5)

    def step(X, sampler):
        state = algorithm.init_state(np.ones(5), K, 0)
        return algorithm.minibatch_step(state, X, settings(sampler))[0]

    return [
        ("kernels.sddmm", "sddmm",
         lambda X: kernels.sddmm(X.indptr, X.indices, theta(X), phi_t), skip),
        ("kernels.sample_accumulate", "sample_accumulate", sample, skip),
        ("kernels.summed_t_sweeps", "summed_t_sweeps",
         lambda X: kernels.summed_t_sweeps(X, theta(X), phi_t, 5.0, 1.0, 0.1, [1, 2],
                                           np.empty(X.indices.shape[0], np.float32))[1], skip),
        ("kernels.summed_p_sweep", "summed_p_sweep",
         lambda X: kernels.summed_p_sweep(X, np.ones(X.indices.shape[0], np.float32), theta(X),
                                          phi_t, 5.0, 1, np.empty(phi_t.shape, np.int32)),
         skip),
        ("algorithm.minibatch_step (nonzero)", "sddmm", lambda X: step(X, "nonzero"), skip),
        ("algorithm.minibatch_step (summed)", "summed_t_sweeps", lambda X: step(X, "summed"),
         skip),
    ]


def same_result(a, b) -> bool:
    if hasattr(a, "topic_word_t"):  # a SameState
        a, b = a.topic_word_t, b.topic_word_t
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def main() -> list[dict]:
    warnings.simplefilter("ignore")
    out = []
    kernel = kernel_entries()
    entries = estimator_entries() + evaluator_entries() + baseline_entries() + kernel
    for entry, arg, call, skip in entries:
        dtype = np.float32 if (entry, arg, call, skip) in kernel else np.int64
        for kind in KINDS:
            if kind in skip:
                continue
            print(f"{entry} {arg} {kind}", file=sys.stderr, flush=True)
            row = {"entry": entry, "arg": arg, "kind": kind, "error": None,
                   "value_error": False, "message": None, "equal": None}
            try:
                got = call(bad(kind, dtype))
                if kind == "uint8_duplicates":
                    row["equal"] = same_result(got, call(reference(kind)))
            except Exception as exc:  # noqa: BLE001 - every outcome is recorded
                row.update(error=type(exc).__name__, value_error=isinstance(exc, ValueError),
                           message=str(exc))
            out.append(row)
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
