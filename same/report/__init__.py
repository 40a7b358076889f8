"""Layer 4, the report: figures, tables and claim verdicts from runner traces (the paper's §5
tables and figures, and its claims).  Imports: every layer below (:mod:`same.experiments`,
:mod:`same.model`, :mod:`same.data`, :mod:`same.io`) and :mod:`baselines`' published settings.

Everything here reads ``trace.csv`` / ``meta.json`` files written by
:mod:`same.experiments.runner`; nothing is trained or scored.  Parts:

- :mod:`.paper` — the paper's numbers and claim statements (constants);
- :mod:`.traces` — loading traces and the measurements every part uses;
- :mod:`.figures` — PNG/PDF figures; :mod:`.tables` — tables 1 and 2 (CSV, Markdown);
- :mod:`.study` — the crossover study (final ll against tokens per φ parameter, crossovers);
- :mod:`.claims` — one function per claim returning a :class:`Verdict`;
- :mod:`.render` — ``claims.md`` from verdicts.
"""

from .claim_c9 import claim_c9
from .claims import CLAIM_FUNCTIONS, Verdict
from .figures import (
           fig_ll_vs_passes,
           fig_ll_vs_samples,
           fig_m,
           fig_schedules,
           fig_variants,
)
from .judge import judge_dataset, vb_comparison
from .paper import CLAIMS, CONVERGED_EPS, PAPER_TABLE1, PAPER_TABLE2
from .recovery import load_recovery, topic_recovery_rows, topic_recovery_table
from .render import claims, render_claims
from .seconds import fig_ll_vs_seconds
from .sensitivity_figure import fig_sensitivity
from .study import crossover, crossover_study, point_finals, seed_spread, study_findings, study_rows
from .tables import (
           table1,
           table1_rows,
           table2,
           table2_rows,
           time_to_quality,
           time_to_quality_rows,
)
from .timing import load_timing, retime
from .traces import configuration_frame, configurations, load_traces, shape_of, test_traces

__all__ = ["load_traces", "fig_ll_vs_passes", "fig_ll_vs_seconds", "fig_ll_vs_samples", "fig_m", "fig_schedules",
           "fig_variants", "table1", "table1_rows", "table2", "table2_rows", "claims",
           "render_claims", "judge_dataset", "vb_comparison", "claim_c9", "Verdict", "CLAIM_FUNCTIONS", "CLAIMS",
           "PAPER_TABLE1", "PAPER_TABLE2", "CONVERGED_EPS", "shape_of",
           "time_to_quality", "time_to_quality_rows", "fig_sensitivity", "crossover_study",
           "study_rows", "study_findings", "point_finals", "seed_spread", "crossover",
           "topic_recovery_rows",
           "topic_recovery_table", "load_recovery", "test_traces", "configurations", "configuration_frame", "load_timing", "retime"]
