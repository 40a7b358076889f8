# same-lda: regenerate every figure, table and claim verdict of "SAME but Different".
#   snakemake --cores all                                  # quick profile (KOS, CPU)
#   snakemake --cores all --configfile config/paper.yaml   # paper profile (NYTimes, PubMed, GPU)
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

from same.config import check_config, config_error_line

min_version("8.0")


# the default profile, found beside this Snakefile even with --directory elsewhere; any
# --configfile (a profile such as config/paper.yaml) is merged over it as a delta
configfile: str(Path(workflow.basedir) / "config/config.yaml")


# A bad config stops here, before any job: one line on stderr naming the key, exit status 1
# (an exception raised here would be printed by Snakemake with its frames and, for a schema
# error, a multi-line dump of the schema). RUNS: the table of runs, label → method, budget,
# params, seeds (same.runs.plan_runs), every run's spec validated.
try:
    # also fills in the schema's defaults: the workflow's own (split, cache_dir, ...); SameLDA's
    # parameters have none there, so an absent same.<key> takes the estimator's default
    validate(config, "config/config.schema.yaml")
    RUNS = check_config(config, Path(workflow.basedir) / "config/config.schema.yaml")
except (WorkflowError, ValueError) as exc:
    sys.exit(config_error_line(exc))


# snakemake --report results/report.html: its front page (each figure and table: report.smk)
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/fit.smk"
include: "workflow/rules/tuning.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_outputs(),
    default_target: True
