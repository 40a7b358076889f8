"""Tables 1 and 2 of the paper from traces, our numbers beside the paper's (CSV and Markdown)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from same.io.outputs import check_target, text_kind, write_text

from .paper import (
    CONVERGED_EPS,
    IMPLEMENTATIONS,
    METHOD_NAMES,
    PAPER_TABLE1,
    PAPER_TABLE1_OTHER,
    PAPER_TABLE2,
)
from .stats import LADDER_GAPS, converged, ladder, seconds_to, t_interval
from .traces import (
    configuration_frame,
    configurations,
    final_ll,
    first_pass_seconds,
    first_seed,
    per_pass_over_seeds,
    test_traces,
    twinned_labels,
)

__all__ = ["write_csv", "csv_text", "table1_rows", "table2_rows",
           "table1", "table2",
           "time_to_quality_rows", "time_to_quality", "write_table", "topic_recovery_rows",
           "topic_recovery_table"]


def csv_text(rows: list[dict]) -> str:
    """Rows as CSV text (a header row, then one line per row)."""
    import pandas as pd

    return pd.DataFrame(rows).to_csv(index=False)


def write_csv(rows: list[dict], csv_path, inputs=()) -> None:
    """Rows as a CSV file, by :mod:`same.io.outputs`'s rules (an existing file is replaced only
    when its header row is this table's; never one of ``inputs``)."""
    text = csv_text(rows)
    write_text(csv_path, text, text_kind("table", text), inputs=inputs)


def write_table(rows: list[dict], csv_path, md_path, title: str, notes: Sequence[str],
                inputs=()) -> None:
    """Rows as CSV and as a Markdown table (4 significant digits, — for missing) with notes.

    Both targets are checked before either is written (:mod:`same.io.outputs`: an existing one
    is replaced only when its first line, header row or title, is this table's).

    Raises
    ------
    same.io.outputs.OutputError
        A target is not an earlier table of ours, or is (holds) one of ``inputs``.
    """
    import pandas as pd

    df = pd.DataFrame(rows)
    shown = df.astype(object).map(
        lambda v: "—" if v is None or (isinstance(v, float) and np.isnan(v)) else
        f"{v:.4g}" if isinstance(v, float) else str(v))
    text = "\n".join([f"# {title}", "", shown.to_markdown(index=False, disable_numparse=True), ""]
                     + [f"- {n}" for n in notes] + [""])
    csv = csv_text(rows)
    targets = [(csv_path, csv, text_kind("table", csv)),
               (md_path, text, text_kind("table", text))]
    for path, _, kind in targets:
        check_target(path, kind, inputs)
    for path, body, kind in targets:
        write_text(path, body, kind, inputs=inputs)


def _method_row(label: str, d, eps: float) -> dict:
    """One method's row: per-pass cost, convergence by its own rule
    (:func:`~same.report.stats.convergence`), final ll with its interval."""
    conv = converged(d, label, eps)
    final = np.array([c.final for c in conv])
    passes = np.array([c.passes for c in conv])
    paper = PAPER_TABLE1.get(label, ("—", None, None))
    return {"method": METHOD_NAMES[label], "implementation": IMPLEMENTATIONS.get(label),
            "seeds": len(conv),
            "s_per_pass": per_pass_over_seeds(d[d["label"] == label])["median"],
            "s_to_converge": float(np.mean([c.seconds for c in conv])),
            "passes_to_converge": float(passes.mean()),
            "passes_to_converge_95": _half(passes),
            "budget_passes": float(conv[0].budget_passes),
            "peak_decline": float(max(c.decline for c in conv)),
            "final_ll": float(final.mean()), "final_ll_95": _half(final),
            "paper_system": paper[0], "paper_s_per_pass": paper[1],
            "paper_s_to_converge": paper[2]}


def _half(a) -> float | None:
    """Half-width of the 95% t interval of ``a``'s mean (None for one seed)."""
    _, lo, hi = t_interval(a)
    return (hi - lo) / 2 if np.isfinite(lo) else None


def table1_rows(df, eps: float = CONVERGED_EPS) -> list[dict]:
    """Per method: median s/pass, seconds and passes to converge by its own rule (within
    ``eps`` of its own final ll for the rest of its budget; mean over seeds), the largest
    decline from a peak, final ll with its 95% t interval."""
    rows = [_method_row(label, df, eps) for label in METHOD_NAMES
            if not df[df["label"] == label].empty]
    for name, per, conv in PAPER_TABLE1_OTHER:
        rows.append({"method": "—", "implementation": None, "seeds": None, "s_per_pass": None,
                     "s_to_converge": None, "passes_to_converge": None,
                     "passes_to_converge_95": None, "budget_passes": None, "peak_decline": None,
                     "final_ll": None, "final_ll_95": None, "paper_system": name,
                     "paper_s_per_pass": per, "paper_s_to_converge": conv})
    return rows


def by_configuration(df, rows_of, tuned_only: bool = False) -> list[dict]:
    """``rows_of(traces)`` for each configuration the traces hold (as published, tuned:
    :func:`~same.report.traces.configuration_frame`), each row led by its ``configuration``.
    ``tuned_only``: the tuned configuration keeps only the rows of methods with a tuned twin
    (the others are the very runs of the published rows)."""
    from same.experiments.tuning import CONFIGURATIONS

    df = test_traces(df)
    twins = {METHOD_NAMES[lab] for lab in twinned_labels(df) if lab in METHOD_NAMES}
    out = []
    for config in configurations(df):
        for row in rows_of(configuration_frame(df, config)):
            if config == "published" or not tuned_only or row.get("method") in twins:
                out.append({"configuration": CONFIGURATIONS[config], **row})
    return out


#: What a table of both configurations says about them.
CONFIGURATION_NOTE = ("Configurations: as published (the paper's, BIDMach's, each library's "
                      "defaults) and tuned (each method's step sizes chosen on validation "
                      "documents, tuning.md); VB batch and CGS have no step size, so their runs "
                      "are the same in both.")


def table1(df, csv_path, md_path, setting: str) -> list[dict]:
    """Time per pass and time to converge per method (each by its own rule), in each
    configuration (the tuned rows: the methods with a step size)."""
    rows = by_configuration(df, table1_rows, tuned_only=True)
    write_table(rows, csv_path, md_path, "Table 1: runtime per pass and time to converge",
                [setting, CONFIGURATION_NOTE,
                 f"'converge' = the first checkpoint after which the run stays within "
                 f"{CONVERGED_EPS} nats/token of its own final ll for the rest of its budget "
                 f"(each method by its own curve; mean over seeds, ± the half-width of the 95% "
                 f"Student-t interval); peak_decline = how far a seed ended below its best "
                 f"checkpoint (a curve that peaks and falls back converges only once it is "
                 f"within the tolerance of where it ends). Held-out ll by document completion.",
                 "Seconds are training time only (evaluation excluded), median over seeds of "
                 "each run's median per pass; CGS 'per pass' is per Gibbs iteration.",
                 "Paper columns: NYTimes, K=256, GTX-690 GPU / E5-2660 CPU (their Table 1)."])
    return rows


def _n_inner(d) -> int:
    """SAME's inner sweeps per minibatch of one run's rows: its params (a JSON string, as
    :func:`~same.report.traces.load_traces` records them), else SameLDA's default."""
    import json

    params = d["params"].iloc[0] if "params" in d else None
    if isinstance(params, str) and "n_inner" in json.loads(params):
        return int(json.loads(params)["n_inner"])
    from same.model.sampler import SameLDA

    return int(SameLDA().n_inner)


def table2_rows(df, runs: dict) -> list[dict]:
    """Seconds per pass for each m (runs: m → label) over every seed of its run, with ratios
    to the smallest m.

    Per m: ``first_pass_s``, the first pass's seconds (median over seeds); ``s_per_pass``,
    the steady cost (each seed's median over the passes after the first, then the median
    over seeds; ``s_per_pass_min``/``_max`` their range); ``seeds``; the samples per word the
    run drew (the paper's accounting, m × passes: the trace's ``samples_per_word`` at its
    last pass) and the sweeps per word behind them (× ``n_inner``, SAME's inner sweeps per
    minibatch, from the run's params).
    """
    rows = []
    for m in sorted(runs):
        d = df[df["label"] == runs[m]]
        if d.empty:
            continue
        cost = per_pass_over_seeds(d)
        firsts = [s for _, run in d.groupby("seed") if (s := first_pass_seconds(run)) is not None]
        last = d.sort_values("pass").groupby("seed").last()
        samples = round(float(last["samples_per_word"].median()), 6)  # m × passes, summed
        samples = int(samples) if samples.is_integer() else samples
        n_inner = _n_inner(d)
        rows.append({"n_samples": m, "seeds": cost["seeds"],
                     "first_pass_s": float(np.median(firsts)) if firsts else None,
                     "s_per_pass": cost["median"], "s_per_pass_min": cost["min"],
                     "s_per_pass_max": cost["max"], "paper_s_per_pass": PAPER_TABLE2.get(m),
                     "passes": int(last["pass"].median()), "samples_per_word": samples,
                     "n_inner": n_inner, "sweeps_per_word": samples * n_inner})
    if rows:
        base = rows[0]["s_per_pass"]
        pbase = PAPER_TABLE2.get(rows[0]["n_samples"])
        for r in rows:
            r["ratio_to_smallest_m"] = r["s_per_pass"] / base
            r["paper_ratio"] = (r["paper_s_per_pass"] / pbase
                                if r["paper_s_per_pass"] and pbase else None)
    order = ("n_samples", "seeds", "first_pass_s", "s_per_pass", "s_per_pass_min",
             "s_per_pass_max", "ratio_to_smallest_m", "paper_s_per_pass", "paper_ratio")
    return [{**{k: r[k] for k in order}, **r} for r in rows]


def table2(df, runs: dict, csv_path, md_path, setting: str) -> list[dict]:
    """Seconds per pass vs m, over every seed (:func:`table2_rows`)."""
    rows = table2_rows(df, runs)
    seeds = sorted({r["seeds"] for r in rows})
    write_table(rows, csv_path, md_path, "Table 2: runtime per pass vs number of samples m",
                [setting,
                 "Training seconds only (evaluation excluded). first_pass_s: the first pass, "
                 "apart (median over seeds); s_per_pass: each seed's median over the passes "
                 "after the first, then the median over seeds (s_per_pass_min/_max: the range "
                 f"over seeds); seeds: runs per m ({', '.join(map(str, seeds))}). Ratios are "
                 "of s_per_pass.",
                 "samples_per_word: the paper's accounting, m × passes (each word's m samples "
                 "per pass), at the end of the run; sweeps_per_word = samples_per_word × "
                 "n_inner, SAME's inner Gibbs sweeps over each minibatch per pass: the draws "
                 "actually made per word.",
                 "The fit rule reserves every core for each m sweep run (workflow/rules/"
                 "fit.smk), so that a run made under it held the machine alone while timed.",
                 "Paper column: NYTimes, K=256, one GTX-690 core (their Table 2)."])
    return rows


def time_to_quality_rows(df) -> list[dict]:
    """Training seconds each method needs to reach each rung of the one ladder of absolute
    targets (:func:`~same.report.stats.ladder`: fixed gaps below the best method's mean final
    ll). Per method and rung: the mean over seeds of the interpolated seconds
    (:func:`~same.report.stats.seconds_to`) when every seed reaches it, else None, with how
    many seeds did."""
    labels = [m for m in METHOD_NAMES if not df[df["label"] == m].empty]
    rows = []
    for target, name in sorted(ladder(df, labels).items()):
        row = {"target_ll": target, "target": name}
        for m in labels:
            secs = seconds_to(df, m, target)
            hit = np.isfinite(secs)
            row[f"{METHOD_NAMES[m]} s"] = float(secs.mean()) if hit.all() else None
            row[f"{METHOD_NAMES[m]} seeds"] = f"{int(hit.sum())}/{len(secs)}"
        if "same" in labels and "cgs" in labels:
            a, b = row[f"{METHOD_NAMES['same']} s"], row[f"{METHOD_NAMES['cgs']} s"]
            row["SAME / CGS seconds"] = a / b if a is not None and b else None
        rows.append(row)
    return rows


def time_to_quality(df, csv_path, md_path, setting: str) -> list[dict]:
    """The time-to-quality table of one dataset (CSV and Markdown), each configuration's
    ladder from its own runs."""
    rows = by_configuration(df, time_to_quality_rows)
    write_table(rows, csv_path, md_path, "Time to quality: training seconds to reach a held-out ll",
                [setting, CONFIGURATION_NOTE,
                 "Targets: one ladder of absolute held-out lls (document completion), "
                 + ", ".join(f"{g:g}" for g in LADDER_GAPS) + " nats/token below the best "
                 "method's mean final ll (the best method fixes the ladder; no target depends "
                 "on the worst), the same ladder claims.md reads; seconds are training time "
                 "(evaluation excluded), mean over seeds, interpolated linearly between "
                 "checkpoints; — = not reached by every seed.",
                 "Checkpoints: every pass (CGS: iteration) up to 20, then at least every tenth of "
                 "the budget, so no interpolation spans more than 10 % of a run."])
    return rows


def topic_recovery_rows(df, models: dict, true_topic_word, split=None,
                        doc_topic_prior: float | None = None) -> list[dict]:
    """Per method: its final held-out ll (first seed) and how well its topics match the true
    ones of a synthetic corpus (:func:`same.model.topic_recovery.topic_recovery`: matched total-variation
    distance, 0 = perfect, and the mean TV between distinct true topics for scale).  With
    ``split`` and ``doc_topic_prior``, a first row scores the true topics themselves with the
    same evaluator: the held-out ll a method would reach by recovering them exactly.

    models : {label: path of the run's model.npz}; true_topic_word : (K, W) array
    """
    from same.experiments.runner import load_model
    from same.model.evaluate import evaluate
    from same.model.topic_recovery import topic_recovery

    rows = []
    if split is not None:
        rec = topic_recovery(true_topic_word, true_topic_word)
        rows.append({"method": "true topics (oracle)",
                     "final ll": evaluate(true_topic_word, doc_topic_prior, split).ll,
                     "mean matched TV": 0.0, "median matched TV": 0.0, "max matched TV": 0.0,
                     "true topics' mutual TV": rec.true_pairwise_tv})
    for label, path in models.items():
        rec = topic_recovery(load_model(path)["topic_word"], true_topic_word)
        rows.append({"method": METHOD_NAMES.get(label, label),
                     "final ll": final_ll(first_seed(df[df["label"] == label])),
                     "mean matched TV": rec.mean_tv, "median matched TV": rec.median_tv,
                     "max matched TV": rec.max_tv, "true topics' mutual TV": rec.true_pairwise_tv})
    return rows


def topic_recovery_table(df, models: dict, truth_path, csv_path, md_path, setting: str,
                         split_path=None, doc_topic_prior: float | None = None) -> list[dict]:
    """The topic-recovery table of a synthetic dataset (CSV and Markdown)."""
    from same.data.planted import load_synthetic
    from same.data.split import load_split

    split = load_split(split_path) if split_path is not None else None
    rows = topic_recovery_rows(df, models, load_synthetic(truth_path)[1], split, doc_topic_prior)
    write_table(rows, csv_path, md_path, "Topic recovery on SYNTHETIC data (known true topics)",
                [setting,
                 "Each method's learned topics (first seed, end of its budget) matched one to one "
                 "to the true topics by least total total-variation distance (Hungarian); "
                 "0 = recovered exactly, 1 = disjoint. The last column is the mean TV between "
                 "two distinct true topics: a matched TV near it means the topic was not "
                 "recovered.",
                 "Held-out ll as in every other table (document completion, nats/token); the "
                 "oracle row scores the true topics with the same evaluator and α."],
                inputs=[truth_path, split_path, *models.values()])
    return rows
