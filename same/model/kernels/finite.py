"""Refusing non-finite rates before sampling, without host synchronisations on a GPU.

A NaN λ would never leave PTRS on the CPU; the per-element draws give 0 for one, so that a
GPU kernel never hangs while a deferred check (below) is pending.

Deferred checks belong to the call that queued them: only inside :func:`deferred_checks`
(the training step opens one per minibatch step) are CuPy checks queued, and they are read
or dropped when that scope ends. A kernel called directly (a benchmark, the evaluator, a
user) reads its own check at once, so nothing it did can be blamed on a later fit.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from same.model.backend import array_module

__all__ = ["check_finite", "deferred_checks", "raise_if_not_finite"]

_NOT_FINITE = ("{} contains NaN or infinite values: refusing to sample (the model state is "
               "corrupt; check the input counts and priors)")
#: A scope's queued checks are read in one transfer at most this many at a time.
_PENDING_MAX = 64


class DeferredChecks:
    """The (name, device boolean "all finite") pairs one scope queued, read in one transfer."""

    def __init__(self) -> None:
        self.pending: list = []

    def add(self, name: str, flag) -> None:
        self.pending.append((name, flag))
        if len(self.pending) >= _PENDING_MAX:
            self.raise_if_not_finite()

    def raise_if_not_finite(self) -> None:
        """Read the queued checks (one host transfer) and forget them.

        Raises
        ------
        ValueError
            Naming the first array found to hold a NaN or an infinity.
        """
        if not self.pending:
            return
        names, flags = zip(*self.pending)
        self.pending.clear()
        ok = _to_pinned(array_module(flags[0]).stack(flags))
        for name, good in zip(names, ok):
            if not good:
                raise ValueError(_NOT_FINITE.format(name))


def _to_pinned(flags):
    """A device array's values in page-locked host memory: the one transfer of a step, a
    direct DMA rather than a copy through a pageable staging buffer."""
    import cupyx

    host = cupyx.empty_pinned(flags.shape, dtype=flags.dtype)
    flags.get(out=host)
    return host


#: The innermost open :func:`deferred_checks` scope of this thread / context, or None.
_SCOPE: contextvars.ContextVar[DeferredChecks | None] = contextvars.ContextVar(
    "same_deferred_checks", default=None)


@contextlib.contextmanager
def deferred_checks():
    """Queue the CuPy finiteness checks of the calls inside; yields the :class:`DeferredChecks`.

    Read them with its ``raise_if_not_finite()`` after the host synchronises (the training
    step does, once per step). Checks still queued when the scope ends are dropped: the
    scope's owner read them or failed for another reason, and no later call inherits them.
    """
    checks = DeferredChecks()
    token = _SCOPE.set(checks)
    try:
        yield checks
    finally:
        _SCOPE.reset(token)
        checks.pending.clear()


def check_finite(**arrays) -> None:
    """Refuse NaN or infinite rates before sampling.

    NumPy arrays are checked now. CuPy arrays are checked on the device: inside
    :func:`deferred_checks` without a host synchronisation (three per sweep otherwise), the
    verdict read when the scope's owner calls ``raise_if_not_finite()`` (a non-finite λ
    draws 0 in the kernels meanwhile: no hang, and the step is refused); outside one, read
    at once (one synchronisation), so a direct kernel call answers for its own inputs.

    Raises
    ------
    ValueError
        Naming the first array that holds a NaN or an infinity (checked now, or, in a scope,
        the first of a full queue of :data:`_PENDING_MAX`).
    """
    scope = _SCOPE.get()
    for name, a in arrays.items():
        xp = array_module(a)
        if xp is np:
            if not bool(np.isfinite(a).all()):
                raise ValueError(_NOT_FINITE.format(name))
        elif scope is not None:
            scope.add(name, xp.isfinite(a).all())
        elif not bool(xp.isfinite(a).all()):
            raise ValueError(_NOT_FINITE.format(name))


def raise_if_not_finite() -> None:
    """Read the checks the innermost open :func:`deferred_checks` scope queued (one host
    transfer) and forget them; nothing outside a scope.

    Raises
    ------
    ValueError
        Naming the first array found to hold a NaN or an infinity.
    """
    scope = _SCOPE.get()
    if scope is not None:
        scope.raise_if_not_finite()
