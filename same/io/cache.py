"""same-lda's cache folder: downloads and parsed corpora (:mod:`same.data.download`,
:mod:`same.data.corpus`, :mod:`same.data.textcorpus`), and what the write discipline
(:mod:`same.io.outputkinds`) may rebuild there."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """Directory for downloads and parsed caches.

    ``$SAME_CACHE_DIR`` when set (the workflow points it at the project's
    ``datasets/``), else the platform user cache (``~/.cache/same-lda`` on Linux).
    """
    env = os.environ.get("SAME_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("same-lda"))
