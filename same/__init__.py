"""same-lda: SAME Gibbs sampling for LDA (Zhao, Jiang, Canny 2014), its baselines and evaluator.

The package is four layers, each importing only those below it (checked by import-linter:
``lint-imports``, contracts in ``pyproject.toml``), with :mod:`baselines` beside the model:

- :mod:`same.io` — the write discipline of every output, strict JSON/YAML reading;
- :mod:`same.data` — count matrices, corpora, the held-out split;
- :mod:`same.model` — the SAME sampler (paper Algorithm 3, a scikit-learn estimator), its
  kernels and the one held-out evaluator;
- :mod:`same.experiments` — runs as data, the runner, tuning, the ``same-lda`` command;
- :mod:`same.report` — figures, tables and claim verdicts from the runs' traces.

Re-exported here: :class:`SameLDA` (:mod:`same.model.sampler`), :func:`load` (a UCI corpus,
:mod:`same.data.corpus`), :func:`make_split` (:mod:`same.data.split`) and :func:`evaluate`
(:mod:`same.model.evaluate`).  The 0.1 module paths (``same.sampler``, ``same.corpus``, ...)
still import until 0.2, with a FutureWarning (:mod:`same._legacy`).  Importing the package
never initialises CUDA.
"""

from importlib.metadata import PackageNotFoundError, version

from . import _legacy

try:
    __version__ = version("same-lda")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["SameLDA", "load", "make_split", "evaluate"]

#: Re-exported name → the module that defines it (imported on first use: ``import same``
#: stays cheap).
_EXPORTS = {"SameLDA": "same.model.sampler", "load": "same.data.corpus",
            "make_split": "same.data.split", "evaluate": "same.model.evaluate"}

_legacy.install()


def __getattr__(name):  # lazy re-exports keep `import same` cheap
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'same' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
