"""SameLDA's parameters, declared once: valid values (and, through ``SameLDA.__init__``,
defaults) for the estimator, the runner's spec validation and the workflow schema's test; and
the translation of one step's parameters into :class:`same.algorithm.StepSettings`."""

from __future__ import annotations

from functools import partial
from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from .algorithm import SAMPLERS, StepSettings
from .backend import BACKENDS
from .schedules import LEARNING_RATES, M_SCHEDULES, learning_rate_at

__all__ = ["PARAMETER_CONSTRAINTS", "step_settings"]

_POSITIVE = Interval(Real, 0, None, closed="neither")
_POSITIVE_INT = Interval(Integral, 1, None, closed="left")

PARAMETER_CONSTRAINTS: dict = {
    "n_topics": [_POSITIVE_INT],
    "n_samples": [_POSITIVE],
    "doc_topic_prior": [_POSITIVE],
    "topic_word_prior": [_POSITIVE],
    "batch_size": [_POSITIVE_INT, Interval(Real, 0, 1, closed="right"), None],
    "n_inner": [_POSITIVE_INT],
    "max_iter": [_POSITIVE_INT],
    "learning_rate": [StrOptions(set(LEARNING_RATES))],
    "learning_decay": [_POSITIVE],
    "learning_offset": [Interval(Real, 0, None, closed="left")],
    "learning_power": [_POSITIVE],
    "prior_scale": [StrOptions({"bidmach", "paper", "paper_unscaled"})],
    "m_schedule": [StrOptions(set(M_SCHEDULES))],
    "schedule_steps": [_POSITIVE_INT, None],
    "keep_doc_topic": ["boolean"],
    "shuffle": ["boolean"],
    "sampler": [StrOptions(set(SAMPLERS))],
    "backend": [StrOptions(set(BACKENDS))],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


def step_settings(est, m_t: float, tokens: float, corpus_tokens: float | None) -> StepSettings:
    """The settings of one minibatch step of estimator ``est`` with m_t samples and ``tokens``
    tokens (out of ``corpus_tokens``): s and the effective β per ``prior_scale``.

    Raises
    ------
    ValueError
        prior_scale="paper" without the corpus size (partial_fit without corpus_tokens).
    """
    rate = partial(learning_rate_at, est.learning_rate, decay=est.learning_decay,
                   offset=est.learning_offset, power=est.learning_power)
    beta = float(est.topic_word_prior)
    if est.prior_scale == "paper":
        if not corpus_tokens:
            raise ValueError("prior_scale='paper' scales β by the minibatch's share of the "
                             "corpus: pass corpus_tokens to partial_fit")
        beta *= tokens / corpus_tokens
    return StepSettings(
        n_samples=float(m_t), prior_scale=1.0 if est.prior_scale == "bidmach" else m_t,
        doc_topic_prior=float(est.doc_topic_prior), topic_word_prior=beta,
        n_inner=int(est.n_inner), sampler=est.sampler, learning_rate=rate,
        keep_doc_topic=bool(est.keep_doc_topic))
