# same-lda: regenerate every figure, table and claim verdict of "SAME but Different".
#   snakemake --cores all                                  # quick profile (KOS, CPU)
#   snakemake --cores all --configfile config/paper.yaml   # paper profile (NYTimes, PubMed, GPU)
import sys
import time
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

from same.experiments.config import (backend_problem, check_config, check_config_files,
                                     config_error_line, rename_keys, seeds_note, type_overrides)
from same.data.textcorpus import check_corpus_paths
from same.experiments.joblogs import job_errors

min_version("8.0")


# the default profile, found beside this Snakefile even with --directory elsewhere; any
# --configfile (a profile such as config/paper.yaml) is merged over it as a delta
configfile: str(Path(workflow.basedir) / "config/config.yaml")


# A bad config stops here, before any job: one line on stderr naming the key, exit status 1
# (an exception raised here would be printed by Snakemake with its frames and, for a schema
# error, a multi-line dump of the schema). RUNS: the table of runs, label → method, budget,
# params, seeds (same.experiments.plan.plan_runs), every run's spec validated.
try:
    # a key given twice in a config file (Snakemake's loader keeps the last one)
    check_config_files(workflow.configfiles)
    # --config 'same={passes: 5}': Snakemake hands a nested override's values as text
    type_overrides(config, getattr(getattr(workflow, "config_settings", None), "config", None))
    rename_keys(config)  # keys renamed in 0.1 (scale_study), accepted until 0.2
    # also fills in the schema's defaults: the workflow's own (split, cache_dir, ...); SameLDA's
    # parameters have none there, so an absent same.<key> takes the estimator's default
    validate(config, "config/config.schema.yaml")
    RUNS = check_config(config, Path(workflow.basedir) / "config/config.schema.yaml")
    check_corpus_paths(config)  # corpora: entries' files exist (same.data.textcorpus)
except (WorkflowError, ValueError) as exc:
    sys.exit(config_error_line(exc))

# The config's backend must run where the jobs run. Which executor runs them is known only
# once the run starts (not while this file is read, nor in a dry run): a run whose jobs run
# on this machine stops at its start, before any job, in one line; a dry run notes it; a
# cluster's jobs are checked on their nodes (each fit job: `same-lda fit`, one line).
BACKEND_PROBLEM = backend_problem(config) if workflow.is_main_process else None
if BACKEND_PROBLEM:
    print(f"note: {BACKEND_PROBLEM}: a run whose jobs run here stops before its first job",
          file=sys.stderr)
# fewer seeds than the verdicts are built for: said before any fit (a dry run says it too)
SEEDS_NOTE = seeds_note(config) if workflow.is_main_process else None
if SEEDS_NOTE:
    print(f"note: {SEEDS_NOTE}", file=sys.stderr)
# the cost before any fit, until this profile has one (workflow/rules/estimate.smk)
if workflow.is_main_process and not Path(config.get("report_dir") or "results",
                                         "estimate.json").exists():
    print("note: `snakemake --cores all estimate` (with this run's --configfile and --config) "
          "prints the expected minutes per method on this machine before any fit",
          file=sys.stderr)


# a job that refused its input ended its log with one line naming the file or key: said here,
# not only "check log file(s) for error details" (same.experiments.joblogs)
STARTED = time.time()


onerror:
    for line in job_errors("results/logs", STARTED):
        print(f"job log {line}", file=sys.stderr)


onstart:
    if BACKEND_PROBLEM and workflow.local_exec and not workflow.touch:
        sys.exit(f"{BACKEND_PROBLEM}, where this run's jobs run; give backend: numpy, "
                 "or run where CuPy and a CUDA device are")


# snakemake --report results/report.html: its front page (each figure and table: report.smk)
report: "workflow/report/workflow.rst"


# report_only (--config report_only=True): the committed traces, tuning runs and C9's result
# are the inputs, no rule makes them, so every figure, table and claims.md is rebuilt from them
# without a split or a fit (a fresh clone has neither: models and splits are not committed)
REPORT_ONLY = bool(config.get("report_only"))


include: "workflow/rules/common.smk"
if not REPORT_ONLY:

    include: "workflow/rules/data.smk"
    include: "workflow/rules/fit.smk"
    include: "workflow/rules/timing.smk"


include: "workflow/rules/tuning.smk"
include: "workflow/rules/report.smk"
if not REPORT_ONLY:

    include: "workflow/rules/estimate_plan.smk"
    include: "workflow/rules/estimate.smk"


rule all:
    input:
        all_outputs(),
    default_target: True
