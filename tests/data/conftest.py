"""Fixtures of the data layer's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, and no $SAME_DATA_DIR: text corpora are built here."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SAME_CACHE_DIR", str(d))
    monkeypatch.setenv("SAME_DATA_DIR", "")
    return d
