"""same-lda's cache folder: downloads and parsed corpora (:mod:`same.data.download`,
:mod:`same.data.corpus`, :mod:`same.data.textcorpus`), and what the write discipline
(:mod:`same.io.outputkinds`) may rebuild there."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "usable_cache_dir"]


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


def usable_cache_dir() -> Path:
    """:func:`cache_dir`, refused in one line naming ``$SAME_CACHE_DIR`` (or the user cache)
    when it, or the nearest of its folders that exists, is not a folder: downloading into it
    failed with ``FileExistsError`` for every source, naming neither.

    Raises
    ------
    NotADirectoryError
        ``$SAME_CACHE_DIR /path: /path is a file, not a folder; ...``.
    """
    target = cache_dir()
    named = ("$SAME_CACHE_DIR " if os.environ.get("SAME_CACHE_DIR") else
             "the user cache folder ")
    existing = next((p for p in (target, *target.parents) if os.path.lexists(p)), None)
    if existing is not None and not existing.is_dir():
        raise NotADirectoryError(f"{named}{target}: {existing} is a file, not a folder; set "
                                 "SAME_CACHE_DIR to a folder for downloads and parsed corpora")
    return target
