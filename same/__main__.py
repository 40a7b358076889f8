"""``python -m same``: the same command line as the ``same-lda`` console script."""

import sys

from .experiments.cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m same"))
