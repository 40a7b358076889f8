"""Schedules: the number of samples m_t (annealing) and the learning rate ρ_t.

Each is a small pure function of the (1-based) minibatch step.
"""

from __future__ import annotations

import math

__all__ = ["M_SCHEDULES", "LEARNING_RATES", "n_samples_at", "learning_rate_at"]

M_SCHEDULES = ("constant", "linear", "log", "invlinear")
LEARNING_RATES = ("bidmach", "paper")


def n_samples_at(schedule: str, m: float, t: int, t_max: int) -> float:
    """m_t for step t = 1..t_max; every schedule averages to m over the t_max steps.

    - constant:  m_t = m
    - linear:    m_t = 2 m t / (t_max + 1)
    - log:       m_t = m t_max log(t + 1) / Σ_{t'=1}^{t_max} log(t' + 1)
      (shifted by one so that step 1 draws samples: the paper's log t gives m_1 = 0,
      a step that would sample nothing)
    - invlinear: m_t = 2 m (t_max + 1 − t) / (t_max + 1)

    Raises
    ------
    ValueError
        Unknown schedule, m ≤ 0, or t outside 1..t_max.
    """
    if schedule not in M_SCHEDULES:
        raise ValueError(f"m_schedule must be one of {M_SCHEDULES}, got {schedule!r}")
    if not m > 0:
        raise ValueError(f"n_samples must be > 0, got {m!r}")
    if not 1 <= t <= t_max:
        raise ValueError(f"step t={t} outside 1..{t_max}")
    if schedule == "constant":
        return float(m)
    if schedule == "linear":
        return 2.0 * m * t / (t_max + 1)
    if schedule == "invlinear":
        return 2.0 * m * (t_max + 1 - t) / (t_max + 1)
    total = math.lgamma(t_max + 2)  # Σ_{t'=1}^{t_max} log(t'+1) = log((t_max+1)!)
    return m * t_max * math.log(t + 1) / total


def learning_rate_at(kind: str, step: int, docs_seen: int, first_docs: int, *,
                     decay: float = 0.7, offset: float = 10.0, power: float = 0.3) -> float:
    """ρ for minibatch ``step`` (0-based), after ``docs_seen`` documents including it.

    - "paper":   ρ_t = (τ0 + t)^−γ (Hoffman et al. 2010), τ0 = ``offset``, γ = ``decay``,
      t = step (paper Alg. 3 line 2, t from 0)
    - "bidmach": BIDMach IncNorm: ρ = 0.99 on the first step, then
      (docs at the first step / docs_seen)^``power``
    """
    if kind == "paper":
        return float((offset + step) ** (-decay))
    if kind == "bidmach":
        if step == 0:
            return 0.99
        return float((first_docs / docs_seen) ** power)
    raise ValueError(f"learning_rate must be one of {LEARNING_RATES}, got {kind!r}")
