"""Refusing non-finite rates before sampling, without host synchronisations on a GPU.

A NaN λ would never leave PTRS on the CPU; the per-element draws give 0 for one, so that a
GPU kernel never hangs while a deferred check (below) is pending.
"""

from __future__ import annotations

import numpy as np

from ..backend import array_module

__all__ = ["check_finite", "raise_if_not_finite"]

_NOT_FINITE = ("{} contains NaN or infinite values: refusing to sample (the model state is "
               "corrupt; check the input counts and priors)")
#: (name, device boolean "all finite") of CuPy inputs checked since the last
#: :func:`raise_if_not_finite`; read in one transfer at most this many at a time.
_PENDING: list = []
_PENDING_MAX = 64


def check_finite(**arrays) -> None:
    """Refuse NaN or infinite rates before sampling.

    NumPy arrays are checked now.  CuPy arrays are checked on the device without a host
    synchronisation (three per sweep otherwise): the verdict is read by
    :func:`raise_if_not_finite`, which the sampler calls after each step's synchronisation
    (a non-finite λ draws 0 in the kernels meanwhile: no hang, and the step is refused).

    Raises
    ------
    ValueError
        Naming the first NumPy array that holds a NaN or an infinity.
    """
    for name, a in arrays.items():
        xp = array_module(a)
        if xp is np:
            if not bool(np.isfinite(a).all()):
                raise ValueError(_NOT_FINITE.format(name))
            continue
        _PENDING.append((name, xp.isfinite(a).all()))
        if len(_PENDING) >= _PENDING_MAX:
            raise_if_not_finite()


def raise_if_not_finite() -> None:
    """Read the device checks :func:`check_finite` queued (one host transfer) and forget them.

    Raises
    ------
    ValueError
        Naming the first array found to hold a NaN or an infinity.
    """
    if not _PENDING:
        return
    names, flags = zip(*_PENDING)
    _PENDING.clear()
    ok = array_module(flags[0]).stack(flags).get()
    for name, good in zip(names, ok):
        if not good:
            raise ValueError(_NOT_FINITE.format(name))
