"""Thin Snakemake script of rule estimate: probe, print the table (stderr), write
estimate.{json,txt} and the table to the log (same.experiments.estimate)."""

import shutil
import sys

from same.experiments.estimate import main

smk = snakemake  # noqa: F821  (provided by Snakemake)
status = main(["--plan", smk.params.plan, "--out", smk.output.json, "--table", smk.output.table])
if status:
    sys.exit(status)
shutil.copyfile(smk.output.table, smk.log[0])
