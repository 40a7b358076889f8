"""The argument parser of every same-lda command: argparse's, a usage error in one line.

argparse prints the whole usage text before a usage error (a wrong type, a missing or unknown
option): several lines, where every other bad input of same-lda is one line naming what is
wrong, exit status 2. :class:`ArgumentParser` keeps argparse's exit status and message, and
drops the usage text (``--help`` still prints it).
"""

from __future__ import annotations

import argparse

__all__ = ["ArgumentParser"]


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose usage errors are one line on stderr,
    ``<prog>: error: <message>``, exit status 2; its subcommands' parsers are of this class
    too (argparse makes them of the parent's class)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")
