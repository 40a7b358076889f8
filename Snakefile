# same-lda: regenerate every figure, table and claim verdict of "SAME but Different".
#   snakemake --cores all                                  # quick profile (KOS, CPU)
#   snakemake --cores all --configfile config/paper.yaml   # paper profile (NYTimes, PubMed, GPU)
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("8.0")


# the default profile, found beside this Snakefile even with --directory elsewhere; any
# --configfile (a profile such as config/paper.yaml) is merged over it as a delta
configfile: str(Path(workflow.basedir) / "config/config.yaml")



validate(config, "config/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/fit.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_outputs(),
    default_target: True
