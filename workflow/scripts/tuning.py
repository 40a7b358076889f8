"""Thin Snakemake script of rule tuning: redirect the log, choose each method's settings on
validation documents (same.experiments.tuning), write tuning.{csv,md,json}. Apart from report.py, so that
editing the figures' script leaves the choice, and the tuned fits that read it, as they are."""

import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w")  # noqa: F821  (provided by Snakemake)

from same.experiments.tuning import tuning_rows, write_tuning  # noqa: E402

smk = snakemake  # noqa: F821
write_tuning(tuning_rows(smk.input.traces), dict(smk.params.points), smk.output.csv,
             smk.output.md, smk.output.choice, smk.params.caption)
print(f"wrote {list(smk.output)}")
