"""The crossover study: final held-out ll of every method against training tokens per φ parameter.

Each point of the study is one (K, training fraction) pair of one dataset, every method run
once (seed 0) with the same α, β, split and evaluator (:func:`same.experiments.runs.study_runs`).  Its
scale is N_train / (K · W): training tokens per φ parameter (Zhao, Jiang, Canny §5: the NYTimes/PubMed gap).  The verdicts here
say at which scale a comparison flips:

- :func:`crossover`: the smallest scale from which a difference stays above a threshold at
  every larger point of the grid, with the crossing interpolated in log(scale); given each
  point's interval, a point counts as above only beyond it, and one whose interval holds the
  threshold is "within seed noise";
- :func:`study_findings`: the crossovers the claims report uses: SAME above VB batch, above
  both VB methods (C1), and within 0.01 nats/token of CGS at its budget (C3's end quality),
  each point's difference with its seed noise (:func:`point_finals`, :func:`seed_spread`):
  a point with 2 or more seeds a side by Welch's interval over them; a one-seed point against
  the main comparison's seed-to-seed spread; the point that is the main comparison's own
  setting by the main comparison's seeds, so the study never contradicts its tested result.
"""

from __future__ import annotations

import math

import numpy as np

from .captions import figure_caption
from .crossover_text import FINDINGS, describe_crossover
from .paper import METHOD_NAMES, STUDY_CGS_EPS
from .study_figure import plot_study
from .tables import write_table
from .traces import final_lls
from .traces import per_parameter_text as _tpp
from .verdicts import METRICS, METRICS_SHORT, PRIMARY_METRIC

__all__ = ["study_rows", "crossover", "describe_crossover", "study_findings", "crossover_study",
           "crossover_summary", "point_finals", "seed_spread", "STUDY_CLAIMS", "STUDY_LABEL"]

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
        # each method's final checkpoint, its mean over seeds where the study ran several
        last = (g.sort_values("pass").groupby(["study_method", "seed"]).last()
                .groupby("study_method").mean(numeric_only=True))
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


def crossover(scale, diff, threshold: float = 0.0, bounds=None) -> dict:
    """Where ``diff`` (one value per grid point) rises above ``threshold`` for good.

    Parameters
    ----------
    scale : tokens per parameter of each point (any order; None/NaN diffs are ignored)
    diff : the difference at each point (nats/token); ``threshold`` : the level to exceed
    bounds : optional, each point's (low, high) interval of the difference (None: none known):
        a point with one is above only where its low end is, and "within seed noise" where
        it holds the threshold

    Returns
    -------
    dict with
      ``status``: "always" (above at every point), "never" (not above at the largest scale),
      or "from" (above at every point from some scale on, not below it);
      ``from_scale``: the smallest scale of that last run of points above (None for "never");
      ``below_scale``: the largest scale not above (None for "always");
      ``at_scale``: the crossing interpolated linearly in log(scale) between those two;
      ``exceptions``: points below ``from_scale`` that are above anyway (the grid mixes K
      and corpus size, so the ordering by scale need not be clean), as (scale, diff) pairs;
      ``within``: the points whose interval (``bounds``) holds the threshold, as
      (scale, diff) pairs: within seed noise, neither above nor below;
      ``points``: every point judged, (scale, diff, its interval or None), by scale.
    """
    bounds = [None] * len(diff) if bounds is None else list(bounds)
    pts = sorted((float(s), float(d), b) for s, d, b in zip(scale, diff, bounds)
                 if d is not None and not (isinstance(d, float) and math.isnan(d)))
    if not pts:
        raise ValueError("crossover needs at least one point with a value")
    above = [d > threshold if b is None else b[0] > threshold for _, d, b in pts]
    noise = {"within": [(s, d) for s, d, b in pts if b is not None and b[0] <= threshold <= b[1]],
             "points": pts}
    pts = [(s, d) for s, d, _ in pts]
    if not above[-1]:
        return {"status": "never", "from_scale": None, "below_scale": pts[-1][0],
                "at_scale": None, "exceptions": [p for p, a in zip(pts, above) if a], **noise}
    i = len(pts) - 1
    while i > 0 and above[i - 1]:
        i -= 1
    if i == 0:
        return {"status": "always", "from_scale": pts[0][0], "below_scale": None,
                "at_scale": None, "exceptions": [], **noise}
    (s0, d0), (s1, d1) = pts[i - 1], pts[i]
    frac = (threshold - d0) / (d1 - d0) if d1 != d0 else 1.0
    frac = min(max(frac, 0.0), 1.0)  # a point within the noise may sit above the threshold
    at = math.exp(math.log(s0) + frac * (math.log(s1) - math.log(s0)))
    return {"status": "from", "from_scale": s1, "below_scale": s0, "at_scale": at,
            "exceptions": [p for p, a in zip(pts[:i], above[:i]) if a], **noise}


def study_findings(rows: list[dict], finals: dict | None = None,
                   spread: dict | None = None) -> dict:
    """The crossovers of one dataset's study (``rows`` from :func:`study_rows`).

    finals : {(K, training fraction): {method: final lls over seeds}} (:func:`point_finals`),
        optional: each point's seeds; with 2 or more a side, a difference's interval is
        Welch's (:data:`~same.report.stats.CONFIDENCE`) over them
    spread : {method: (standard deviation, seeds)} of the main comparison's final lls
        (:func:`seed_spread`), optional: a one-seed difference's interval is
        t · √(s_a² + s_b²) around it (the spread of one seed's difference, the t quantile at
        the main comparison's seeds), the same spread taken for every point
    Without either, a one-seed point's difference counts by its sign, and the text says that
    no seed noise judged it.

    Returns {"vb_batch": SAME above VB batch, "both_vb": SAME above both VB methods (C1),
    "cgs": SAME within :data:`~same.report.paper.STUDY_CGS_EPS` of CGS at its budget (C3)}:
    each a :func:`crossover` dict with its ``basis`` (one phrase: what judged the noise), or
    None when the study lacks the methods it needs.
    """
    scale = [r["tokens_per_parameter"] for r in rows]
    finals, spread = finals or {}, spread or {}

    def diff(r, m):
        a, b = (finals.get((r["n_topics"], r["train_fraction"]), {}).get(x) for x in ("same", m))
        if a is None or b is None:
            s, o = r.get("same_ll"), r.get(f"{m}_ll")
            return (None, None) if s is None or o is None else (s - o, None)
        return float(a.mean() - b.mean()), _interval(a, b, spread.get("same"), spread.get(m))

    def cross(pairs, methods, threshold=0.0):
        if all(d is None for d, _ in pairs):
            return None
        c = crossover(scale, [d for d, _ in pairs], threshold, [b for _, b in pairs])
        return {**c, "basis": _basis(rows, finals, spread, methods)}

    both = []
    for r in rows:
        pair = [diff(r, m) for m in ("vb_online", "vb_batch")]
        if any(d is None for d, _ in pair):
            both.append((None, None))
            continue
        # above both VB methods: above each; the interval of SAME − the better is the least
        bs = [b for _, b in pair]
        both.append((min(d for d, _ in pair), None if None in bs else
                     (min(b[0] for b in bs), min(b[1] for b in bs))))
    return {"vb_batch": cross([diff(r, "vb_batch") for r in rows], ("vb_batch",)),
            "both_vb": cross(both, ("vb_online", "vb_batch")),
            "cgs": cross([diff(r, "cgs") for r in rows], ("cgs",), -STUDY_CGS_EPS)}


def _interval(a, b, sa, sb) -> tuple[float, float] | None:
    """The :data:`~same.report.stats.CONFIDENCE` interval of mean(a) − mean(b): Welch's with
    2 or more seeds a side; with one, t · √(s_a² + s_b²) around the difference from the main
    comparison's spreads ``sa``, ``sb`` ((sd, seeds) each); None without them."""
    from scipy import stats

    from .stats import CONFIDENCE, one_seed_half

    d = float(a.mean() - b.mean())
    if len(a) >= 2 and len(b) >= 2:
        if np.std(a) == 0 and np.std(b) == 0:
            return d, d
        ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(CONFIDENCE)
        return float(ci.low), float(ci.high)
    if sa is None or sb is None:
        return None
    half = one_seed_half(sa, sb)
    return d - half, d + half


def _basis(rows, finals: dict, spread: dict, methods) -> str:
    """What judged the noise of SAME − ``methods`` over a study, in one phrase: one seed a
    point against the main comparison's spread (or no spread), and the points measured over
    more seeds (the main comparison's own setting, :func:`point_finals`) by Welch's interval."""
    from .stats import CONFIDENCE

    def seeds(r):
        point = finals.get((r["n_topics"], r["train_fraction"]), {})
        return min((len(point[m]) for m in ("same", *methods) if m in point), default=1)

    many = [r for r in rows if seeds(r) >= 2]
    welch = f"Welch's {CONFIDENCE:.0%} interval"
    if len(many) == len(rows):
        return f"{min(map(seeds, rows))} or more seeds per point, by {welch} over them"
    n = min((spread[m][1] for m in ("same", *methods) if m in spread), default=0)
    if n >= 2 and all(m in spread for m in ("same", *methods)):
        text = (f"one seed per point: a difference counts only beyond its {CONFIDENCE:.0%} "
                f"interval from the main comparison's seed-to-seed spread ({n} seeds), taken "
                "for every point")
    else:
        text = "one seed per point and no seed spread to judge it by: directions untested"
    if many:
        text += ("; at " + ", ".join(_tpp(r["tokens_per_parameter"]) for r in many)
                 + f", the main comparison's own setting, its {min(map(seeds, many))} seeds by "
                 + welch)
    return text


def seed_spread(df, metric: str = "ll") -> dict:
    """{method: (standard deviation over seeds, seeds)} of each study method's final ll in the
    main comparison (labels ``same``, ``vb_online``, ``vb_batch``, ``cgs`` of ``df``) under
    ``metric``; a method with fewer than 2 seeds is left out."""
    out = {}
    for m in ("same", "vb_online", "vb_batch", "cgs"):
        a = final_lls(df, m, y=metric) if metric in df.columns else np.array([])
        if len(a) >= 2:
            out[m] = (float(np.std(a, ddof=1)), len(a))
    return out


def point_finals(study, df=None, metric: str = "ll") -> dict:
    """{(K, training fraction): {method: final lls over seeds}} of the study's runs
    (``study``); where the main comparison (``df``: labels ``same``, ``vb_online``, ...) ran a
    method at a point's own setting (its K, all its training tokens, the same budget in
    iterations), the main comparison's seeds stand for the study's there: the same runs,
    measured over more seeds (the study's seed 0 is the main comparison's)."""
    d = study.copy()
    parts = d["label"].str.extract(STUDY_LABEL)
    d["study_method"], d["fraction"] = parts[0], parts[1].astype(float)
    d = d.dropna(subset=["study_method"])
    out = {}
    for (k, frac), g in d.groupby(["n_topics", "fraction"]):
        point = {}
        for m, runs in g.groupby("study_method"):
            point[m] = runs.sort_values("pass").groupby("seed")[metric].last().to_numpy()
            if df is None or not (df["label"] == m).any():
                continue
            main = df[df["label"] == m]
            same_setting = (int(main["n_topics"].iloc[0]) == int(k)
                            and int(main["n_train_tokens"].iloc[0])
                            == int(runs["n_train_tokens"].iloc[0])
                            and int(main["iteration"].max()) == int(runs["iteration"].max()))
            if same_setting and main["seed"].nunique() > len(point[m]):
                point[m] = final_lls(df, m, y=metric)
        out[(int(k), float(frac))] = point
    return out


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
    is_study = df["label"].str.match(STUDY_LABEL)
    for metric in (m for m in METRICS if m in df.columns):
        rows = study_rows(df, metric)
        main = main_point(df, main_n_topics, metric) if main_n_topics else None
        found = study_findings(rows, point_finals(df[is_study], df[~is_study], metric),
                               seed_spread(df[~is_study], metric))
        panels.append((metric, rows, found, main))
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
        for key, what, _ in FINDINGS:
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
                + (f" (from the GPU measurement on {v.gpu_device}, not this corpus's runs)"
                   if getattr(v, "gpu_device", None) else "")
                for v in primary)
            line = (f"{dataset} at {at} tok/param ({METRICS_SHORT[PRIMARY_METRIC]}, the "
                    f"primary estimator): {cells}")
            study = (findings.get(dataset) or {}).get(STUDY_CLAIMS.get(claim, ("",))[0])
            if claim in STUDY_CLAIMS and study is not None:
                line += f"; crossover study: {describe_crossover(study, STUDY_CLAIMS[claim][1])}"
            elif claim in STUDY_CLAIMS:
                line += "; no crossover study of this dataset in this profile"
            lines.append(line)
        if claim not in STUDY_CLAIMS:
            lines.append("measured at the main scale only")
        out[claim] = "; ".join(lines)
    return out
