"""``python -m same.run``: the old name of ``python -m same`` (accepted until 0.2, with a
FutureWarning)."""

import sys
import warnings

from .experiments.cli import main

if __name__ == "__main__":
    warnings.warn("python -m same.run is deprecated in 0.1 and will be removed in 0.2: use "
                  "python -m same (or same-lda)", FutureWarning, stacklevel=1)
    sys.exit(main(prog="python -m same.run"))
