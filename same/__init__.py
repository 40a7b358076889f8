"""same-lda: SAME Gibbs sampling for LDA (Zhao, Jiang, Canny 2014), its baselines and evaluator.

Main entry points: :class:`same.sampler.SameLDA`, :func:`same.corpus.load`,
:func:`same.split.make_split`, :func:`same.evaluate.evaluate`, :func:`same.runner.run`.
Importing the package never initialises CUDA.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("same-lda")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"


def __getattr__(name):  # lazy re-exports keep `import same` cheap
    if name == "SameLDA":
        from .sampler import SameLDA

        return SameLDA
    raise AttributeError(f"module 'same' has no attribute {name!r}")
