"""The finding, said plainly: claims.md's opening paragraph per dataset, generated from the
verdicts and the traces (who is best under each held-out estimator, who is fastest to the
ladder's rung, where SAME stands against CGS and each VB, which claims hold)."""

from __future__ import annotations

import numpy as np

from same.experiments.tuning import CONFIGURATIONS

from .paper import METHOD_NAMES
from .stats import interval_text, ladder, seconds_to, welch
from .timing import over_rounds, retime, seconds_problem, timed_labels
from .traces import (
    ORDER_SUFFIX,
    configuration_frame,
    configurations,
    final_lls,
    order_twinned_labels,
    test_traces,
)
from .verdicts import METRICS, METRICS_SHORT, PRIMARY_METRIC, Outcome

__all__ = ["findings_lines", "order_effects", "ORDER_NAMES"]


def _ranking(df, metric: str) -> str:
    """"best X (mean ± t), then Y (−d, Welch p), ..." under ``metric``."""
    d = df if metric == "ll" else df.assign(ll=df[metric])
    finals = {lab: final_lls(d, lab) for lab in METHOD_NAMES if lab in set(d["label"])}
    order = sorted(finals, key=lambda lab: -finals[lab].mean())
    best = order[0]
    head = f"best {interval_text(finals[best], name=METHOD_NAMES[best])}"
    rest = [f"{METHOD_NAMES[lab]} {welch(finals[lab], finals[best]).text()}" for lab in order[1:]]
    return head + ("; then, as differences from it: " + "; ".join(rest) if rest else "")


def _fastest(df, timing=None) -> list[str]:
    """Per rung of the ladder (:func:`~same.report.stats.ladder`): the methods that reach it
    in every seed, fastest first (mean training seconds measured alone, with their range over
    the timing rounds), those that do not, and those whose seconds are refused."""
    labels = [lab for lab in METHOD_NAMES if lab in set(df["label"])]
    refused = {lab: seconds_problem(df, lab) for lab in labels}
    out = []
    for rung, name in sorted(ladder(df, labels).items(), reverse=True):
        reach = {lab: seconds_to(df, lab, rung) for lab in labels if not refused[lab]}
        got = sorted((s.mean(), lab) for lab, s in reach.items() if np.isfinite(s).all())
        never = [METHOD_NAMES[lab] for lab, s in reach.items() if not np.isfinite(s).all()]
        out.append(f"  - {rung:.4f} ({name}): "
                   + (", ".join(f"{METHOD_NAMES[lab]} {_spread(df, timing, lab, rung, t)}"
                                for t, lab in got) + (f"; not in every seed: {', '.join(never)}"
                                                      if never else "")
                      if got else "no method in every seed"))
    bad = [f"{METHOD_NAMES[lab]} ({why})" for lab, why in refused.items() if why]
    if bad:
        out.append("  - seconds refused: " + "; ".join(bad))
    return out


def _spread(df, timing, label, target, mean) -> str:
    """"1.2 s (1.1–1.3)": the mean over seeds and its range over the timing rounds."""
    if timing is None:
        return f"{mean:.1f} s"
    r = over_rounds(lambda d: float(np.mean(seconds_to(d, label, target))),
                    df[df["label"] == label], timing)
    if not r["rounds"]:
        return f"{mean:.1f} s"
    return f"{mean:.2f} s ({r['min']:.2f}–{r['max']:.2f})"


#: What the other document order is, by the order its runs resolved to (meta.json).
ORDER_NAMES = {"shuffled": "one shuffle of the training documents seeded by each run's seed",
               "file": "the corpus's file order"}


def order_effects(df, metric: str = "ll") -> str | None:
    """"In the other document order (…), SAME's final ll moves by +0.015 (Welch p), …" for
    every run of ``df`` with a twin in the other order (:func:`~.traces.order_frame`); None
    when none has one."""
    twins = sorted(order_twinned_labels(df), key=lambda lab: list(METHOD_NAMES).index(lab)
                   if lab in METHOD_NAMES else len(METHOD_NAMES))
    if not twins:
        return None
    d = df if metric == "ll" else df.assign(ll=df[metric])
    orders = set(d.loc[d["label"].isin([t + ORDER_SUFFIX for t in twins]), "document_order"]) \
        if "document_order" in d else set()
    what = " / ".join(ORDER_NAMES.get(o, o) for o in sorted(orders)) or "the other order"
    parts = [f"{METHOD_NAMES.get(lab, lab)} by "
             f"{welch(final_lls(d, lab + ORDER_SUFFIX), final_lls(d, lab)).text()}"
             for lab in twins]
    n = d.loc[d["label"] == twins[0], "seed"].nunique()
    return (f"In the other document order ({what}; as published, {n} seeds, "
            f"{METRICS_SHORT[metric]}), the final ll moves: " + "; ".join(parts)
            + "; a verdict that moves with the order is marked fragile")


def _same_against(df, metric: str) -> str:
    """SAME's final ll minus CGS's and each VB's, with Welch p, under ``metric``."""
    d = df if metric == "ll" else df.assign(ll=df[metric])
    same = final_lls(d, "same")
    parts = [f"{METHOD_NAMES[lab]} {welch(same, final_lls(d, lab)).text()}"
             for lab in METHOD_NAMES if lab != "same" and lab in set(d["label"])]
    return "SAME − " + "; SAME − ".join(parts)


def _claims_held(verdicts, name: str, configuration: str, metric: str) -> str:
    """Outcome → claims under ``metric`` (time claims as judged), for one
    configuration, each VB implementation named where it matters."""
    by: dict = {}
    for v in verdicts:
        if v.dataset != name or v.configuration not in (configuration, None):
            continue
        if v.metric not in (metric, None):
            continue
        by.setdefault(v.outcome, []).append(_named(v))
    return "; ".join(f"{o.value}: {', '.join(sorted(by[o]))}" for o in Outcome if o in by)


def _named(v) -> str:
    """"C1 vs gensim (fragile)": a verdict's claim, VB implementation and notes."""
    notes = (["fragile"] if v.fragile else []) + (
        [f"from the GPU measurement on {v.gpu_device}, not a corpus's runs"]
        if v.gpu_device else [])
    return (v.claim + (f" vs {v.vb}" if v.vb else "")
            + (f" ({'; '.join(notes)})" if notes else ""))


def across_datasets_line(verdicts) -> str | None:
    """The finding's line for the claims judged once across datasets (C9; C6 read from the
    committed GPU measurement), or None when there is none."""
    once = [v for v in verdicts if v.dataset is None]
    if not once:
        return None
    return "- Judged once, across datasets: " + "; ".join(
        f"{_named(v)}: {v.outcome.value}" for v in once) + "."


def findings_lines(name: str, df, verdicts, scale_text: str, timing=None) -> list[str]:
    """claims.md's opening paragraph for dataset ``name`` (Markdown lines); the seconds are
    the ones measured alone (``timing``, :func:`~same.report.timing.retime`)."""
    df = test_traces(df)
    if timing is not None:
        df = retime(df, timing, labels=timed_labels(df))
    out = [f"### {name} ({scale_text})", ""]
    for config in configurations(df):
        frame = configuration_frame(df, config)
        out.append(f"**{CONFIGURATIONS[config]}.**")
        out.append("")
        for metric in (m for m in METRICS if m in frame.columns):
            out.append(f"- Held-out quality under {METRICS_SHORT[metric]} (final ll, "
                       f"nats/token): {_ranking(frame, metric)}.")
        primary = PRIMARY_METRIC if PRIMARY_METRIC in frame.columns else "ll"
        out.append(f"- SAME against each method under {METRICS_SHORT[primary]}: "
                   f"{_same_against(frame, primary)}.")
        out.append("- Training seconds to each rung of the time-to-quality ladder (document "
                   "completion, mean over seeds, measured with the machine alone: in brackets "
                   "the range over the timing rounds; the same ladder as time_to_quality.md):")
        out += _fastest(frame, timing)
        effect = order_effects(frame, primary) if config == "published" else None
        if effect:
            out.append(f"- {effect}.")
        out.append(f"- Paper claims under {METRICS_SHORT[primary]}: "
                   f"{_claims_held(verdicts, name, config, primary)}.")
        out.append("")
    return out
