"""The module paths of 0.1 before the layers (``same.sampler``, ``same.corpus``, ...), kept
working until 0.2 with a FutureWarning (as issue 29 did for renamed parameters).

``same/`` was one flat folder; its modules now live in the layer packages (:mod:`same.io`,
:mod:`same.data`, :mod:`same.model`, :mod:`same.experiments`).  :class:`LegacyFinder`, put on
``sys.meta_path`` by ``same/__init__``, answers an import of an old path with a module that
warns once and forwards every attribute to the modules that now hold its names (so
``from same.sampler import SameLDA`` gives the very class :mod:`same.model.sampler` defines),
and ``python -m`` of an old path runs the new module.  No file stands at the old paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

__all__ = ["MOVED", "LegacyFinder", "new_path"]

#: Old module (under ``same.``) → the modules (under ``same.``) that hold its names now, the
#: one it became first.
MOVED: dict[str, tuple[str, ...]] = {
    "outputs": ("io.outputs",), "outputkinds": ("io.outputkinds",), "atomic": ("io.atomic",),
    "textinput": ("io.textinput",),
    "docword": ("data.docword",), "download": ("data.download", "io.cache"),
    "corpus": ("data.corpus", "data.registry"), "corpusspec": ("data.corpusspec",),
    "newsgroups": ("data.newsgroups",), "textcorpus": ("data.textcorpus",),
    "artefact": ("data.artefact",), "counts": ("data.count_matrix",),
    "structure": ("data.csr_structure",), "split": ("data.split",),
    "synthetic": ("data.synthetic",), "scale_data": ("data.planted",),
    "algorithm": ("model.algorithm",), "backend": ("model.backend",),
    "sampler": ("model.sampler",), "training": ("model.training",),
    "inference": ("model.inference",), "params": ("model.params", "data.protocol"),
    "schedules": ("model.schedules",), "evaluate": ("model.evaluate", "model.heldout_inputs"),
    "lefttoright": ("model.lefttoright",), "memory": ("model.fit_memory",),
    "recovery": ("model.topic_recovery",), "kernels": ("model.kernels",),
    "spec": ("experiments.spec",), "runs": ("experiments.runs", "experiments.plan"),
    "config": ("experiments.config",), "tuning": ("experiments.tuning", "experiments.plan"),
    "runner": ("experiments.runner",), "rundir": ("experiments.rundir",),
    "methods": ("experiments.methods", "data.protocol"),
    "provenance": ("experiments.provenance",), "cli": ("experiments.cli",),
    "check": ("experiments.verify_artefacts",), "scaling": ("experiments.size_cost",),
}
_PACKAGES = {"kernels"}  # old packages: their submodules move with them


def new_path(old: str) -> tuple[str, ...] | None:
    """The new modules of an old dotted path (``same.kernels.cpu`` →
    ``("same.model.kernels.cpu",)``), or None if ``old`` is not an old path."""
    parts = old.split(".")
    if len(parts) < 2 or parts[0] != "same" or parts[1] not in MOVED:
        return None
    if len(parts) > 2:
        if parts[1] not in _PACKAGES:
            return None
        return (".".join(["same", MOVED[parts[1]][0], *parts[2:]]),)
    return tuple(f"same.{m}" for m in MOVED[parts[1]])


class LegacyModule(types.ModuleType):
    """An old path: every attribute read from the new modules (:data:`MOVED`), in order."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        for target in self.__dict__["_same_targets"]:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {self.__name__!r} (now "
                             f"{self.__dict__['_same_targets'][0]}) has no attribute {name!r}")

    def __dir__(self):
        names = set()
        for target in self.__dict__["_same_targets"]:
            names |= set(dir(importlib.import_module(target)))
        return sorted(names)


class _CallableLegacyModule(LegacyModule):
    """``same.evaluate``: the old module path, and the evaluator ``same`` re-exports under the
    same name (whichever of the two a caller's ``same.evaluate`` ends up being, it works)."""

    def __call__(self, *args, **kwargs):
        return self.evaluate(*args, **kwargs)


class LegacyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A ``sys.meta_path`` finder and loader of the old paths (:func:`new_path`)."""

    def find_spec(self, fullname, path=None, target=None):
        targets = new_path(fullname)
        if targets is None:
            return None
        is_pkg = fullname.split(".")[1] in _PACKAGES and fullname.count(".") == 1
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_pkg)

    def create_module(self, spec):
        cls = _CallableLegacyModule if spec.name == "same.evaluate" else LegacyModule
        module = cls(spec.name)
        module.__dict__["_same_targets"] = new_path(spec.name)
        if spec.submodule_search_locations is not None:
            module.__path__ = []  # a package: its old submodules come through this finder too
        return module

    def exec_module(self, module):
        new = module.__dict__["_same_targets"][0]
        importlib.import_module(new)  # fails here, naming the new module, if it cannot import
        warnings.warn(f"{module.__name__} is deprecated in 0.1 and will be removed in 0.2: "
                      f"import {new}", FutureWarning, stacklevel=2)

    def get_code(self, fullname):
        """``python -m <old path>``: warn, then run the new module as ``__main__``."""
        new = new_path(fullname)[0]
        return compile(f"import runpy, warnings\nwarnings.warn({fullname!r} ' is deprecated in "
                       f"0.1 and will be removed in 0.2: python -m ' {new!r}, FutureWarning)\n"
                       f"runpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n",
                       f"<{fullname}: {new}>", "exec")

    def is_package(self, fullname):
        return fullname.split(".")[1] in _PACKAGES and fullname.count(".") == 1


def install() -> None:
    """Put one :class:`LegacyFinder` first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, LegacyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, LegacyFinder())
