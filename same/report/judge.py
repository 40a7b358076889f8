"""Judging a dataset: every claim of :mod:`same.report.claims` under each held-out metric and,
for the claims comparing SAME with VB, against each VB implementation; and the two VB
implementations side by side."""

from __future__ import annotations

from dataclasses import replace

from same.experiments.tuning import CONFIGURATIONS

from .claims import CLAIM_FUNCTIONS
from .measures import mean_range
from .stats import welch
from .traces import configuration_frame, configurations, final_lls, test_traces
from .verdicts import FREE_CHOICES, LL_CLAIMS, METRICS, VB_CLAIMS, VB_IMPLEMENTATIONS, Verdict

__all__ = ["judge_dataset", "vb_comparison"]


def judge_dataset(name: str, df, info: dict) -> list[Verdict]:
    """Verdicts C1–C8 for one dataset, in each configuration the traces hold (as published,
    and tuned: :func:`~same.report.traces.configuration_frame`; runs scored on validation
    documents are never read): the ll claims (:data:`LL_CLAIMS`) once per held-out metric of
    :data:`METRICS` (the claim functions read column ``ll``, so the other metric is judged on
    a copy whose ``ll`` is that metric), the timing claims once per configuration."""
    out = []
    df = test_traces(df)
    for configuration in configurations(df):
        frame = configuration_frame(df, configuration)
        # the prior-scale variant ran at the published settings only
        cinfo = info if configuration == "published" else {**info, "prior_scale_runs": {}}
        for v in _judge(name, frame, cinfo):
            if v.claim not in ONCE:
                out.append(replace(v, configuration=configuration))
            elif configuration == "published":
                out.append(v)
    return out


#: Claims judged once, on the runs as published: C6 reads the m sweep's seconds per pass,
#: timed with the machine alone only as published (the tuned twins feed C7's lls).
ONCE = ("C6",)


def _judge(name: str, df, info: dict) -> list[Verdict]:
    """Every claim of :data:`CLAIM_FUNCTIONS` on one configuration's traces, each re-judged
    under its rule's free choices (:func:`robust`)."""
    out = []
    for claim, f in CLAIM_FUNCTIONS.items():
        if claim not in LL_CLAIMS:
            out.append(robust(f, df, info, name))
            continue
        for metric in (m for m in METRICS if m in df.columns):
            d = df if metric == "ll" else df.assign(ll=df[metric])
            for vb, frame in _vb_frames(d, claim):
                out.append(replace(robust(f, frame, info, name), metric=metric, vb=vb))
    return out


def robust(f, df, info: dict, name: str) -> Verdict:
    """``f``'s verdict, marked fragile where another value of one of its rule's free choices
    (:data:`~same.report.verdicts.FREE_CHOICES`: ε, the reference checkpoint), the others
    at the rule's own, gives another outcome; the values where it flips are listed."""
    v = f(df, info, name)
    flips = []
    for choice, values in FREE_CHOICES.get(v.claim, {}).items():
        for value in values:
            w = f(df, {**info, choice: value}, name)
            if w.outcome is not v.outcome:
                flips.append(f"{_CHOICE_NAMES.get(choice, choice)} = {value}: "
                             f"{w.outcome.value}")
    return replace(v, fragile=tuple(flips))


#: How claims.md names a free choice.
_CHOICE_NAMES = {"eps": "ε", "reference": "reference checkpoint"}


def _vb_frames(df, claim):
    """(implementation, traces) to judge ``claim`` on: for :data:`VB_CLAIMS` each VB
    implementation whose runs are in ``df``, its labels renamed to gensim's; else (None, df)."""
    if claim not in VB_CLAIMS:
        return [(None, df)]
    gensim = VB_IMPLEMENTATIONS["gensim"]
    out = []
    for vb, labels in VB_IMPLEMENTATIONS.items():
        if not set(labels) <= set(df["label"]):
            continue
        others = [lab for impl in VB_IMPLEMENTATIONS.values() for lab in impl if impl != labels]
        d = df[~df["label"].isin(others)]
        out.append((vb, d.replace({"label": dict(zip(labels, gensim))})))
    return out or [(None, df)]


def vb_comparison(df, tuned: dict | None = None) -> list[str]:
    """gensim's and scikit-learn's VB side by side (final ll under document completion, over
    seeds): batch VB has no step size, so at the suite's shared α, β, K the two must not
    differ significantly (:func:`~same.report.stats.welch`), and a significant difference is
    reported as a disagreement; online VB runs at each library's own κ, τ0 as published, and
    at each one's choice on validation documents when tuned (``tuned``: method → chosen
    settings, from ``tuning.json``), its difference reported with them (at equal settings it
    must agree within the noise, like batch VB)."""
    df = test_traces(df)
    steps = _online_steps(tuned)
    lines = []
    for mode in ("batch", "online"):
        gensim, sklearn = (labels[mode == "batch"] for labels in VB_IMPLEMENTATIONS.values())
        for config in (("published",) if mode == "batch" else configurations(df)):
            d = configuration_frame(df, config)
            if not {gensim, sklearn} <= set(d["label"]) or config not in steps:
                continue
            a, b = final_lls(d, gensim), final_lls(d, sklearn)
            test = welch(b, a)
            what = _agreement(test.significant, None if mode == "batch" else steps[config])
            head = f"VB {mode}" + ("" if mode == "batch" else f", {CONFIGURATIONS[config]}")
            lines.append(f"{head}: {mean_range('gensim', a)}, {mean_range('scikit-learn', b)}; "
                         f"difference {test.text()} nats/token: {what}")
    return lines


def _online_steps(tuned: dict | None) -> dict:
    """Configuration → ((gensim κ, τ0), (scikit-learn κ, τ0)) of online VB: each library's
    defaults as published, its choice (``tuned``, from tuning.json) when tuned."""
    from baselines.sklearn_vb import SKLEARN_DECAY, SKLEARN_OFFSET
    from baselines.vb import VB_DECAY, VB_OFFSET

    steps = {"published": ((VB_DECAY, VB_OFFSET), (SKLEARN_DECAY, SKLEARN_OFFSET))}
    if tuned and {"vb_online", "sklearn_online"} <= set(tuned):
        g, k = tuned["vb_online"], tuned["sklearn_online"]
        steps["tuned"] = ((g.get("decay", VB_DECAY), g.get("offset", VB_OFFSET)),
                          (k.get("learning_decay", SKLEARN_DECAY),
                           k.get("learning_offset", SKLEARN_OFFSET)))
    return steps


def _agreement(significant: bool, steps) -> str:
    """What a difference between the libraries means: batch VB (``steps`` None) and online VB
    at equal κ, τ0 must not differ significantly (Welch); at unequal ones it is reported with
    them."""
    import inspect

    from baselines.sklearn_vb import iter_sklearn
    from baselines.vb import iter_vb

    if steps is not None and steps[0] != steps[1]:
        (gk, gt), (sk, st) = steps
        return (f"not at equal settings: gensim κ = {gk:g}, τ0 = {gt:g}; scikit-learn "
                f"κ = {sk:g}, τ0 = {st:g}")
    what = ("they do not differ significantly" if not significant else
            "they DISAGREE significantly at equal settings")
    if steps is not None:
        return what + f" (both at κ = {steps[0][0]:g}, τ0 = {steps[0][1]:g})"
    caps = (inspect.signature(iter_vb).parameters["iterations"].default,
            inspect.signature(iter_sklearn).parameters["max_doc_update_iter"].default)
    return what + (f" (shared α, β, K and no step size; each library's E-step cap: gensim "
                   f"{caps[0]}, scikit-learn {caps[1]} iterations per document)")
