"""Tables 1 and 2 of the paper from traces, our numbers beside the paper's (CSV and Markdown)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..outputs import check_target, text_kind, write_text
from .paper import METHOD_NAMES, PAPER_TABLE1, PAPER_TABLE1_OTHER, PAPER_TABLE2
from .traces import (
    configuration_frame,
    configurations,
    final_ll,
    final_lls,
    first_reach,
    first_seed,
    mean_reach_seconds,
    per_pass_seconds,
    test_traces,
    twinned_labels,
)

__all__ = ["write_csv", "csv_text", "convergence_reference", "table1_rows", "table2_rows",
           "table1", "table2",
           "time_to_quality_rows", "time_to_quality", "write_table", "topic_recovery_rows",
           "topic_recovery_table"]


def csv_text(rows: list[dict]) -> str:
    """Rows as CSV text (a header row, then one line per row)."""
    import pandas as pd

    return pd.DataFrame(rows).to_csv(index=False)


def write_csv(rows: list[dict], csv_path, inputs=()) -> None:
    """Rows as a CSV file, by :mod:`same.outputs`'s rules (an existing file is replaced only
    when its header row is this table's; never one of ``inputs``)."""
    text = csv_text(rows)
    write_text(csv_path, text, text_kind("table", text), inputs=inputs)


def write_table(rows: list[dict], csv_path, md_path, title: str, notes: Sequence[str],
                inputs=()) -> None:
    """Rows as CSV and as a Markdown table (4 significant digits, — for missing) with notes.

    Both targets are checked before either is written (:mod:`same.outputs`: an existing one
    is replaced only when its first line, header row or title, is this table's).

    Raises
    ------
    same.outputs.OutputError
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


def convergence_reference(df) -> float:
    """Held-out ll of CGS at its last checkpoint (iteration budget), mean over seeds.

    Raises
    ------
    ValueError
        No CGS run (label ``cgs``) in ``df``.
    """
    cgs = df[df["label"] == "cgs"]
    if cgs.empty:
        raise ValueError("table 1 needs the CGS runs (label 'cgs')")
    return float(cgs[cgs["pass"] == cgs["pass"].max()]["ll"].mean())


def _method_row(label: str, d, ref: float, cgs_iters: int) -> dict:
    per_pass, reach_pass, reach_s, final = [], [], [], []
    for _, run in d.groupby("seed"):
        per_pass.append(per_pass_seconds(run))
        if label == "cgs":  # by definition CGS converges at the reference iteration
            at = run[run["pass"] == cgs_iters]
            p, s = float(cgs_iters), float(at["train_seconds"].iloc[0])
        else:
            p, s = first_reach(run, ref)
        reach_pass.append(p)
        reach_s.append(s)
        final.append(final_ll(run))
    all_reached = all(s is not None for s in reach_s)
    paper = PAPER_TABLE1.get(label, ("—", None, None))
    return {"method": METHOD_NAMES[label], "seeds": len(per_pass),
            "s_per_pass": float(np.mean(per_pass)),
            "s_to_converge": float(np.mean(reach_s)) if all_reached else None,
            "passes_to_converge": float(np.mean(reach_pass)) if all_reached else None,
            "seeds_converged": f"{sum(s is not None for s in reach_s)}/{len(reach_s)}",
            "final_ll": float(np.mean(final)), "paper_system": paper[0],
            "paper_s_per_pass": paper[1], "paper_s_to_converge": paper[2]}


def table1_rows(df) -> list[dict]:
    """Per method: s/pass, s and passes to converge (= reach CGS's ll at its budget), final ll."""
    ref = convergence_reference(df)
    cgs_iters = int(df[df["label"] == "cgs"]["pass"].max())
    rows = [_method_row(label, df[df["label"] == label], ref, cgs_iters)
            for label in METHOD_NAMES if not df[df["label"] == label].empty]
    for name, per, conv in PAPER_TABLE1_OTHER:
        rows.append({"method": "—", "seeds": None, "s_per_pass": None, "s_to_converge": None,
                     "passes_to_converge": None, "seeds_converged": None, "final_ll": None,
                     "paper_system": name, "paper_s_per_pass": per, "paper_s_to_converge": conv})
    for r in rows:
        r["converge_target_ll"] = ref
        r["cgs_reference_iterations"] = cgs_iters
    return rows


def by_configuration(df, rows_of, tuned_only: bool = False) -> list[dict]:
    """``rows_of(traces)`` for each configuration the traces hold (as published, tuned:
    :func:`~same.report.traces.configuration_frame`), each row led by its ``configuration``.
    ``tuned_only``: the tuned configuration keeps only the rows of methods with a tuned twin
    (the others are the very runs of the published rows)."""
    from ..tuning import CONFIGURATIONS

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
    """Time per pass and time to converge per method (converged = CGS's ll at its budget), in
    each configuration (the tuned rows: the methods with a step size)."""
    rows = by_configuration(df, table1_rows, tuned_only=True)
    write_table(rows, csv_path, md_path, "Table 1: runtime per pass and time to converge",
                [setting, CONFIGURATION_NOTE,
                 f"'converge' = first checkpoint whose held-out ll reaches CGS's ll after "
                 f"{rows[0]['cgs_reference_iterations']} iterations "
                 f"({rows[0]['converge_target_ll']:.4f} nats/token, mean over seeds); — = not "
                 f"reached by every seed within the budget.",
                 "Seconds are training time only (evaluation excluded); CGS 'per pass' is per "
                 "Gibbs iteration.",
                 "Paper columns: NYTimes, K=256, GTX-690 GPU / E5-2660 CPU (their Table 1)."])
    return rows


def table2_rows(df, runs: dict) -> list[dict]:
    """Seconds per pass for each m (runs: m → label; first seed), with ratios to the smallest m."""
    rows = []
    for m in sorted(runs):
        d = df[df["label"] == runs[m]]
        if not d.empty:
            rows.append({"n_samples": m, "s_per_pass": per_pass_seconds(first_seed(d)),
                         "paper_s_per_pass": PAPER_TABLE2.get(m)})
    if rows:
        base = rows[0]["s_per_pass"]
        pbase = PAPER_TABLE2.get(rows[0]["n_samples"])
        for r in rows:
            r["ratio_to_smallest_m"] = r["s_per_pass"] / base
            r["paper_ratio"] = (r["paper_s_per_pass"] / pbase
                                if r["paper_s_per_pass"] and pbase else None)
    return rows


def table2(df, runs: dict, csv_path, md_path, setting: str) -> list[dict]:
    """Seconds per pass vs m."""
    rows = table2_rows(df, runs)
    write_table(rows, csv_path, md_path, "Table 2: runtime per pass vs number of samples m",
                [setting, "Training seconds per pass (median over passes after the first).",
                 "Paper column: NYTimes, K=256, one GTX-690 core (their Table 2)."])
    return rows


def time_to_quality_rows(df, n_steps: int = 5) -> list[dict]:
    """Training seconds each method needs to reach a ladder of held-out ll targets.

    Targets: each method's mean final ll, and ``n_steps`` evenly spaced levels from the worst
    to the best of them.  Per method and target: the mean over seeds of the interpolated
    seconds (:func:`~same.report.traces.reach_seconds`) when every seed reaches it, else None,
    with how many seeds did.
    """
    labels = [m for m in METHOD_NAMES if not df[df["label"] == m].empty]
    finals = {m: float(final_lls(df, m).mean()) for m in labels}
    ladder = {round(v, 6): f"{METHOD_NAMES[m]} final" for m, v in finals.items()}
    for v in np.linspace(min(finals.values()), max(finals.values()), n_steps):
        ladder.setdefault(round(float(v), 6), "step")
    rows = []
    for target in sorted(ladder):
        row = {"target_ll": target, "target": ladder[target]}
        for m in labels:
            row[f"{METHOD_NAMES[m]} s"], row[f"{METHOD_NAMES[m]} seeds"] = mean_reach_seconds(
                df, m, target)
        if "same" in labels and "cgs" in labels:
            a, b = row[f"{METHOD_NAMES['same']} s"], row[f"{METHOD_NAMES['cgs']} s"]
            row["SAME / CGS seconds"] = a / b if a is not None and b else None
        rows.append(row)
    return rows


def time_to_quality(df, csv_path, md_path, setting: str) -> list[dict]:
    """The time-to-quality table of one dataset (CSV and Markdown), each configuration's
    ladder of targets from its own runs."""
    rows = by_configuration(df, time_to_quality_rows)
    write_table(rows, csv_path, md_path, "Time to quality: training seconds to reach a held-out ll",
                [setting, CONFIGURATION_NOTE,
                 "Targets: each method's mean final ll and evenly spaced levels between the worst "
                 "and the best; seconds are training time (evaluation excluded), mean over seeds, "
                 "interpolated linearly between checkpoints; — = not reached by every seed.",
                 "Checkpoints: every pass (CGS: iteration) up to 20, then at least every tenth of "
                 "the budget, so no interpolation spans more than 10 % of a run."])
    return rows


def topic_recovery_rows(df, models: dict, true_topic_word, split=None,
                        doc_topic_prior: float | None = None) -> list[dict]:
    """Per method: its final held-out ll (first seed) and how well its topics match the true
    ones of a synthetic corpus (:func:`same.recovery.topic_recovery`: matched total-variation
    distance, 0 = perfect, and the mean TV between distinct true topics for scale).  With
    ``split`` and ``doc_topic_prior``, a first row scores the true topics themselves with the
    same evaluator: the held-out ll a method would reach by recovering them exactly.

    models : {label: path of the run's model.npz}; true_topic_word : (K, W) array
    """
    from ..evaluate import evaluate
    from ..recovery import topic_recovery
    from ..runner import load_model

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
    from ..scale_data import load_synthetic
    from ..split import load_split

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
