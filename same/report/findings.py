"""The finding, said plainly: claims.md's opening paragraph per dataset, generated from the
verdicts and the traces (who is best under each held-out estimator, who is fastest to the
ladder's rung, where SAME stands against CGS and each VB, which claims hold)."""

from __future__ import annotations

import numpy as np

from same.experiments.tuning import CONFIGURATIONS

from .paper import METHOD_NAMES
from .stats import interval_text, ladder, seconds_to, welch
from .traces import configuration_frame, configurations, final_lls, test_traces
from .verdicts import METRICS, METRICS_SHORT, PRIMARY_METRIC, Outcome

__all__ = ["findings_lines"]


def _ranking(df, metric: str) -> str:
    """"best X (mean ± t), then Y (−d, Welch p), ..." under ``metric``."""
    d = df if metric == "ll" else df.assign(ll=df[metric])
    finals = {lab: final_lls(d, lab) for lab in METHOD_NAMES if lab in set(d["label"])}
    order = sorted(finals, key=lambda lab: -finals[lab].mean())
    best = order[0]
    head = f"best {interval_text(finals[best], name=METHOD_NAMES[best])}"
    rest = [f"{METHOD_NAMES[lab]} {welch(finals[lab], finals[best]).text()}" for lab in order[1:]]
    return head + ("; then, as differences from it: " + "; ".join(rest) if rest else "")


def _fastest(df) -> list[str]:
    """Per rung of the ladder (:func:`~same.report.stats.ladder`): the methods that reach it
    in every seed, fastest first (mean training seconds), and those that do not."""
    labels = [lab for lab in METHOD_NAMES if lab in set(df["label"])]
    out = []
    for rung, name in sorted(ladder(df, labels).items(), reverse=True):
        reach = {lab: seconds_to(df, lab, rung) for lab in labels}
        got = sorted((s.mean(), lab) for lab, s in reach.items() if np.isfinite(s).all())
        never = [METHOD_NAMES[lab] for lab, s in reach.items() if not np.isfinite(s).all()]
        out.append(f"  - {rung:.4f} ({name}): "
                   + (", ".join(f"{METHOD_NAMES[lab]} {t:.1f} s" for t, lab in got)
                      or "no method in every seed")
                   + (f"; not in every seed: {', '.join(never)}" if never else ""))
    return out


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
        key = v.claim + (f" vs {v.vb}" if v.vb else "") + (" (fragile)" if v.fragile else "")
        by.setdefault(v.outcome, []).append(key)
    return "; ".join(f"{o.value}: {', '.join(sorted(by[o]))}" for o in Outcome if o in by)


def findings_lines(name: str, df, verdicts, scale_text: str) -> list[str]:
    """claims.md's opening paragraph for dataset ``name`` (Markdown lines)."""
    df = test_traces(df)
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
                   "completion, mean over seeds; the same ladder as time_to_quality.md):")
        out += _fastest(frame)
        out.append(f"- Paper claims under {METRICS_SHORT[primary]}: "
                   f"{_claims_held(verdicts, name, config, primary)}.")
        out.append("")
    return out
