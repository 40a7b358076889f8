"""Tables 1 and 2 of the paper from traces, our numbers beside the paper's (CSV and Markdown)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from same.experiments.machine_load import SHARED_CORES
from same.io.outputs import check_target, text_kind, write_text

from .paper import (
    CONVERGED_EPS,
    METHOD_NAMES,
    PAPER_TABLE1,
    PAPER_TABLE1_OTHER,
    PAPER_TABLE2,
)
from .stats import (
    CGS_REFERENCE_ITERATION,
    LADDER_GAPS,
    cgs_reference,
    converge_to,
    converged,
    ladder,
    seconds_to,
    t_interval,
)
from .timing import over_rounds, per_pass_alone, retime, seconds_problem, timed_labels
from .traces import (
    configuration_frame,
    configurations,
    first_pass_seconds,
    implementation,
    per_pass_over_seeds,
    test_traces,
    twinned_labels,
)

__all__ = ["write_csv", "csv_text", "table1_rows", "table2_rows",
           "table1", "table2",
           "time_to_quality_rows", "time_to_quality", "write_table"]


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


def _method_row(label: str, d, eps: float, timing) -> dict:
    """One method's row: seconds per pass measured alone, time to converge in the paper's
    sense (to CGS@1000's held-out ll) and by its own plateau, final ll with its interval."""
    conv = converged(d, label, eps)
    final = np.array([c.final for c in conv])
    passes = np.array([c.passes for c in conv])
    paper = PAPER_TABLE1.get(label, ("—", None, None))
    refusal = seconds_problem(d, label)
    alone = per_pass_alone(d, timing, label) if refusal is None else None
    if alone is None and refusal is None:  # the trace's own seconds, from runs held alone
        alone = {**per_pass_over_seeds(d[d["label"] == label]), "rounds": None}
    ref = cgs_reference(d)
    target = None if ref is None else float(ref.mean())
    row = {"method": METHOD_NAMES[label],
           "implementation": implementation(label, d[d["label"] == label]), "seeds": len(conv), "seconds": "measured alone" if refusal is None else
           f"refused: {refusal}",
           "s_per_pass": None if alone is None else alone["median"],
           "s_per_pass_min": None if alone is None else alone["min"],
           "s_per_pass_max": None if alone is None else alone["max"],
           "cgs1000_ll": target, "reached_cgs1000": None, "passes_to_cgs1000": None,
           "s_to_cgs1000": None, "s_to_cgs1000_min": None, "s_to_cgs1000_max": None,
           "final_minus_cgs1000": None if target is None else float(final.mean() - target)}
    if target is not None:
        secs, hit = converge_to(d, label, target)
        row["reached_cgs1000"] = f"{int(hit.sum())}/{len(secs)}"
        if hit.all():
            row["passes_to_cgs1000"] = float(np.mean(converge_to(d, label, target, "pass")[0]))
            if refusal is None:
                spread = over_rounds(lambda x: float(np.mean(converge_to(x, label, target)[0])),
                                     d[d["label"] == label], timing) \
                    if timing is not None else None
                row["s_to_cgs1000"] = float(secs.mean())
                if spread and spread["rounds"]:
                    row["s_to_cgs1000_min"], row["s_to_cgs1000_max"] = spread["min"], spread["max"]
    row.update({
        "s_to_plateau": float(np.mean([c.seconds for c in conv])) if refusal is None else None,
        "passes_to_plateau": float(passes.mean()), "passes_to_plateau_95": _half(passes),
        "budget_passes": float(conv[0].budget_passes),
        "peak_decline": float(max(c.decline for c in conv)),
        "final_ll": float(final.mean()), "final_ll_95": _half(final),
        "paper_system": paper[0], "paper_s_per_pass": paper[1], "paper_s_to_converge": paper[2]})
    return row


def _half(a) -> float | None:
    """Half-width of the 95% t interval of ``a``'s mean (None for one seed)."""
    _, lo, hi = t_interval(a)
    return (hi - lo) / 2 if np.isfinite(lo) else None


def table1_rows(df, eps: float = CONVERGED_EPS, timing=None) -> list[dict]:
    """Per method (rows of ``df`` retimed by :func:`~same.report.timing.retime`, or the
    traces' own seconds where their runs held the machine): seconds per pass measured alone
    (median over the timing rounds, min–max beside), the paper's time to converge (training
    seconds and passes to reach CGS's mean held-out ll after 1000 iterations, mean over seeds,
    where every seed reaches it; how many do; the final ll's gap to it), each run's own
    plateau (within ``eps`` of its own final ll for the rest of its budget), the largest
    decline from a peak, final ll with its 95% t interval, beside the paper's Table 1."""
    rows = [_method_row(label, df, eps, timing) for label in METHOD_NAMES
            if not df[df["label"] == label].empty]
    keys = list(rows[0]) if rows else []
    for name, per, conv in PAPER_TABLE1_OTHER:
        rows.append({**dict.fromkeys(keys), "method": "—", "paper_system": name,
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
#: What a table of the published configuration alone says.
PUBLISHED_ONLY_NOTE = ("Configuration: as published only (the paper's, BIDMach's, each "
                       "library's defaults): no run of this profile has a tuned twin.")


def configuration_note(df) -> str:
    """:data:`CONFIGURATION_NOTE` where ``df`` holds both configurations, else
    :data:`PUBLISHED_ONLY_NOTE`."""
    return CONFIGURATION_NOTE if len(configurations(df)) > 1 else PUBLISHED_ONLY_NOTE


def _priced(df, timing):
    """The test-document traces, the main comparison's seconds priced by ``timing``
    (:func:`~same.report.timing.retime`) when there is one; without one the traces' own
    seconds stay, read only where their runs held the machine
    (:func:`~same.report.timing.seconds_problem`)."""
    df = test_traces(df)
    return df if timing is None else retime(df, timing, labels=timed_labels(df))


def _no_reference_text(df) -> str:
    """Why the cgs1000 columns are empty, where they are: CGS absent or run shorter."""
    if cgs_reference(df) is not None:
        return ""
    cgs = df[df["label"] == "cgs"]
    ran = f"CGS ran {int(cgs['iteration'].max())} iterations" if not cgs.empty else "no CGS run"
    return (f" Empty here: {ran}, and the paper's convergence needs CGS's ll after "
            f"{CGS_REFERENCE_ITERATION} (cgs.iterations), so C4 and C5 are not testable.")


def table1(df, csv_path, md_path, setting: str, timing=None) -> list[dict]:
    """Time per pass and time to converge per method (the paper's definition first, each run's
    own plateau beside), in each configuration (the tuned rows: the methods with a step size);
    seconds measured alone (``timing``: a loaded timing.json; None refuses every method's
    seconds)."""
    df = _priced(df, timing)
    rows = by_configuration(df, lambda d: table1_rows(d, timing=timing), tuned_only=True)
    refused = sorted({r["seconds"] for r in rows if str(r.get("seconds", "")).startswith("refused")})
    write_table(rows, csv_path, md_path, "Table 1: runtime per pass and time to converge",
                [setting, configuration_note(df),
                 f"Converge, as the paper defines it (§5.2, Table 1): reach the held-out ll of "
                 f"standard CGS after {CGS_REFERENCE_ITERATION} iterations (cgs1000_ll: the "
                 "mean over CGS's seeds, document completion). reached_cgs1000: how many seeds "
                 "reach it within their budget; passes_to_cgs1000 and s_to_cgs1000: the passes "
                 "(CGS: iterations) and training seconds to it, mean over seeds, where every "
                 "seed reaches it (— otherwise: not within its budget; final_minus_cgs1000 says "
                 "where the mean final ll ends against it); CGS converges by the definition at "
                 f"iteration {CGS_REFERENCE_ITERATION}, every seed (the paper's Table 1: its "
                 "1000 iterations' seconds)." + _no_reference_text(df),
                 f"Own plateau, a second, labelled column: the first checkpoint after which the "
                 f"run stays within {CONVERGED_EPS} nats/token of its own final ll for the rest "
                 "of its budget (each method by its own curve); peak_decline = how far a seed "
                 "ended below its best checkpoint.",
                 "Seconds are training time only (evaluation excluded), measured with the "
                 "machine alone: the quality runs, which shared the machine, give the passes to "
                 "each point; the timing rule (timing.json) gives what those passes cost alone, "
                 "each method timed in turn, interleaved over rounds, each up to "
                 "timing.cap_seconds; a pass beyond the timed ones costs what it cost the run "
                 "itself, scaled by the alone-to-shared ratio of the timed passes (a method "
                 "whose passes get cheaper as it converges is priced by its own later passes). "
                 "s_per_pass is the runs' median cost per pass after the first over their whole "
                 "budget so priced (median over seeds), median over rounds (min/max beside), "
                 "s_to_* the median over rounds of the mean over seeds (min/max over rounds "
                 "beside). CGS 'per pass' is per Gibbs iteration."
                 + (" Refused (measured beside other work or not at all): "
                    + "; ".join(r.removeprefix("refused: ") for r in refused) if refused else ""),
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
        n_runs = d["seed"].nunique()
        if "shared" in d:  # a run that shared the machine while timed is refused
            d = d[~d["shared"].astype(bool)]
        if d.empty:
            rows.append({"n_samples": m, "seeds": 0, "seeds_alone": f"0/{n_runs}",
                         "first_pass_s": None, "s_per_pass": None, "s_per_pass_min": None,
                         "s_per_pass_max": None, "paper_s_per_pass": PAPER_TABLE2.get(m)})
            continue
        cost = per_pass_over_seeds(d)
        firsts = [s for _, run in d.groupby("seed") if (s := first_pass_seconds(run)) is not None]
        last = d.sort_values("pass").groupby("seed").last()
        samples = round(float(last["samples_per_word"].median()), 6)  # m × passes, summed
        samples = int(samples) if samples.is_integer() else samples
        n_inner = _n_inner(d)
        rows.append({"n_samples": m, "seeds": cost["seeds"],
                     "seeds_alone": f"{cost['seeds']}/{n_runs}",
                     "first_pass_s": float(np.median(firsts)) if firsts else None,
                     "s_per_pass": cost["median"], "s_per_pass_min": cost["min"],
                     "s_per_pass_max": cost["max"], "paper_s_per_pass": PAPER_TABLE2.get(m),
                     "passes": int(last["pass"].median()), "samples_per_word": samples,
                     "n_inner": n_inner, "sweeps_per_word": samples * n_inner})
    if rows:
        base = rows[0]["s_per_pass"]
        pbase = PAPER_TABLE2.get(rows[0]["n_samples"])
        for r in rows:
            r["ratio_to_smallest_m"] = (r["s_per_pass"] / base if r["s_per_pass"] is not None
                                        and base else None)
            r["paper_ratio"] = (r["paper_s_per_pass"] / pbase
                                if r["paper_s_per_pass"] and pbase else None)
    order = ("n_samples", "seeds", "seeds_alone", "first_pass_s", "s_per_pass",
             "s_per_pass_min", "s_per_pass_max", "ratio_to_smallest_m", "paper_s_per_pass",
             "paper_ratio")
    return [{**{k: r.get(k) for k in order}, **r} for r in rows]


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
                 "fit.smk), so that a run made under it held the machine alone while timed; "
                 "seeds_alone: how many of its runs' meta.json say so (other work averaging "
                 f"at most {SHARED_CORES:g} busy cores: same.experiments.machine_load."
                 "SHARED_CORES); a run that shared the machine is refused, its seconds not "
                 "read.",
                 "Paper column: NYTimes, K=256, one GTX-690 core (their Table 2)."])
    return rows


def time_to_quality_rows(df, timing=None) -> list[dict]:
    """Training seconds (measured alone: rows of ``df`` retimed by
    :func:`~same.report.timing.retime`) each method needs to reach each rung of the one ladder
    of absolute targets (:func:`~same.report.stats.ladder`: fixed gaps below the best
    method's mean final ll). Per method and rung: the mean over seeds of the interpolated
    seconds (:func:`~same.report.stats.seconds_to`) when every seed reaches it, else None, with
    how many seeds did, and the range of that mean over the timing rounds."""
    labels = [m for m in METHOD_NAMES if not df[df["label"] == m].empty]
    rows = []
    for target, name in sorted(ladder(df, labels).items()):
        row = {"target_ll": target, "target": name}
        for m in labels:
            secs = seconds_to(df, m, target)
            hit = np.isfinite(secs)
            ok = hit.all() and seconds_problem(df, m) is None
            row[f"{METHOD_NAMES[m]} s"] = float(secs.mean()) if ok else None
            spread = (over_rounds(lambda d, m=m, t=target: float(np.mean(seconds_to(d, m, t))),
                                  df[df["label"] == m], timing)
                      if ok and timing is not None else None)
            row[f"{METHOD_NAMES[m]} s range"] = (
                f"{spread['min']:.3g}–{spread['max']:.3g}" if spread and spread["rounds"]
                else None)
            row[f"{METHOD_NAMES[m]} seeds"] = f"{int(hit.sum())}/{len(secs)}"
        if "same" in labels and "cgs" in labels:
            a, b = row[f"{METHOD_NAMES['same']} s"], row[f"{METHOD_NAMES['cgs']} s"]
            row["SAME / CGS seconds"] = a / b if a is not None and b else None
        rows.append(row)
    return rows


def time_to_quality(df, csv_path, md_path, setting: str, timing=None) -> list[dict]:
    """The time-to-quality table of one dataset (CSV and Markdown), each configuration's
    ladder from its own runs, seconds measured alone (``timing``; None refuses them)."""
    df = _priced(df, timing)
    rows = by_configuration(df, lambda d: time_to_quality_rows(d, timing))
    refused = sorted({seconds_problem(df, lab) for lab in timed_labels(df)} - {None})
    write_table(rows, csv_path, md_path, "Time to quality: training seconds to reach a held-out ll",
                [setting, configuration_note(df),
                 "Targets: one ladder of absolute held-out lls (document completion), "
                 + ", ".join(f"{g:g}" for g in LADDER_GAPS) + " nats/token below the best "
                 "method's mean final ll (the best method fixes the ladder; no target depends "
                 "on the worst), the same ladder claims.md reads; seconds are training time "
                 "(evaluation excluded) measured with the machine alone: the passes each seed "
                 "needs (interpolated linearly between checkpoints) priced by the timing rule's "
                 "cost of those passes alone, mean over seeds, median over the timing rounds "
                 "('s range': that mean's min–max over rounds); — = not reached by every seed"
                 + (", or refused: " + "; ".join(refused) if refused else "") + ".",
                 "Checkpoints: every pass (CGS: iteration) up to 20, then at least every tenth of "
                 "the budget, so no interpolation spans more than 10 % of a run."])
    return rows
