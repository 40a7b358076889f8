"""The argument parser of every same-lda command: argparse's, a usage error in one line.

argparse prints the whole usage text before a usage error (a wrong type, a missing or unknown
option): several lines, where every other bad input of same-lda is one line naming what is
wrong, exit status 2. :class:`ArgumentParser` keeps argparse's exit status and message, and
drops the usage text (``--help`` still prints it).  :func:`whole_number` and
:func:`real_number` are the argument types of every option that takes a number, ranges
included, so a bad value is refused at parse time in one line naming the option
(``<prog>: error: argument --seed: must be a whole number of at least 0, not '-1'``).
"""

from __future__ import annotations

import argparse
import math

__all__ = ["ArgumentParser", "whole_number", "real_number"]


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose usage errors are one line on stderr,
    ``<prog>: error: <message>``, exit status 2; its subcommands' parsers are of this class
    too (argparse makes them of the parent's class)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def whole_number(minimum: int | None = None, maximum: int | None = None):
    """An argparse ``type``: a whole number in [minimum, maximum] (either bound optional)."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = None
        if n is None or (minimum is not None and n < minimum) or (
                maximum is not None and n > maximum):
            raise argparse.ArgumentTypeError(f"must be a whole number{_range(minimum, maximum)}, "
                                             f"not {text!r}")
        return n

    parse.__name__ = "whole number"
    return parse


def real_number(low: float | None = None, high: float | None = None, *,
                low_open: bool = False, high_open: bool = False):
    """An argparse ``type``: a finite number between low and high (a bound optional, open
    where ``low_open``/``high_open``)."""
    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        ok = math.isfinite(x) and (low is None or (x > low if low_open else x >= low)) and (
            high is None or (x < high if high_open else x <= high))
        if not ok:
            raise argparse.ArgumentTypeError(
                f"must be a finite number{_interval(low, high, low_open, high_open)}, "
                f"not {text!r}")
        return x

    parse.__name__ = "number"
    return parse


def _range(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" of at least {minimum}"
    return f" of at most {maximum}" if maximum is not None else ""


def _interval(low, high, low_open, high_open) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" {'above' if low_open else 'of at least'} {low:g}"
    if low is None:
        return f" {'below' if high_open else 'of at most'} {high:g}"
    return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
