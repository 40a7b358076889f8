"""A Python value handed to a library function, checked in one line naming the parameter.

The one check of a seed and of a fraction for every public function that takes one
(:func:`same.data.split.make_split`, :func:`~same.data.split.validation_split`,
:func:`~same.data.split.train_subset`, :func:`same.data.synthetic.lda_corpus`, the runner's
spec): ``numbers.Integral`` and ``numbers.Real`` (NumPy's scalars included), never a
``bool`` (``True`` is an ``Integral`` in Python: ``seed=True`` was seed 1).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["check_seed", "check_fraction"]


def check_seed(value, name: str = "seed") -> int:
    """``value`` as an int: a whole number ≥ 0 (a NumPy integer included), not a bool.

    Raises
    ------
    ValueError
        ``<name> must be a non-negative integer, got <value>``.
    """
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def check_fraction(value, name: str, *, include_one: bool = False) -> float:
    """``value`` as a float in (0, 1), or (0, 1] when ``include_one``: a real number (a
    NumPy float included), not a bool.

    Raises
    ------
    ValueError
        ``<name> must be in (0, 1), got <value>`` (``(0, 1]`` when ``include_one``).
    """
    ok = (not isinstance(value, bool) and isinstance(value, Real) and math.isfinite(value)
          and 0 < value and (value <= 1 if include_one else value < 1))
    if not ok:
        raise ValueError(f"{name} must be in (0, {'1]' if include_one else '1)'}, got {value!r}")
    return float(value)
