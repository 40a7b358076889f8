"""Fixtures of the report's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def drawn_figures(monkeypatch):
    """Every figure a figure function gives to ``_save`` (saved as usual), in order, to read
    what was drawn: the main figures, fig1_seconds and the crossover study."""
    from same.report import figures, seconds, sensitivity_figure, study_figure

    saved = []
    real = figures._save

    def keep(fig, outputs, also=()):
        saved.append(fig)
        real(fig, outputs, also)

    for module in (figures, seconds, sensitivity_figure, study_figure):
        monkeypatch.setattr(module, "_save", keep)
    return saved
