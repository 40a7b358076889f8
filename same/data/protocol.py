"""How every method walks a corpus, one source for SAME and the baselines: the paper's
minibatch size and the checkpoint series at which φ is scored."""

from __future__ import annotations

import math

__all__ = ["PAPER_MINIBATCHES", "paper_batch_size", "CHECKPOINTS"]

#: The paper's minibatch: 1/PAPER_MINIBATCHES of the documents (Zhao, Jiang, Canny §5; the
#: online VB baselines use the same), the default of every method with a minibatch.
PAPER_MINIBATCHES = 20


def paper_batch_size(n_docs: int) -> int:
    """Documents per minibatch of the paper's setting: ceil(n_docs / :data:`PAPER_MINIBATCHES`)."""
    return math.ceil(n_docs / PAPER_MINIBATCHES)


#: The 1-2-5 series of checkpoints up to 2000 (passes, or Gibbs iterations for CGS).
CHECKPOINTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
