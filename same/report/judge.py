"""Judging a dataset: every claim of :mod:`same.report.claims` under each held-out metric and,
for the claims comparing SAME with VB, against each VB implementation; and the two VB
implementations side by side."""

from __future__ import annotations

from dataclasses import replace

from same.experiments.tuning import CONFIGURATIONS

from .claims import CLAIM_FUNCTIONS
from .stats import FRAGILE_P, interval_text, memoized_runs, welch
from .timing import retime, timed_labels
from .traces import (
    configuration_frame,
    configurations,
    final_lls,
    order_frame,
    test_traces,
    twinned_labels,
)
from .verdicts import (
    FREE_CHOICES,
    LL_CLAIMS,
    METRICS,
    ORDER_CLAIMS,
    VB_CLAIMS,
    VB_IMPLEMENTATIONS,
    Outcome,
    Verdict,
)

__all__ = ["judge_dataset", "vb_comparison", "robust", "ORDER_VARIANT", "gpu_judged_once"]


def judge_dataset(name: str, df, info: dict) -> list[Verdict]:
    """Verdicts C1–C8 for one dataset, in each configuration the traces hold (as published,
    and tuned: :func:`~same.report.traces.configuration_frame`; runs scored on validation
    documents are never read): the ll claims (:data:`LL_CLAIMS`) once per held-out metric of
    :data:`METRICS` (the claim functions read column ``ll``, so the other metric is judged on
    a copy whose ``ll`` is that metric), the timing claims once per configuration.

    With ``info["timing"]`` (a loaded timing.json) the main comparison's seconds are the ones
    measured alone (:func:`~same.report.timing.retime`); without one, the traces' own seconds
    are read only where their runs held the machine by their meta.json, and refused elsewhere
    (:func:`~same.report.timing.seconds_problem`).  Runs in the other document
    order (``*_other_order``, as published) re-judge the main comparison's claims
    (:data:`ORDER_CLAIMS`): a verdict that moves with the order is fragile."""
    out = []
    df = test_traces(df)
    if info.get("timing") is not None:
        df = retime(df, info["timing"], labels=timed_labels(df))
    twins = twinned_labels(df)
    for configuration in configurations(df):
        frame = configuration_frame(df, configuration)
        # the prior-scale variant ran at the published settings only
        cinfo = info if configuration == "published" else {**info, "prior_scale_runs": {}}
        other = order_frame(frame) if configuration == "published" else None
        skip = () if configuration == "published" else untuned_claims(info, twins)
        with memoized_runs():  # each frame split into runs once for every re-judging
            verdicts = _judge(name, frame, cinfo, other)
        for v in verdicts:
            if v.claim in skip:
                continue
            if v.claim not in ONCE:
                out.append(replace(v, configuration=configuration))
            elif configuration == "published":
                out.append(v)
    return out


def gpu_judged_once(verdicts: list[Verdict]) -> list[Verdict]:
    """``verdicts`` with every C6 verdict read from the committed GPU measurement
    (:attr:`Verdict.gpu_device`) merged into one across datasets (``dataset`` None), in
    place of the first: one measurement judged once, not once per corpus, so that neither
    the overview nor "Across corpora" counts it as agreement between corpora.  Each
    dataset's own m sweep, said beside and not judged (the last line of its verdict,
    :func:`~same.report.claims.claim_c6`), keeps its line, prefixed with the dataset."""
    gpu = [v for v in verdicts if v.claim == "C6" and v.gpu_device is not None]
    if not gpu:
        return verdicts
    first = gpu[0]
    merged = replace(first, dataset=None, ours=(
        *first.ours[:-1], *(f"{v.dataset}: {v.ours[-1]}" for v in gpu)),
        numbers={**first.numbers, "datasets": [v.dataset for v in gpu],
                 "cpu_sweep": {v.dataset: v.numbers.get("cpu_sweep", {}) for v in gpu}})
    at = verdicts.index(first)
    return [merged if i == at else v for i, v in enumerate(verdicts)
            if i == at or not any(v is g for g in gpu)]


def untuned_claims(info: dict, twins) -> tuple[str, ...]:
    """The claims that have no tuned verdict: those whose variant runs (C7: the m sweep's, C8:
    the schedules') have no tuned twins among ``twins`` (a profile may run them as published
    only). Judging them "tuned" would read the published runs again, or mix a tuned constant
    m with published schedules."""
    out = []
    if not any(lab in twins for lab in (info.get("m_runs") or {}).values()):
        out.append("C7")
    schedules = list((info.get("schedule_runs") or {}).values())
    if not schedules or not all(lab in twins for lab in schedules):
        out.append("C8")
    return tuple(out)


#: Claims judged once, on the runs as published: C6 reads the m sweep's seconds per pass,
#: timed with the machine alone only as published (the tuned twins feed C7's lls).
ONCE = ("C6",)


def _judge(name: str, df, info: dict, other=None) -> list[Verdict]:
    """Every claim of :data:`CLAIM_FUNCTIONS` on one configuration's traces, each re-judged
    under its rule's free choices and, for :data:`ORDER_CLAIMS`, in the other document order
    (``other``: the traces with the online methods' other-order runs in place; :func:`robust`)."""
    out = []
    for claim, f in CLAIM_FUNCTIONS.items():
        if claim not in LL_CLAIMS:
            out.append(robust(f, df, info, name))
            continue
        for metric in (m for m in METRICS if m in df.columns):
            d, o = ((x if x is None or metric == "ll" else x.assign(ll=x[metric]))
                    for x in (df, other))
            for vb, labels in _vb_labels(d, claim):
                variants = {ORDER_VARIANT: o} if o is not None and claim in ORDER_CLAIMS else {}
                v = robust(f, d, {**info, "labels": labels}, name, variants)
                out.append(replace(v, metric=metric, vb=vb))
    return out


#: How a fragile verdict names the other document order.
ORDER_VARIANT = "in the other document order"


def robust(f, df, info: dict, name: str, variants: dict | None = None) -> Verdict:
    """``f``'s verdict, marked fragile where another value of one of its rule's free choices
    (:data:`~same.report.verdicts.FREE_CHOICES`: ε, the reference checkpoint, the level α of
    its tests, the checkpoint read as final, C6's GPU seconds read on the host's clock), the
    others at the rule's own, gives another
    outcome, or where one of ``variants`` (name → other traces, e.g. the other document
    order) does; each flip is listed with the value, its outcome and, for α, the deciding
    p-values between the levels."""
    v = f(df, info, name)
    undefined = [k for k, p in (v.numbers.get("p") or {}).items() if p != p]
    if undefined and v.outcome not in (Outcome.NOT_TESTABLE, Outcome.NOT_RUN):  # one seed a side
        n = df.groupby("label")["seed"].nunique().min() if not df.empty else 0
        return replace(v, outcome=Outcome.NOT_TESTABLE,
                       ours=(f"not judged: {n} seed(s) per run, and its Welch test needs at "
                             f"least 2 per side ({', '.join(undefined)}: p undefined)", *v.ours))
    flips = []
    for choice, values in FREE_CHOICES.get(v.claim, {}).items():
        for value in values:
            w = f(df, {**info, choice: value}, name)
            if w.outcome is not v.outcome:
                flips.append(_flip(choice, value, w.outcome, v))
    for what, other in (variants or {}).items():
        w = f(other, info, name)
        if w.outcome is not v.outcome:
            flips.append(f"{what}: {w.outcome.value}")
    return replace(v, fragile=tuple(flips))


def _flip(choice: str, value, outcome, v: Verdict) -> str:
    """"ε = 0.005: partly", "α = 0.1: reproduced (deciding p: SAME − VB batch 0.061)",
    "read at the third-last checkpoint: partly"."""
    if choice == "gpu_seconds":
        return (f"read from the GPU measurement's {value} seconds per pass (the rule reads its "
                f"device seconds): {outcome.value}")
    if choice == "bound":
        return (f"each mean it compares with a threshold read at its 95% t bound {value} the "
                f"claim: {outcome.value}")
    if choice == "checkpoint":
        return f"read at the third-last checkpoint: {outcome.value}" if value == -3 else \
            f"read at checkpoint {value}: {outcome.value}"
    text = f"{_CHOICE_NAMES.get(choice, choice)} = {value:g}" if isinstance(value, float) \
        else f"{_CHOICE_NAMES.get(choice, choice)} = {value}"
    if choice == "alpha":
        lo, hi = FRAGILE_P
        near = [f"{k} {p:.2g}" for k, p in (v.numbers.get("p") or {}).items()
                if p == p and lo <= p < hi]
        if near:
            return f"{text}: {outcome.value} (deciding p: {'; '.join(near)})"
    return f"{text}: {outcome.value}"


#: How claims.md names a free choice.
_CHOICE_NAMES = {"eps": "ε", "reference": "reference checkpoint", "alpha": "α"}


def _vb_labels(df, claim):
    """(implementation, {role: label}) to judge ``claim`` with: for :data:`VB_CLAIMS` each VB
    implementation whose runs are in ``df`` (the claim reads its labels, so every text names
    it); else (None, {})."""
    if claim not in VB_CLAIMS:
        return [(None, {})]
    out = [(vb, {"vb_online": on, "vb_batch": bat})
           for vb, (on, bat) in VB_IMPLEMENTATIONS.items() if {on, bat} <= set(df["label"])]
    return out or [(None, {})]


def vb_comparison(df, tuned: dict | None = None) -> list[str]:
    """gensim's and scikit-learn's VB side by side (final ll under document completion, over
    seeds, each mean with its Student-t interval, :func:`~same.report.stats.interval_text`, as
    everywhere in claims.md): batch VB has no step size, so at the suite's shared α, β, K the
    two differ only in their E-steps (each library's own cap on its iterations, named), and a
    significant difference (:func:`~same.report.stats.welch`) is reported as a disagreement;
    online VB runs at each library's own κ, τ0 as published, and at each one's choice on
    validation documents when tuned (``tuned``: method → chosen settings, from
    ``tuning.json``), its difference reported with them (at equal κ, τ0 it should agree
    within the noise, like batch VB)."""
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
            lines.append(f"{head}: {interval_text(a, name='gensim')}, "
                         f"{interval_text(b, name='scikit-learn')}; "
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
    at equal κ, τ0 should not differ significantly (Welch), though each library's E-step runs
    to its own cap (named: the settings are equal but for it); at unequal κ, τ0 it is reported
    with them."""
    import inspect

    from baselines.sklearn_vb import iter_sklearn
    from baselines.vb import iter_vb

    if steps is not None and steps[0] != steps[1]:
        (gk, gt), (sk, st) = steps
        return (f"not at equal settings: gensim κ = {gk:g}, τ0 = {gt:g}; scikit-learn "
                f"κ = {sk:g}, τ0 = {st:g}")
    what = ("they do not differ significantly" if not significant else
            "they DISAGREE significantly")
    caps = (inspect.signature(iter_vb).parameters["iterations"].default,
            inspect.signature(iter_sklearn).parameters["max_doc_update_iter"].default)
    cap = (f"each library's E-step cap: gensim {caps[0]}, scikit-learn {caps[1]} iterations "
           "per document")
    if steps is not None:
        return what + f" (both at κ = {steps[0][0]:g}, τ0 = {steps[0][1]:g}; {cap})"
    return what + f" (shared α, β, K and no step size; {cap})"
