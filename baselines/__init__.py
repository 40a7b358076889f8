"""Baselines scored by the suite's own evaluator: CPU collapsed Gibbs (tomotopy,
:mod:`baselines.cgs`), gensim online / batch variational Bayes (:mod:`baselines.vb`) and
scikit-learn's online / batch variational Bayes (:mod:`baselines.sklearn_vb`).

Each baseline trains on a CSR count matrix and hands its topic-word matrix φ
(K × W over the FULL vocabulary, rows summing to 1) to a ``checkpoint``
callback at chosen points; time spent in the callback is excluded from the
reported training seconds.  Library-native scores are passed along only as a
secondary value, never compared across tools.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

__all__ = ["Checkpoint", "Stopwatch", "drain", "positive_int", "number_in"]

#: checkpoint(topic_word, info) — info has: pass, iteration, samples_per_word,
#: train_seconds, native_score (or None).
Checkpoint = Callable[..., None]


class Stopwatch:
    """Training time that excludes callback time: ``elapsed()`` minus time spent ``paused``."""

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self._paused = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self._start - self._paused

    @contextlib.contextmanager
    def pause(self):
        """Within this block the clock does not count (the consumer's time at a checkpoint)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._paused += time.perf_counter() - t0


def positive_int(name: str, value, what: str = "") -> int:
    """``value`` if it is an integer ≥ 1 (not a bool, not a string); else ValueError naming
    ``name`` (and ``what`` it counts)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer{f' ({what})' if what else ''}, "
                         f"got {value!r}")
    return int(value)


def number_in(name: str, value, low: float, high: float, what: str) -> float:
    """``value`` if it is a real number (not a bool) in [low, high]; else ValueError naming
    ``name`` and ``what`` it is."""
    from numbers import Real

    if isinstance(value, bool) or not isinstance(value, Real) or not low <= value <= high:
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}] ({what}), "
                         f"got {value!r}")
    return float(value)


def drain(checkpoints, checkpoint: Checkpoint | None = None):
    """Run a checkpoint generator of (φ, info) to the end, calling ``checkpoint(φ, info)`` at
    each; returns the last φ (None if it yielded nothing)."""
    phi = None
    for phi, info in checkpoints:
        if checkpoint is not None:
            checkpoint(phi, info)
    return phi
