"""Kept for its importers: the write discipline lives in :mod:`same.io.outputs`."""

from .outputs import write_file

__all__ = ["atomic_write", "write_file"]


def atomic_write(path, write):
    """:func:`same.io.outputs.write_file` of a new file (an existing ``path`` is refused)."""
    return write_file(path, write)
