"""Thin Snakemake script: redirect the log, call one function of same.report per rule."""

import logging
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w")  # noqa: F821  (provided by Snakemake)
logging.basicConfig(stream=sys.stderr, level=logging.INFO)

from same import report  # noqa: E402

smk = snakemake  # noqa: F821
rule = smk.rule
df = report.load_traces(smk.input.traces)
caption = smk.params.get("setting", "")
# the seconds measured alone (rule timing's timing.json); None: none, so they are refused
timing = report.load_timing(smk.input.timing[0]) if smk.input.get("timing") else None
# the main SAME run over its seeds, whose spread a one-seed figure's zooms draw
spread = report.load_traces(smk.input.spread) if smk.input.get("spread") else None

if rule == "fig1_passes":
    report.fig_ll_vs_passes(df, smk.output, caption, smk.params.max_passes)
elif rule == "fig1_seconds":
    report.fig_ll_vs_seconds(df, smk.output, caption, timing)
elif rule == "fig1c_samples":
    report.fig_ll_vs_samples(df, smk.output, caption, dict(smk.params.labels), spread)
elif rule == "fig2a_m":
    report.fig_m(df, smk.output, caption, dict(smk.params.runs))
elif rule == "fig2b_anneal":
    report.fig_schedules(df, smk.output, caption, dict(smk.params.runs))
elif rule == "prior_scale":
    report.fig_variants(df, smk.output, caption, dict(smk.params.runs),
                        "counts against the priors α, β (prior_scale)", spread=spread)
elif rule == "table1":
    report.table1(df, smk.output.csv, smk.output.md, caption, timing)
elif rule == "time_to_quality":
    report.time_to_quality(df, smk.output.csv, smk.output.md, caption, timing)
elif rule == "sensitivity":
    report.fig_sensitivity(df, smk.output.figures, smk.output.csv, caption,
                           {k: dict(v) for k, v in dict(smk.params.runs).items()})
elif rule == "crossover_study":
    report.crossover_study(df, smk.output.figures, smk.output.csv, smk.output.md, caption,
                       main_n_topics=smk.params.main_n_topics)
elif rule == "table2":
    report.table2(df, dict(smk.params.runs), smk.output.csv, smk.output.md, caption)
elif rule == "topic_recovery":
    import numba

    numba.set_num_threads(max(1, min(smk.threads, numba.config.NUMBA_NUM_THREADS)))
    models = dict(zip(smk.params.labels, smk.input.models))
    report.topic_recovery_table(df, models, smk.input.truth, smk.output.csv, smk.output.md,
                                caption, smk.input.split, smk.params.doc_topic_prior)
elif rule == "claims":
    per = {}
    df = report.test_traces(df)  # tuning and sensitivity runs are scored on validation documents
    study = df["label"].str.startswith("study_")
    for name in smk.params.datasets:
        per[name] = {"df": df[(df["dataset"] == name) & ~study],
                     "study": df[(df["dataset"] == name) & study],
                     "m_runs": dict(smk.params.m_runs),
                     "schedule_runs": dict(smk.params.schedule_runs),
                     "fig1c": dict(smk.params.fig1c),
                     "prior_scale_runs": dict(smk.params.prior_scale_runs),
                     "recovery": dict(smk.params.recovery).get(name),
                     "tuning": dict(smk.params.tuning).get(name),
                     "timing": dict(smk.params.timing).get(name),
                     "shown": list(dict(smk.params.shown).get(name, []))}
    scaling = smk.input.scaling  # [] where the profile runs no scaling benchmark
    scaling = [scaling] if isinstance(scaling, str) else list(scaling)
    verdicts = report.claims(per, smk.output.md, caption, scaling=(scaling or [None])[0],
                             gpu=list(smk.input.gpu))
    from same.report.overview import fig_verdict_overview

    scales = {name: report.shape_of(info["df"], name) for name, info in per.items()}
    fig_verdict_overview(verdicts, smk.output.overview, caption, scales)
else:
    raise ValueError(f"no report function for rule {rule!r}")
print(f"wrote {list(smk.output)}")
