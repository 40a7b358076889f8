"""The verdict overview (issue 31, its axes issue 39): the grid of claims by dataset and further
axes (``same.report.overview.verdict_grid``), its cells and labels, and the figure drawn for
every outcome."""

from __future__ import annotations

from dataclasses import dataclass

from same.report.figures import figure_caption
from same.report.overview import OUTCOME_COLORS, fig_verdict_overview, verdict_column, verdict_grid
from same.report.verdicts import Outcome, Verdict


@dataclass(frozen=True)
class _AxisVerdict(Verdict):
    """A verdict with the two axes the next issue adds (held-out metric, configuration)."""

    metric: str | None = None
    configuration: str | None = None


def test_verdict_grid_columns_are_dataset_scale_then_further_axes():
    scales = {"kos": {"tokens_per_parameter": 0.0912}, "nips": {"tokens_per_parameter": 1.5}}
    vs = [Verdict("C2", "kos", Outcome.PARTLY, ("x",)),
          Verdict("C9", None, Outcome.REPRODUCED, ("x",)),
          Verdict("C10", "nips", Outcome.NOT_TESTABLE, ("x",), cpu_for_gpu_claim=True),
          Verdict("C1", "nips", Outcome.NOT_REPRODUCED, ("x",))]
    claims, columns, cells = verdict_grid(vs, scales)
    assert claims == [("C1", None), ("C2", None), ("C9", None), ("C10", None)]
    # no verdict carries a metric or configuration: a column per dataset, C9 across them all
    assert columns == ["kos\n0.0912 tok/param", "nips\n1.5 tok/param"]
    assert cells[(0, 1)].outcome is Outcome.NOT_REPRODUCED and (0, 0) not in cells
    assert cells[(2, 0)].claim == cells[(2, 1)].claim == "C9"
    _, alone, _ = verdict_grid([vs[1]], scales)  # nothing to span: a column of its own
    assert alone == ["across datasets"]
    assert verdict_column(vs[0]) == "kos"  # scale unknown
    more = _AxisVerdict("C1", "kos", Outcome.PARTLY, ("x",), metric="left-to-right",
                        configuration="GPU")
    label = verdict_column(more, scales)  # lines wrapped at 20 characters
    assert label.startswith("kos\n0.0912 tok/param\nmetric:")
    assert " ".join(label.split()) == ("kos 0.0912 tok/param metric: left-to-right "
                                       "configuration: GPU")
    _, columns, _ = verdict_grid([more, _AxisVerdict("C1", "kos", Outcome.PARTLY, ("x",),
                                                     metric="document completion")], scales)
    assert len(columns) == 2
    # a claim judged against each VB implementation gets a row per implementation
    per_vb = [Verdict("C1", "kos", o, ("x",), metric="ll", vb=vb)
              for vb, o in (("gensim", Outcome.PARTLY), ("scikit-learn", Outcome.REPRODUCED))]
    rows, columns, cells = verdict_grid(per_vb, scales)
    assert rows == [("C1", "gensim"), ("C1", "scikit-learn")]
    assert columns == ["kos\n0.0912 tok/param\ndocument completion"]
    assert cells[(0, 0)].outcome is Outcome.PARTLY and cells[(1, 0)].outcome is Outcome.REPRODUCED


def test_verdicts_without_axes_fill_their_columns_instead_of_opening_sparse_ones():
    """Issue 39: a claim judged once per dataset (C6) fills its dataset's columns and a
    cross-dataset claim (C9) every column, so no column holds one claim only; a dataset with
    no column of its own still gets one."""
    scales = {"kos": {"tokens_per_parameter": 1.0}, "nips": {"tokens_per_parameter": 2.0}}
    per_metric = [_AxisVerdict("C1", d, Outcome.PARTLY, ("x",), metric=m)
                  for d in ("kos", "nips") for m in ("document completion", "left-to-right")]
    c6 = Verdict("C6", "kos", Outcome.NOT_TESTABLE, ("x",))
    c9 = Verdict("C9", None, Outcome.REPRODUCED, ("x",))
    lone = Verdict("C6", "enron", Outcome.PARTLY, ("x",))
    claims, columns, cells = verdict_grid([*per_metric, c6, c9, lone], scales)
    assert len(columns) == 5 and columns[-1] == "enron"
    assert claims == [("C1", None), ("C6", None), ("C9", None)]
    kos_cols = [j for j, c in enumerate(columns) if c.startswith("kos")]
    assert len(kos_cols) == 2
    assert [j for (i, j), v in cells.items() if v is c6] == kos_cols
    assert sorted(j for (i, j), v in cells.items() if v is c9) == [0, 1, 2, 3, 4]
    assert [j for (i, j), v in cells.items() if v is lone] == [4]
    # every column holds the verdicts of more than one claim
    for j in range(len(columns)):
        assert len({cells[k].claim for k in cells if k[1] == j}) > 1, columns[j]
    # the figure draws one cell per run of the same verdict, naming what it spans
    from same.report.overview import _outcome_text, _row_label, _runs

    row = [cells.get((1, j)) for j in range(len(columns))]
    assert _runs(row) == [(0, 2), (2, 1), (3, 1), (4, 1)]
    assert _outcome_text(c9, spans=True).endswith("(across datasets)")
    # the claim's whole statement, wrapped, never shortened
    title = "larger m converges better per pass; little gain beyond m = 100"
    label = _row_label("C7", title, "gensim")
    assert " ".join(label.split()) == f"C7 {title} VB: gensim" and "…" not in label
    assert max(len(line) for line in label.splitlines()) <= 52


def test_every_outcome_has_a_colour_and_the_overview_is_drawn(tmp_path):
    assert set(OUTCOME_COLORS) == {o.value for o in Outcome}
    vs = [Verdict(f"C{i}", d, o, ("x",)) for i, o in enumerate(Outcome, 1) for d in ("kos", "nips")]
    vs.append(Verdict("C9", None, Outcome.PARTLY, ("x",), by_time_to_quality=True))
    outs = [tmp_path / "overview.png", tmp_path / "overview.pdf"]
    fig_verdict_overview(vs, outs, "kos + nips, K=64", {"kos": {"tokens_per_parameter": 0.1}})
    assert all(p.stat().st_size > 1000 for p in outs)
    assert figure_caption("verdict_overview", "S").startswith("S; rows: the paper's claims")
    assert figure_caption("fig2a_m", "S").startswith("S; SAME's held-out ll after each pass")
    assert figure_caption("fig1_passes", "S").startswith("S; held-out ll of the main")
