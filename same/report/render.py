"""``claims.md`` rendered from :class:`~same.report.verdicts.Verdict` objects: each verdict's
outcome and qualifiers (:attr:`~same.report.verdicts.Verdict.verdict`), our numbers, the
paper's, and the claim's rule with its thresholds (:data:`~same.report.verdicts.RULES`)."""

from __future__ import annotations

from pathlib import Path

from same.experiments.tuning import CONFIGURATIONS
from same.experiments.tuning import (
    _settings_text as settings_text,  # tuning.md's text of a configuration
)
from same.io.outputs import check_target, text_kind, write_text

from .captions import FIGURE_CLAIMS
from .claim_c9 import claim_c9
from .findings import across_datasets_line, findings_lines, order_effects
from .gpu import newest_gpu_measurement
from .judge import gpu_judged_once, judge_dataset, vb_comparison
from .paper import METHOD_NAMES
from .recovery import load_recovery, recovery_lines
from .study import crossover_summary, point_finals, seed_spread, study_findings, study_rows
from .timing import load_timing
from .traces import PAPER_TOKENS_PER_PARAMETER, per_parameter_text, shape_of, test_traces
from .verdicts import (
    METRIC_REASON,
    METRICS,
    METRICS_SHORT,
    ORDER_CLAIMS,
    PRIMARY_METRIC,
    PRIMARY_REASON,
    Verdict,
)

__all__ = ["render_claims", "claims"]


def _under(v: Verdict) -> str:
    """"under <metric>, <configuration>, VB: <implementation>" for the qualifiers it has."""
    parts = ([f"under {v.metric_name}"] if v.metric else []) + (
        [v.configuration_name] if v.configuration else []) + ([f"VB: {v.vb}"] if v.vb else [])
    return ", ".join(parts)


def _section(v: Verdict, shown=()) -> list[str]:
    """A verdict's section; ``shown``: the paths of the dataset's figures and tables, of which
    those that bear on the claim (:data:`~same.report.captions.FIGURE_CLAIMS`) are named."""
    under = _under(v)
    paths = [p for p in shown if v.claim in FIGURE_CLAIMS.get(Path(p).stem, ())]
    return ([f"### {v.claim} — {v.title}{' — ' + under if under else ''}: **{v.verdict}**", ""]
            + [f"- {line}" for line in v.ours]
            + ([f"- shown in: {', '.join(f'`{p}`' for p in paths)}"] if paths else [])
            + [f"- paper: {v.paper}", f"- verdict rule: {v.rule}", ""])


#: The summary's verdict columns: (metric, configuration), document completion first.
_COLUMNS = [(m, c) for m in METRICS_SHORT for c in CONFIGURATIONS]


def _summary_rows(verdicts: list[Verdict], where) -> list[str]:
    """One row per claim, dataset and VB implementation: its verdict under each held-out
    estimator × configuration (a timing claim's under each configuration, once). The
    estimators are reported side by side, never counted as votes."""
    cells: dict = {}
    for v in verdicts:
        ds = (where(v.dataset) if v.dataset is not None else
              "all datasets" if v.covers is None else ", ".join(map(where, v.covers)))
        row = cells.setdefault((v.claim, ds + (f", VB: {v.vb}" if v.vb else "")), {})
        row[(v.metric, v.configuration)] = v
    head = ["| claim | dataset | " + " | ".join(f"{METRICS_SHORT[m]}, {CONFIGURATIONS[c]}"
                                                for m, c in _COLUMNS) + " |",
            "|---|---|" + "---|" * len(_COLUMNS)]
    body = [f"| {claim} | {ds} | " + " | ".join(_cell(row, m, c) for m, c in _COLUMNS) + " |"
            for (claim, ds), row in sorted(cells.items())]
    return head + body


def _cell(row: dict, metric: str, configuration: str) -> str:
    """A summary cell: the verdict under ``metric`` and ``configuration``; a timing claim's
    (metric None) in the first metric's column, a dash with the reason in the others; a claim
    judged once (configuration None) in the first column."""
    first_metric = metric == next(iter(METRICS_SHORT))
    for key in ((metric, configuration), (None, configuration), (None, None)):
        v = row.get(key)
        if v is None:
            continue
        if key[0] is None and not first_metric:
            return "— (about time only)"
        if key[1] is None and configuration != next(iter(CONFIGURATIONS)):
            return "— (judged once)"
        return v.verdict
    return "—"


def _disagreements(verdicts: list[Verdict], axis: str, names: dict) -> list[str]:
    """Where a claim's outcome on a dataset (and VB implementation, and the other axis)
    differs along ``axis`` ("metric" or "configuration"; ``names``: value → its name)."""
    other = "configuration" if axis == "metric" else "metric"
    by = {}
    for v in verdicts:
        if getattr(v, axis) is not None and v.dataset is not None:
            key = (v.claim, v.dataset, v.vb, getattr(v, other))
            by.setdefault(key, {})[getattr(v, axis)] = v.outcome.value
    lines = []
    for (claim, dataset, vb, at), outcomes in by.items():
        if len(set(outcomes.values())) > 1:
            ctx = ", ".join(x for x in (dataset, f"VB: {vb}" if vb else None,
                                        _axis_name(other, at)) if x)
            lines.append(f"- {claim} ({ctx}): " + "; ".join(
                f"{o} {names[a]}" for a, o in outcomes.items()))
    return lines


def _axis_name(axis: str, value) -> str | None:
    if value is None:
        return None
    return f"under {METRICS_SHORT[value]}" if axis == "metric" else CONFIGURATIONS[value]


def _metric_section(verdicts: list[Verdict]) -> list[str]:
    lines = _disagreements(verdicts, "metric", {m: f"under {n}" for m, n in METRICS.items()})
    names = [METRICS[m] for m in METRICS]
    out = ["## Three held-out estimators", "",
           f"Every claim about held-out ll is judged under each of {', '.join(names[:-1])} and "
           f"{names[-1]}, from the same traces, and each gives its own verdict: they are "
           f"never counted as votes. The primary estimator is "
           f"{METRICS_SHORT[PRIMARY_METRIC]}: {PRIMARY_REASON}.", ""]
    if not lines:
        return out + ["Every claim judged on held-out ll has the same outcome under every "
                      "estimator.", ""]
    return out + ["Where the outcome differs between estimators (where document completion "
                  "and the paper's metric disagree, left-to-right arbitrates):", ""] + lines + [
        "", f"Why they can differ: {METRIC_REASON}.", ""]


def _configuration_section(verdicts: list[Verdict], tuned: dict) -> list[str]:
    """How the tuned configuration was chosen, the settings per dataset, and where the
    outcome moved with it."""
    out = ["## As published and tuned", "",
           "As published: the paper's, BIDMach's and each library's own default settings. "
           "Tuned: each method's own step sizes chosen on validation documents carved from the "
           "training documents (never a test document), by final validation ll under document "
           "completion (available on validation documents for every method), from a grid of equal size per method "
           "(`results/<dataset>/tuning.md`); under the paper's metric the same choice is "
           "judged. VB batch and CGS have no step size: their one run serves both "
           "configurations, at the shared α, β, K.", ""]
    for name, chosen in tuned.items():
        out.append(f"- {name}, tuned: " + "; ".join(
            f"{METHOD_NAMES.get(m, m)} {settings_text(point)}" for m, point in chosen.items()))
    out += [""] if tuned else []
    published = {(v.claim, v.dataset) for v in verdicts if v.configuration == "published"}
    tuned = {(v.claim, v.dataset) for v in verdicts if v.configuration == "tuned"}
    untuned = sorted(published - tuned) if tuned else []
    if untuned:
        out += ["Judged as published only (their runs, the m sweep's or the schedules', ran at "
                "the published settings in this profile: no tuned twin to judge): "
                + ", ".join(f"{c} ({d})" for c, d in untuned) + ".", ""]
    if not tuned:
        return ["## As published and tuned", "",
                "Every claim is judged as published only: no run of this profile has a tuned "
                "twin (tuning: null, or no step size in the grid's methods), so no outcome can "
                "move with the configuration.", ""]
    lines = _disagreements(verdicts, "configuration", CONFIGURATIONS)
    return out + (lines if lines else ["No claim's outcome moved with the configuration."]) + [""]


def _corpora_section(verdicts: list[Verdict], where) -> list[str]:
    """Where a claim's outcome (per VB implementation, estimator and configuration) differs
    between the datasets, each judged at its own tokens per φ parameter (``where``: a
    dataset's name with its scale); nothing for one dataset."""
    names = list(dict.fromkeys(v.dataset for v in verdicts if v.dataset is not None))
    if len(names) < 2:
        return []
    by: dict = {}
    for v in verdicts:
        if v.dataset is not None:
            by.setdefault((v.claim, v.vb, v.metric, v.configuration), {})[v.dataset] = v.outcome
    differ = []
    for (claim, vb, metric, configuration), outcomes in by.items():
        if len(outcomes) > 1 and len(set(outcomes.values())) > 1:
            ctx = ", ".join(x for x in (f"VB: {vb}" if vb else None,
                                        _axis_name("metric", metric),
                                        _axis_name("configuration", configuration)) if x)
            differ.append(f"- {claim}" + (f" ({ctx})" if ctx else "") + ": " + "; ".join(
                f"{o.value} on {where(d)}" for d, o in outcomes.items()))
    both = sum(len(o) > 1 for o in by.values())
    out = ["## Across corpora", "",
           "Every claim judged on each corpus at its own training tokens per φ parameter: "
           + ", ".join(where(d) for d in names) + f". Of {both} judgements made on more than "
           f"one corpus, {both - len(differ)} have the same outcome on every corpus"
           + (", and these differ:" if differ else "."), ""]
    return out + differ + ([""] if differ else [])


def _scale_text(scale: dict | None) -> str:
    if scale is None:
        return "tokens per φ parameter unknown"
    return (f"{scale['n_train_tokens']:,} training tokens, K={scale['n_topics']}, "
            f"W={scale['n_words']:,}: {per_parameter_text(scale['tokens_per_parameter'])} "
            "training tokens per φ "
            "parameter")


def render_claims(verdicts: list[Verdict], setting: str, scales: dict | None = None,
                  findings: dict | None = None, recovery: dict | None = None,
                  vb_notes: dict | None = None, tuned: dict | None = None,
                  frames: dict | None = None, timings: dict | None = None,
                  shown: dict | None = None) -> str:
    """Markdown: header, summary table (claim → verdict per dataset, with the dataset's
    training tokens per φ parameter), a cross-scale summary, one section per verdict.

    scales : {dataset: :func:`~same.report.traces.shape_of` result}, optional
    findings : {dataset: :func:`~same.report.study.study_findings` result}, optional
    recovery : {dataset: :func:`~same.report.recovery.load_recovery` result}, optional
        (synthetic datasets)
    vb_notes : {dataset: :func:`~same.report.claims.vb_comparison` lines}, optional
    tuned : {dataset: {method: the settings chosen on validation documents}}, optional
    frames : {dataset: its traces}, optional: the findings paragraph that opens the file
    timings : {dataset: its loaded timing.json or None}, optional: the seconds the findings
        read (measured alone)
    shown : {dataset: paths of the figures and tables the workflow makes}, optional: each
        verdict names those that show what it reads
    """
    timings = timings or {}
    vb_notes = vb_notes or {}
    scales, findings, recovery = scales or {}, findings or {}, recovery or {}
    datasets = list(dict.fromkeys(v.dataset for v in verdicts if v.dataset is not None))

    def where(name):
        sc = scales.get(name)
        return (name if sc is None else
                f"{name} ({per_parameter_text(sc['tokens_per_parameter'])} tok/param)")

    paper = ", ".join(f"{k} ≈ {x:g}" for k, x in PAPER_TOKENS_PER_PARAMETER.items())
    lines = [CLAIMS_TITLE, "",
             "Generated by `snakemake` from the traces under `results/`; do not edit by hand.",
             "", f"Setting: {setting}", "",
             "Verdicts move with scale: each is measured at its dataset's training tokens per φ "
             f"parameter (N_train / (K · W); the paper's runs at K=256: {paper}). A claim that "
             "does not reproduce here may at the paper's scale, and the reverse.", ""]
    if frames:
        lines += ["## The finding", "",
                  "Per dataset and configuration, from the verdicts and traces below: means "
                  "with 95% Student-t intervals over seeds, differences with Welch's p.", ""]
        for name, df in frames.items():
            lines += findings_lines(name, df, verdicts, _scale_text(scales.get(name)),
                                    timings.get(name))
        once = across_datasets_line(verdicts)
        lines += ["### Across datasets", "", once, ""] if once else []
    lines += ["## Summary", ""] + _summary_rows(verdicts, where) + [""]
    lines += _corpora_section(verdicts, where)
    lines += _metric_section(verdicts) + _configuration_section(verdicts, tuned or {})
    across = crossover_summary(verdicts, scales, findings)
    study = ("and where the crossover study (every method at several K and training fractions, "
             "as published, by document completion; `results/<dataset>/crossover_study.md`) "
             "shows it holding." if any(findings.values()) else
             "only: no crossover study in this profile (crossover_study: null).")
    lines += ["## Across scales", "",
              f"Each claim at each dataset's main scale, {study}", "",
              "| claim | across scales |", "|---|---|"]
    lines += [f"| {c} | {t} |" for c, t in sorted(across.items())] + [""]
    for name in datasets:
        lines += [f"## Dataset: {name}", "", f"Scale: {_scale_text(scales.get(name))}.", ""]
        if vb_notes.get(name):
            lines += ["Two VB implementations (C1, C2, C4 are judged against each):", ""]
            lines += [f"- {line}" for line in vb_notes[name]] + [""]
        effect = order_effects(test_traces(frames[name])) if frames and name in frames else None
        if effect:
            lines += [f"Document order: {effect} ({', '.join(ORDER_CLAIMS)}; C7 and C8 read "
                      "runs in the stored order only).", ""]
        for v in verdicts:
            if v.dataset == name:
                lines += _section(v, (shown or {}).get(name, ()))
        if name in recovery:
            lines += recovery_lines(recovery[name])
    lines += ["## Across datasets", ""]
    for v in verdicts:
        if v.dataset is None:
            lines += _section(v)
    return "\n".join(lines) + "\n"


#: claims.md's first line (what an earlier claims.md must start with to be replaced).
CLAIMS_TITLE = "# Paper claims: verdicts from this run"


def claims(datasets: dict, out_path, setting: str, scaling=None, gpu=None) -> list[Verdict]:
    """Judge every claim and write ``claims.md`` (:mod:`same.io.outputs`: an existing file is
    replaced only when its first line is claims.md's title; never an input); returns the
    verdicts.

    datasets : {name: {"df": traces DataFrame, "m_runs": {m: label}, "schedule_runs":
                {schedule: label}, "fig1c": {"same", "m1", "cgs": label},
                "prior_scale_runs": {legend: label}, "study": the crossover study's traces
                (optional), "recovery": path of a topic_recovery.csv (optional), "tuning":
                path of the dataset's tuning.json (optional)}}
    scaling : path of a :mod:`same.experiments.size_cost` result, used for C9 when only one dataset ran
    gpu : the committed GPU measurements (paths; :mod:`same.report.gpu`): C6 reads the newest
        where a dataset's m sweep ran on a CPU; None or none: no GPU measurement

    Raises
    ------
    same.report.gpu.GpuMeasurementError
        A GPU measurement that is unreadable or malformed (one line naming it).
    """
    kind = text_kind("claims file", CLAIMS_TITLE)
    gpu = [str(p) for p in (gpu or ())]
    inputs = [scaling, *gpu, *(info.get(k) for info in datasets.values()
                               for k in ("recovery", "tuning", "timing"))]
    check_target(out_path, kind, inputs)  # before judging
    newest = newest_gpu_measurement(gpu)
    # each dataset's seconds measured alone (timing.json; a None path: none measured, so the
    # timing verdicts are not judged), loaded once
    datasets = {name: ({**info, "timing": load_timing(info["timing"])} if "timing" in info
                       else dict(info)) | {"gpu": newest} for name, info in datasets.items()}
    verdicts = gpu_judged_once([v for name, info in datasets.items()
                                for v in judge_dataset(name, info["df"], info)])
    verdicts.append(claim_c9(datasets, scaling))
    scales = {name: shape_of(info["df"], name) for name, info in datasets.items()}
    findings = {}
    for name, info in datasets.items():
        study = info.get("study")
        if study is not None and not study.empty:
            findings[name] = study_findings(study_rows(study), point_finals(study, info["df"]),
                                            seed_spread(info["df"]))
    recovery = {name: load_recovery(info["recovery"])
                for name, info in datasets.items() if info.get("recovery")}
    tuned = {}
    for name, info in datasets.items():
        if info.get("tuning"):
            from same.experiments.tuning import load_tuning

            tuned[name] = load_tuning(info["tuning"])["chosen"]
    vb_notes = {name: vb_comparison(info["df"], tuned.get(name))
                for name, info in datasets.items()}
    text = render_claims(verdicts, setting, scales, findings, recovery, vb_notes, tuned,
                         {name: info["df"] for name, info in datasets.items()},
                         {name: info.get("timing") for name, info in datasets.items()},
                         {name: info.get("shown", ()) for name, info in datasets.items()})
    write_text(out_path, text, kind, inputs=inputs)
    return verdicts
