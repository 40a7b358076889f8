"""Topic recovery on synthetic data: learned topics against the true ones (scale profile).

Each learned topic-word distribution is matched one-to-one to a true topic so that the
total of the total-variation distances is smallest (Hungarian algorithm,
``scipy.optimize.linear_sum_assignment``); the mean matched TV is 0 for a perfect recovery
(up to topic order) and at most 1.  For scale, the report also gives the mean TV between
distinct true topics: a learned topic that is no closer to its match than that has not been
recovered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["TopicRecovery", "tv_matrix", "topic_recovery"]


@numba.njit(parallel=True, cache=True)
def _tv(a, b, out):  # pragma: no cover - compiled
    for i in numba.prange(a.shape[0]):
        for j in range(b.shape[0]):
            s = 0.0
            for w in range(a.shape[1]):
                s += abs(a[i, w] - b[j, w])
            out[i, j] = 0.5 * s


def tv_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Total-variation distances between the rows of ``a`` (K_a, W) and ``b`` (K_b, W).

    Rows are renormalised to sum to 1 (float64).  Returns (K_a, K_b) float64 in [0, 1].
    Cost: K_a · K_b · W (6.7 · 10⁹ at K = 256, W = 102,660: seconds on two cores).

    Raises
    ------
    ValueError
        Different W, or a row that does not sum to a positive number.
    """
    a, b = (np.ascontiguousarray(x, dtype=np.float64) for x in (a, b))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"topic-word matrices must be (K, W) with the same W, got {a.shape} "
                         f"and {b.shape}")
    sums = [x.sum(axis=1, keepdims=True) for x in (a, b)]
    if any((s <= 0).any() or not np.isfinite(s).all() for s in sums):
        raise ValueError("every topic must have a positive, finite total")
    out = np.empty((a.shape[0], b.shape[0]))
    _tv(a / sums[0], b / sums[1], out)
    return out


@dataclass(frozen=True)
class TopicRecovery:
    """Learned topics matched to true ones.

    mean_tv, median_tv, max_tv : float
        Of the matched total-variation distances (one per matched pair; min(K_learned,
        K_true) pairs).
    matched_tv : ndarray (n_pairs,) float64, in true-topic order
    true_topic, learned_topic : ndarray (n_pairs,) int64, the matching
    true_pairwise_tv : float
        Mean TV between distinct true topics (the distance of an unrecovered topic).
    """

    mean_tv: float
    median_tv: float
    max_tv: float
    matched_tv: np.ndarray
    true_topic: np.ndarray
    learned_topic: np.ndarray
    true_pairwise_tv: float


def topic_recovery(learned: np.ndarray, true: np.ndarray) -> TopicRecovery:
    """Match ``learned`` (K_l, W) to ``true`` (K_t, W) topics by least total TV.

    Raises
    ------
    ValueError
        As :func:`tv_matrix`.
    """
    cost = tv_matrix(true, learned)
    rows, cols = linear_sum_assignment(cost)
    matched = cost[rows, cols]
    k = true.shape[0]
    pair = tv_matrix(true, true)
    pairwise = float(pair[~np.eye(k, dtype=bool)].mean()) if k > 1 else float("nan")
    return TopicRecovery(float(matched.mean()), float(np.median(matched)), float(matched.max()),
                         matched, rows.astype(np.int64), cols.astype(np.int64), pairwise)
