"""The crossover study: final held-out ll of every method against training tokens per φ parameter.

Each point of the study is one (K, training fraction) pair of one dataset, every method run
once (seed 0) with the same α, β, split and evaluator (:func:`same.experiments.runs.study_runs`).  Its
scale is N_train / (K · W): training tokens per φ parameter (Zhao, Jiang, Canny §5: the NYTimes/PubMed gap).  The verdicts here
say at which scale a comparison flips:

- :func:`crossover`: the smallest scale from which a difference stays above a threshold at
  every larger point of the grid, with the crossing interpolated in log(scale);
- :func:`study_findings`: the crossovers the claims report uses: SAME above VB batch, above
  both VB methods (C1), and within 0.01 nats/token of CGS at its budget (C3's end quality).
"""

from __future__ import annotations

import math

from .captions import figure_caption
from .paper import METHOD_NAMES, STUDY_CGS_EPS
from .study_figure import plot_study
from .tables import write_table
from .traces import per_parameter_text as _tpp
from .verdicts import METRICS, METRICS_SHORT, PRIMARY_METRIC

__all__ = ["study_rows", "crossover", "describe_crossover", "study_findings", "crossover_study",
           "crossover_summary", "STUDY_CLAIMS", "STUDY_LABEL"]

#: ``study_<method>_f<fraction>`` (same.experiments.runs.study_label)
STUDY_LABEL = r"^study_(same|vb_online|vb_batch|cgs)_f([0-9.]+)$"


def study_rows(df, metric: str = "ll") -> list[dict]:
    """One row per (K, training fraction): tokens per parameter, each method's final ll, and
    SAME's and CGS's difference to the best VB method's (nats/token), sorted by scale.

    df : traces of the study's runs (labels ``study_<method>_f<fraction>``, columns from
    :func:`~same.report.traces.load_traces`).  A point missing a method has None there.
    metric : the held-out metric (a trace column of :data:`~.verdicts.METRICS`): "ll",
        document completion, or "ll_bidmach", the paper's metric
    """
    d = df.copy()
    parts = d["label"].str.extract(STUDY_LABEL)
    d["study_method"], d["fraction"] = parts[0], parts[1].astype(float)
    d = d.dropna(subset=["study_method"])
    methods = [m for m in METHOD_NAMES if m in set(d["study_method"])]
    rows = []
    for (k, frac), g in d.groupby(["n_topics", "fraction"]):
        last = g.sort_values("pass").groupby("study_method").last()
        tokens, words = float(last["n_train_tokens"].iloc[0]), float(last["n_words"].iloc[0])
        row = {"n_topics": int(k), "train_fraction": float(frac), "n_train_tokens": int(tokens),
               "tokens_per_parameter": tokens / (int(k) * words),
               **_point(last, methods, metric)}
        s, c, b = (row.get(f"{m}_ll") for m in ("same", "cgs", "vb_batch"))
        row["same_minus_cgs"] = None if s is None or c is None else s - c
        row["same_minus_vb_batch"] = None if s is None or b is None else s - b
        rows.append(row)
    return sorted(rows, key=lambda r: (r["tokens_per_parameter"], r["n_topics"]))


def _point(last, methods, metric: str) -> dict:
    """One point's final ll of each method (``last``: its last checkpoint, indexed by method)
    and each one's difference to the better VB method's there (None where missing)."""
    row = {f"{m}_ll": float(last.loc[m, metric]) if m in last.index else None for m in methods}
    vbs = [row[f"{m}_ll"] for m in ("vb_online", "vb_batch") if row.get(f"{m}_ll") is not None]
    best_vb = max(vbs) if vbs else None
    row["best_vb_ll"] = best_vb
    for m in methods:
        v = row[f"{m}_ll"]
        row[f"{m}_minus_best_vb"] = None if v is None or best_vb is None else v - best_vb
    return row


def crossover(scale, diff, threshold: float = 0.0) -> dict:
    """Where ``diff`` (one value per grid point) rises above ``threshold`` for good.

    Parameters
    ----------
    scale : tokens per parameter of each point (any order; None/NaN diffs are ignored)
    diff : the difference at each point (nats/token); ``threshold`` : the level to exceed

    Returns
    -------
    dict with
      ``status``: "always" (above at every point), "never" (not above at the largest scale),
      or "from" (above at every point from some scale on, not below it);
      ``from_scale``: the smallest scale of that last run of points above (None for "never");
      ``below_scale``: the largest scale not above (None for "always");
      ``at_scale``: the crossing interpolated linearly in log(scale) between those two;
      ``exceptions``: points below ``from_scale`` that are above anyway (the grid mixes K
      and corpus size, so the ordering by scale need not be clean), as (scale, diff) pairs.
    """
    pts = sorted((float(s), float(d)) for s, d in zip(scale, diff)
                 if d is not None and not (isinstance(d, float) and math.isnan(d)))
    if not pts:
        raise ValueError("crossover needs at least one point with a value")
    above = [d > threshold for _, d in pts]
    if not above[-1]:
        return {"status": "never", "from_scale": None, "below_scale": pts[-1][0],
                "at_scale": None, "exceptions": [p for p, a in zip(pts, above) if a]}
    i = len(pts) - 1
    while i > 0 and above[i - 1]:
        i -= 1
    if i == 0:
        return {"status": "always", "from_scale": pts[0][0], "below_scale": None,
                "at_scale": None, "exceptions": []}
    (s0, d0), (s1, d1) = pts[i - 1], pts[i]
    frac = (threshold - d0) / (d1 - d0) if d1 != d0 else 1.0
    at = math.exp(math.log(s0) + frac * (math.log(s1) - math.log(s0)))
    return {"status": "from", "from_scale": s1, "below_scale": s0, "at_scale": at,
            "exceptions": [p for p, a in zip(pts[:i], above[:i]) if a]}


def describe_crossover(c: dict, what: str) -> str:
    """One phrase for a :func:`crossover` result (``what``: what holds above the threshold)."""
    if c["status"] == "always":
        return f"{what} at every point (from {_tpp(c['from_scale'])} tokens/parameter)"
    if c["status"] == "never":
        if not c["exceptions"]:
            return (f"{what} at no point studied (up to {_tpp(c['below_scale'])} "
                    "tokens/parameter)")
        return (f"{what} not at the largest scale studied ({_tpp(c['below_scale'])} "
                f"tokens/parameter); it holds at {len(c['exceptions'])} smaller point(s)")
    text = (f"{what} from {_tpp(c['from_scale'])} tokens/parameter on (not at "
            f"{_tpp(c['below_scale'])}; crossing ≈ {_tpp(c['at_scale'])})")
    if c["exceptions"]:
        text += (f"; also at {len(c['exceptions'])} smaller point(s): "
                 + ", ".join(_tpp(s) for s, _ in c["exceptions"]))
    return text


def study_findings(rows: list[dict]) -> dict:
    """The crossovers of one dataset's study (``rows`` from :func:`study_rows`).

    Returns {"vb_batch": SAME above VB batch, "both_vb": SAME above both VB methods (C1),
    "cgs": SAME within :data:`~same.report.paper.STUDY_CGS_EPS` of CGS at its budget (C3)}:
    each a :func:`crossover` dict, or None when the study lacks the methods it needs.
    """
    scale = [r["tokens_per_parameter"] for r in rows]

    def cross(vals, threshold=0.0):
        return None if all(v is None for v in vals) else crossover(scale, vals, threshold)

    def ll(r, m):
        return r.get(f"{m}_ll")

    both = [None if None in (ll(r, "same"), ll(r, "vb_online"), ll(r, "vb_batch"))
            else ll(r, "same") - max(ll(r, "vb_online"), ll(r, "vb_batch")) for r in rows]
    return {"vb_batch": cross([r["same_minus_vb_batch"] for r in rows]), "both_vb": cross(both),
            "cgs": cross([r["same_minus_cgs"] for r in rows], -STUDY_CGS_EPS)}


def main_point(df, n_topics: int, metric: str = "ll") -> dict | None:
    """The main comparison as a point of the study: each study method's final ll in the main
    runs (labels ``same``, ``vb_online``, ``vb_batch``, ``cgs``; their smallest seed, as the
    study runs one) minus the best VB's there, at N_train / (K · W) of the main K and all
    training documents; None without those runs. Its budgets are the main runs', not the
    study's."""
    methods = [m for m in ("same", "vb_online", "vb_batch", "cgs") if (df["label"] == m).any()]
    if not methods or not {"vb_online", "vb_batch"} & set(methods) or metric not in df.columns:
        return None
    d = df[df["label"].isin(methods)]
    seed = int(d["seed"].min())
    d = d[d["seed"] == seed].sort_values("pass").groupby("label").last()
    tokens, words = float(d["n_train_tokens"].iloc[0]), float(d["n_words"].iloc[0])
    return {"n_topics": int(n_topics), "seed": seed,
            "tokens_per_parameter": tokens / (int(n_topics) * words),
            **_point(d, methods, metric)}


def crossover_study(df, figure_outputs, csv_path, md_path, setting: str,
                main_n_topics: int | None = None) -> dict:
    """Write the crossover study's figure (PNG/PDF; a panel per held-out metric), CSV and Markdown
    (a row per point and metric); returns the findings under document completion.

    main_n_topics : K of the main comparison, whose scale (all training documents) is marked
    """
    panels = []
    for metric in (m for m in METRICS if m in df.columns):
        rows = study_rows(df, metric)
        main = main_point(df, main_n_topics, metric) if main_n_topics else None
        panels.append((metric, rows, study_findings(rows), main))
    rows = panels[0][1]
    full = [r for r in rows if r["train_fraction"] == 1.0]
    main_scale = None
    if main_n_topics and full:
        words = float(df["n_words"].iloc[0])
        main_scale = full[0]["n_train_tokens"] / (main_n_topics * words)
    dataset = str(df["dataset"].iloc[0])
    studied = df[df["label"].str.match(STUDY_LABEL)]
    plot_study(panels, figure_outputs, figure_caption("crossover_study", setting), dataset,
                main_scale, n_seeds=int(studied.groupby("label")["seed"].nunique().max()))
    notes = [setting,
             "ll columns: final held-out ll (nats/token) of each method at that point, under "
             "the row's metric; *_minus_best_vb: difference to the better of VB online and VB "
             "batch there.",
             "Scale: training tokens per φ parameter, N_train / (K · W); the training fraction "
             "is a seeded, nested subset of the split's training documents (same test "
             "documents and evaluator at every point)."]
    for metric, _, findings, _ in panels:
        for key, what in (("vb_batch", "SAME above VB batch"),
                          ("both_vb", "SAME above both VB methods (C1)"),
                          ("cgs", f"SAME within {STUDY_CGS_EPS} nats/token of CGS (C3)")):
            if findings[key] is not None:
                notes.append(f"Under {METRICS_SHORT[metric]}: "
                             + describe_crossover(findings[key], what) + ".")
    table = [{"metric": METRICS_SHORT[metric], **r} for metric, rs, _, _ in panels for r in rs]
    write_table(table, csv_path, md_path, f"Crossover study: {dataset}", notes)
    return panels[0][2]


#: Claims the crossover study speaks to: claim → (finding key of
#: :func:`~same.report.study.study_findings`, what holds above the threshold).
STUDY_CLAIMS = {"C1": ("both_vb", "SAME's final ll above both VB methods'"),
                "C3": ("cgs", "SAME's final ll within 0.01 nats/token of CGS at its budget")}


def crossover_summary(verdicts: list, scales: dict, findings: dict) -> dict[str, str]:
    """One line per claim across scales: per dataset, at its main scale, the claim's outcome
    under the primary estimator in each configuration (and against each VB implementation;
    estimators are never counted as votes), and for
    the claims the crossover study measures (:data:`STUDY_CLAIMS`; as published, by document
    completion), where it holds.

    scales : {dataset: shape_of result or None}; findings : {dataset: study_findings or None}
    """
    grouped: dict = {}
    for v in verdicts:
        if v.dataset is not None:
            grouped.setdefault(v.claim, {}).setdefault(v.dataset, []).append(v)
    out = {}
    for claim, per in grouped.items():
        lines = []
        for dataset, vs in per.items():
            sc = scales.get(dataset)
            at = _tpp(sc["tokens_per_parameter"]) if sc else "?"
            primary = [v for v in vs if getattr(v, "metric", None) in (PRIMARY_METRIC, None)]
            cells = "; ".join(
                f"{getattr(v.outcome, 'value', v.outcome)}"
                + "".join(f" {x}" for x in (getattr(v, "configuration_name", None),
                                            f"vs {v.vb}" if getattr(v, "vb", None) else None)
                          if x)
                for v in primary)
            line = (f"{dataset} at {at} tok/param ({METRICS_SHORT[PRIMARY_METRIC]}, the "
                    f"primary estimator): {cells}")
            study = (findings.get(dataset) or {}).get(STUDY_CLAIMS.get(claim, ("",))[0])
            if claim in STUDY_CLAIMS and study is not None:
                line += f"; crossover study: {describe_crossover(study, STUDY_CLAIMS[claim][1])}"
            lines.append(line)
        if claim not in STUDY_CLAIMS:
            lines.append("measured at the main scale only")
        out[claim] = "; ".join(lines)
    return out
