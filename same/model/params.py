"""SameLDA's parameters, declared once: valid values (and, through ``SameLDA.__init__``,
defaults) for the estimator, the runner's spec validation and the workflow schema's test; and
the translation of one step's parameters into :class:`same.model.algorithm.StepSettings`."""

from __future__ import annotations

import inspect
import math
import warnings
from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Hidden, Interval, Options, StrOptions

from same.data.protocol import PAPER_MINIBATCHES, paper_batch_size

from .algorithm import SAMPLERS, StepSettings
from .backend import BACKENDS
from .schedules import LEARNING_RATES, M_SCHEDULES, learning_rate_at, n_samples_at

__all__ = ["PARAMETER_CONSTRAINTS", "PARTIAL_FIT_CONSTRAINTS", "ITER_FIT_CONSTRAINTS",
           "check_method_params", "RENAMED", "renamed_values", "step_settings",
           "minibatch_ranges", "m_at_step", "PAPER_MINIBATCHES", "paper_batch_size"]



class _Number(Interval):
    """scikit-learn's ``Interval``, refusing booleans: ``True`` is an ``Integral`` in Python,
    so ``SameLDA(batch_size=True)`` was read as one document per minibatch."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


_POSITIVE = _Number(Real, 0, None, closed="neither")
_POSITIVE_INT = _Number(Integral, 1, None, closed="left")

#: Parameters renamed to scikit-learn's names (old → new): the old names are accepted until
#: version 0.2, with a FutureWarning (the value "deprecated" means "not given").
RENAMED = {"n_topics": "n_components", "n_samples": "n_copies"}
_DEPRECATED = Hidden(StrOptions({"deprecated"}))

PARAMETER_CONSTRAINTS: dict = {
    "n_components": [_POSITIVE_INT],
    "n_copies": [_POSITIVE],
    "doc_topic_prior": [_POSITIVE],
    "topic_word_prior": [_POSITIVE],
    "batch_size": [_POSITIVE_INT, _Number(Real, 0, 1, closed="right"), None],
    "n_inner": [_POSITIVE_INT],
    "max_iter": [_POSITIVE_INT],
    "learning_rate": [StrOptions(set(LEARNING_RATES))],
    "learning_decay": [_POSITIVE],
    "learning_offset": [_Number(Real, 0, None, closed="left")],
    "learning_power": [_POSITIVE],
    "prior_scale": [StrOptions({"bidmach", "paper", "paper_unscaled"})],
    "m_schedule": [StrOptions(set(M_SCHEDULES))],
    "schedule_steps": [_POSITIVE_INT, None],
    "total_samples": [_POSITIVE_INT, None],
    "keep_doc_topic": ["boolean"],
    "shuffle": ["boolean"],
    "sampler": [StrOptions(set(SAMPLERS))],
    "backend": [StrOptions(set(BACKENDS))],
    "n_jobs": [_POSITIVE_INT, Options(Integral, {-1}), None],
    # scikit-learn's "random_state" with the int interval refusing bools (True was seed 1)
    "random_state": [_Number(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState, None],
    "verbose": ["verbose"],
    "n_topics": [_POSITIVE_INT, _DEPRECATED],
    "n_samples": [_POSITIVE, _DEPRECATED],
}


#: partial_fit's own parameters (those of the stream, beside X), checked by the same machinery
#: (scikit-learn's ``validate_parameter_constraints``): a negative, zero, NaN, infinite, text
#: or boolean ``corpus_tokens`` trained φ with negative or NaN entries without a word.
PARTIAL_FIT_CONSTRAINTS: dict = {
    "corpus_tokens": [_POSITIVE, None],
}
#: iter_fit's own parameter.
ITER_FIT_CONSTRAINTS: dict = {
    "every": [StrOptions({"pass", "step"})],
}


def check_method_params(est, method: str, constraints: dict, **params) -> None:
    """A method's own parameters against ``constraints``, as scikit-learn checks the
    estimator's: one line naming the parameter and the method, e.g. ``The 'corpus_tokens'
    parameter of SameLDA.partial_fit must be a float in the range (0.0, inf) or None. Got -5
    instead.`` (``InvalidParameterError``, a ValueError and a TypeError)."""
    from sklearn.utils._param_validation import validate_parameter_constraints

    validate_parameter_constraints(constraints, params,
                                   caller_name=f"{type(est).__name__}.{method}")


def renamed_values(est) -> dict:
    """{new name: value} for each old name of :data:`RENAMED` given to ``est``, with a
    FutureWarning; giving both names of one parameter is a ValueError."""
    out = {}
    for old, new in RENAMED.items():
        value = getattr(est, old, "deprecated")
        if isinstance(value, str) and value == "deprecated":
            continue
        if getattr(est, new) != inspect.signature(type(est)).parameters[new].default:
            raise ValueError(f"{type(est).__name__} got both {old} and {new}: give {new} only")
        warnings.warn(f"{old} was renamed {new} in 0.1 and will be removed in 0.2",
                      FutureWarning, stacklevel=4)
        out[new] = value
    return out


def param(est, name: str):
    """The value of ``est``'s parameter ``name`` in this fit: its own, or the old name's
    (``est._renamed``, set by :func:`renamed_values` when the fit began)."""
    return getattr(est, "_renamed", {}).get(name, getattr(est, name))


def step_settings(est, m_t: float, share: tuple[float, float] | None) -> StepSettings:
    """The settings of one minibatch step of estimator ``est`` with m_t copies: s and the
    effective β per ``prior_scale``.  ``share``: (the minibatch's tokens, the corpus's) in
    :meth:`~same.model.sampler.SameLDA.fit`; (its documents, ``total_samples``) in partial_fit.

    Raises
    ------
    ValueError
        prior_scale="paper" without the corpus size (partial_fit without total_samples).
    """
    rate = partial(learning_rate_at, est.learning_rate, decay=est.learning_decay,
                   offset=est.learning_offset, power=est.learning_power)
    beta = float(est.topic_word_prior)
    if est.prior_scale == "paper":
        if share is None:
            raise ValueError("prior_scale='paper' scales β by the minibatch's share of the "
                             "corpus: give SameLDA(total_samples=<documents in the stream>) "
                             "for partial_fit")
        beta *= share[0] / share[1]
    return StepSettings(
        n_samples=float(m_t), prior_scale=1.0 if est.prior_scale == "bidmach" else m_t,
        doc_topic_prior=float(est.doc_topic_prior), topic_word_prior=beta,
        n_inner=int(est.n_inner), sampler=est.sampler, learning_rate=rate,
        keep_doc_topic=bool(est.keep_doc_topic))


def minibatch_ranges(batch_size, n_docs: int) -> list[tuple[int, int]]:
    """Document ranges [start, stop) of one pass's minibatches for SameLDA's ``batch_size``:
    an int is a count, a float in (0, 1] a fraction of ``n_docs`` (rounded up), None
    :func:`paper_batch_size`."""
    if batch_size is None:
        size = paper_batch_size(n_docs)
    elif isinstance(batch_size, Integral):
        size = int(batch_size)
    else:
        size = max(1, math.ceil(float(batch_size) * n_docs))
    return [(a, min(a + size, n_docs)) for a in range(0, n_docs, size)]


def m_at_step(est, t_max: int | None) -> float:
    """m for estimator ``est``'s next minibatch step (step ``est.n_batch_iter_ + 1`` of
    ``t_max``) under its ``m_schedule`` (:func:`same.model.schedules.n_samples_at`).

    Raises
    ------
    ValueError
        A non-constant ``m_schedule`` without t_max (partial_fit without schedule_steps).
    """
    m = float(param(est, "n_copies"))
    if est.m_schedule == "constant":
        return m
    if t_max is None:
        raise ValueError(f"m_schedule={est.m_schedule!r} needs schedule_steps (t_max) when "
                         "training with partial_fit")
    t = est.n_batch_iter_ + 1
    return n_samples_at(est.m_schedule, m, min(t, t_max), t_max)
