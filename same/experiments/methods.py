"""Every method behind one small protocol: train on a CSR matrix, yield checkpoints.

A method is a function ``(X, spec, points) -> iterator of (φ, info)``:

- ``X`` : csr_matrix (n_docs, n_words), the training counts of the split;
- ``spec`` : :class:`same.experiments.spec.RunSpec` (K, α, β, seed, budget, threads, backend, params);
- ``points`` : the passes (Gibbs iterations for CGS) at which φ is wanted;
- yields φ (n_components, n_words, float64, rows sum to 1) and an info dict with
  ``pass``, ``iteration``, ``tokens_seen``, ``samples_per_word``, ``train_seconds``
  (time spent by the consumer between yields excluded) and ``native_score``.

The runner (:mod:`same.experiments.runner`) scores every checkpoint with the one evaluator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from same.data.protocol import CHECKPOINTS

__all__ = ["METHOD_FUNCTIONS", "CHECKPOINTS", "checkpoints", "eval_points"]

Checkpoints = Iterator[tuple[np.ndarray, dict]]

def eval_points(budget: int) -> list[int]:
    """Checkpoints: every pass/iteration up to 20, then 1-2-5 steps and every tenth of the
    budget (so no gap exceeds 10 % of it: times to reach an ll are not an artefact of sparse
    checkpoints), and the budget."""
    tenth = -(-budget // 10)
    pts = (set(range(1, min(budget, 20) + 1)) | {c for c in CHECKPOINTS if c <= budget}
           | set(range(tenth, budget + 1, tenth)) | {budget})
    return sorted(pts)


def _common(spec) -> dict:
    """The shared settings in the baselines' own names (gensim and tomotopy call K n_topics)."""
    return dict(n_topics=spec.n_components, doc_topic_prior=spec.doc_topic_prior,
                topic_word_prior=spec.topic_word_prior, random_state=spec.seed)


def _same(X, spec, points) -> Checkpoints:
    from same.model.sampler import SameLDA

    model = SameLDA(n_components=spec.n_components, doc_topic_prior=spec.doc_topic_prior,
                    topic_word_prior=spec.topic_word_prior, random_state=spec.seed,
                    max_iter=spec.budget, backend=spec.backend, n_jobs=spec.threads,
                    **spec.params)
    for info in model.iter_fit(X, every="pass"):
        if info["pass"] in points:
            yield model.topic_word_, {
                "pass": info["pass"], "iteration": info["step"],
                "samples_per_word": info["samples_per_word"],
                "train_seconds": info["train_seconds"], "tokens_seen": info["tokens_seen"],
                "native_score": None, "compile_seconds": model.compile_seconds_}


def _cgs(X, spec, points) -> Checkpoints:
    from baselines.cgs import iter_cgs

    yield from iter_cgs(X, iterations=spec.budget, checkpoints=sorted(points),
                        threads=spec.threads, **_common(spec), **spec.params)


def _vb(mode: str) -> Callable:
    def method(X, spec, points) -> Checkpoints:
        from baselines.vb import iter_vb

        for phi, info in iter_vb(X, passes=spec.budget, mode=mode, **_common(spec),
                                 **spec.params):
            if info["pass"] in points:
                yield phi, info

    return method


def _sklearn(mode: str) -> Callable:
    def method(X, spec, points) -> Checkpoints:
        from baselines.sklearn_vb import iter_sklearn

        for phi, info in iter_sklearn(X, passes=spec.budget, mode=mode, threads=spec.threads,
                                      **_common(spec), **spec.params):
            if info["pass"] in points:
                yield phi, info

    return method


#: method name → checkpoint generator
METHOD_FUNCTIONS: dict[str, Callable] = {"same": _same, "cgs": _cgs, "vb_online": _vb("online"),
                                         "vb_batch": _vb("batch"),
                                         "sklearn_online": _sklearn("online"),
                                         "sklearn_batch": _sklearn("batch")}


def checkpoints(X, spec, points=None) -> Checkpoints:
    """Train ``spec``'s method on X, yielding (φ, info) at ``points`` (default
    :func:`eval_points` of the budget)."""
    wanted = set(points if points is not None else eval_points(spec.budget))
    return METHOD_FUNCTIONS[spec.method](X, spec, wanted)
