"""``claims.md`` rendered from :class:`~same.report.verdicts.Verdict` objects: each verdict's
outcome and qualifiers (:attr:`~same.report.verdicts.Verdict.verdict`), our numbers, the
paper's, and the claim's rule with its thresholds (:data:`~same.report.verdicts.RULES`)."""

from __future__ import annotations

from pathlib import Path

from ..atomic import atomic_write
from .claims import claim_c9
from .judge import judge_dataset, vb_comparison
from .study import scale_summary, study_findings, study_rows
from .traces import PAPER_TOKENS_PER_PARAMETER, scale_of
from .verdicts import METRIC_REASON, METRICS, METRICS_SHORT, Verdict

__all__ = ["render_claims", "claims"]


def _section(v: Verdict) -> list[str]:
    under = (f" — under {v.metric_name}" if v.metric else "") + (f", VB: {v.vb}" if v.vb else "")
    return ([f"### {v.claim} — {v.title}{under}: **{v.verdict}**", ""]
            + [f"- {line}" for line in v.ours]
            + [f"- paper: {v.paper}", f"- verdict rule: {v.rule}", ""])


def _summary_rows(verdicts: list[Verdict], where) -> list[str]:
    """One row per claim and dataset: its verdict under each metric (a timing claim's once)."""
    cells: dict = {}
    for v in verdicts:
        ds = "all datasets" if v.dataset is None else where(v.dataset)
        row = cells.setdefault((v.claim, ds + (f", VB: {v.vb}" if v.vb else "")), {})
        row[v.metric] = v.verdict
    head = ["| claim | dataset | " + " | ".join(METRICS_SHORT.values()) + " |",
            "|---|---|" + "---|" * len(METRICS_SHORT)]
    body = [f"| {claim} | {ds} | " + " | ".join(_cell(row, m, first=i == 0)
                                                for i, m in enumerate(METRICS_SHORT)) + " |"
            for (claim, ds), row in sorted(cells.items())]
    return head + body


def _cell(row: dict, metric: str, first: bool) -> str:
    """A summary cell: the verdict under ``metric``; a timing claim's (metric None) verdict in
    the first column and a dash with the reason in the others."""
    if metric in row:
        return row[metric]
    if None in row:
        return row[None] if first else "— (about time only)"
    return "—"


def _disagreements(verdicts: list[Verdict]) -> list[str]:
    """Where a claim's outcome on a dataset differs between the two metrics, and why."""
    by = {}
    for v in verdicts:
        if v.metric is not None:
            where = v.dataset + (f" (VB: {v.vb})" if v.vb else "")
            by.setdefault((v.claim, where), {})[v.metric] = v.outcome.value
    lines = [f"- {claim} on {dataset}: " + "; ".join(f"{o} under {METRICS[m]}"
                                                      for m, o in outcomes.items())
             for (claim, dataset), outcomes in by.items() if len(set(outcomes.values())) > 1]
    if not lines:
        return ["Every claim judged on held-out ll has the same outcome under both metrics.", ""]
    return lines + ["", f"Why they can differ: {METRIC_REASON}.", ""]


def _scale_text(scale: dict | None) -> str:
    if scale is None:
        return "tokens per φ parameter unknown"
    return (f"{scale['n_train_tokens']:,} training tokens, K={scale['n_topics']}, "
            f"W={scale['n_words']:,}: {scale['tokens_per_parameter']:.2f} training tokens per φ "
            "parameter")


def _recovery_lines(rows: list[dict]) -> list[str]:
    out = ["### Topic recovery (SYNTHETIC data: the true topics are known)", ""]
    for r in rows:
        if r["method"].startswith("true topics"):
            out.append(f"- the true topics themselves score {r['final ll']:.4f} with the same "
                       "evaluator (the held-out ll of an exact recovery)")
            continue
        out.append(f"- {r['method']}: mean matched TV {r['mean matched TV']:.3f} (median "
                   f"{r['median matched TV']:.3f}), final ll {r['final ll']:.4f}")
    if rows:
        mutual = rows[0]["true topics' mutual TV"]
        out.append(f"- for scale: two distinct true topics are {mutual:.3f} apart in TV; "
                   "0 = recovered exactly (topic_recovery.md)")
    return out + [""]


def render_claims(verdicts: list[Verdict], setting: str, scales: dict | None = None,
                  findings: dict | None = None, recovery: dict | None = None,
                  vb_notes: dict | None = None) -> str:
    """Markdown: header, summary table (claim → verdict per dataset, with the dataset's
    training tokens per φ parameter), a cross-scale summary, one section per verdict.

    scales : {dataset: :func:`~same.report.traces.scale_of` result}, optional
    findings : {dataset: :func:`~same.report.study.study_findings` result}, optional
    recovery : {dataset: :func:`~same.report.tables.topic_recovery_rows` result}, optional
        (synthetic datasets)
    vb_notes : {dataset: :func:`~same.report.claims.vb_comparison` lines}, optional
    """
    vb_notes = vb_notes or {}
    scales, findings, recovery = scales or {}, findings or {}, recovery or {}
    datasets = list(dict.fromkeys(v.dataset for v in verdicts if v.dataset is not None))

    def where(name):
        sc = scales.get(name)
        return name if sc is None else f"{name} ({sc['tokens_per_parameter']:.2f} tok/param)"

    paper = ", ".join(f"{k} ≈ {x:g}" for k, x in PAPER_TOKENS_PER_PARAMETER.items())
    lines = ["# Paper claims: verdicts from this run", "",
             "Generated by `snakemake` from the traces under `results/`; do not edit by hand.",
             "", f"Setting: {setting}", "",
             "Verdicts move with scale: each is measured at its dataset's training tokens per φ "
             f"parameter (N_train / (K · W); the paper's runs at K=256: {paper}). A claim that "
             "does not reproduce here may at the paper's scale, and the reverse.", "",
             "## Summary", ""] + _summary_rows(verdicts, where) + [""]
    lines += ["## Document completion and the paper's metric", "",
              f"Every claim about held-out ll is judged under {METRICS['ll']} and under "
              f"{METRICS['ll_bidmach']}, from the same traces.", ""] + _disagreements(verdicts)
    across = scale_summary(verdicts, scales, findings)
    lines += ["## Across scales", "",
              "Each claim at each dataset's main scale, and where the scale study (every method "
              "at several K and training fractions, `results/<dataset>/scale_study.md`) shows "
              "it holding.", "", "| claim | across scales |", "|---|---|"]
    lines += [f"| {c} | {t} |" for c, t in sorted(across.items())] + [""]
    for name in datasets:
        lines += [f"## Dataset: {name}", "", f"Scale: {_scale_text(scales.get(name))}.", ""]
        if vb_notes.get(name):
            lines += ["Two VB implementations (C1, C2, C4 are judged against each):", ""]
            lines += [f"- {line}" for line in vb_notes[name]] + [""]
        for v in verdicts:
            if v.dataset == name:
                lines += _section(v)
        if name in recovery:
            lines += _recovery_lines(recovery[name])
    lines += ["## Across datasets", ""]
    for v in verdicts:
        if v.dataset is None:
            lines += _section(v)
    return "\n".join(lines) + "\n"


def claims(datasets: dict, out_path, setting: str, scaling=None) -> list[Verdict]:
    """Judge every claim and write ``claims.md`` atomically; returns the verdicts.

    datasets : {name: {"df": traces DataFrame, "m_runs": {m: label}, "schedule_runs":
                {schedule: label}, "fig1c": {"same", "m1", "cgs": label},
                "prior_scale_runs": {legend: label}, "study": the scale study's traces
                (optional), "recovery": path of a topic_recovery.csv (optional)}}
    scaling : path of a :mod:`same.scaling` result, used for C9 when only one dataset ran
    """
    verdicts = [v for name, info in datasets.items() for v in judge_dataset(name, info["df"], info)]
    verdicts.append(claim_c9(datasets, scaling))
    scales = {name: scale_of(info["df"], name) for name, info in datasets.items()}
    findings = {}
    for name, info in datasets.items():
        study = info.get("study")
        if study is not None and not study.empty:
            findings[name] = study_findings(study_rows(study))
    recovery = {}
    for name, info in datasets.items():
        if info.get("recovery"):
            import pandas as pd

            recovery[name] = pd.read_csv(info["recovery"]).to_dict("records")
    vb_notes = {name: vb_comparison(info["df"]) for name, info in datasets.items()}
    text = render_claims(verdicts, setting, scales, findings, recovery, vb_notes)
    atomic_write(Path(out_path), lambda f: f.write(text.encode()))
    return verdicts
