"""One function per paper claim (:data:`same.report.paper.CLAIMS`), each returning a :class:`Verdict`.

Every function reads one dataset's traces (a DataFrame from
:func:`same.report.traces.load_traces`) and the run labels of the variants it
needs (``info``), and judges them by the claim's rule in
:data:`~same.report.verdicts.RULES`, whose thresholds it reads from there; nothing here
writes files: :mod:`same.report.render` turns verdicts into Markdown.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .gpu import GPU_DIR, MEASUREMENT_GLOB, SAMPLER
from .measures import fmt, sampler_text, variant_lls
from .paper import CONVERGED_EPS, METHOD_NAMES
from .stats import (
    ALPHA,
    CGS_REFERENCE_ITERATION,
    CONFIDENCE,
    cgs_reference,
    converge_to,
    converged,
    convergence,
    interval_text,
    runs_of,
    seconds_to,
    t_interval,
    welch,
)
from .tables import table2_rows
from .timing import over_rounds, per_pass_alone, refusal_text, seconds_problem
from .traces import (
    final_ll,
    final_lls,
    first_seed,
    implementation,
    per_pass_over_seeds,
)
from .verdicts import RULES, Outcome, Verdict, grade

__all__ = ["Verdict", "Outcome", "RULES", "CLAIM_FUNCTIONS"]


def _v(claim, dataset, outcome, ours, numbers=None, **qualifiers) -> Verdict:
    ours = (ours,) if isinstance(ours, str) else tuple(ours)
    return Verdict(claim, dataset, outcome, ours, numbers or {}, **qualifiers)


def _eps(info) -> float:
    """The convergence tolerance ε a claim is judged with (varied by the robustness check)."""
    return float(info.get("eps", CONVERGED_EPS))


def _bounded(x, info, favours_high: bool) -> float:
    """The mean over seeds of ``x`` as a threshold comparison reads it: the mean, or with
    ``info["bound"]`` (the robustness check's free choice) the end of its 95 % t interval
    that works "against" or "for" the claim's part (``favours_high``: a higher value
    works for it)."""
    mean, low, high = t_interval(x)
    bound = info.get("bound")
    if bound is None or low != low:
        return mean
    return high if (bound == "for") == favours_high else low


def _alpha(info) -> float:
    """The level every Welch test of a claim is read at (the fragility check re-reads it at
    each level of :data:`~same.report.stats.FRAGILE_P`)."""
    return float(info.get("alpha", ALPHA))


def _at(info) -> int:
    """The checkpoint, from the end, a claim reads as a run's final ll (-1: the last; the
    fragility check re-reads the third-last)."""
    return int(info.get("checkpoint", -1))


def _lab(info, role: str) -> str:
    """The run label playing ``role`` ("vb_online", "vb_batch"): gensim's unless the judge
    gives another implementation's (``info["labels"]``), so that every text names it."""
    return (info.get("labels") or {}).get(role, role)


def _when(info) -> str:
    """How a claim's text names the checkpoint it reads."""
    at = _at(info)
    return "final ll" if at == -1 else f"ll at the {_ORDINAL.get(-at, f'{-at}th')}-last checkpoint"


_ORDINAL = {2: "second", 3: "third"}


def _budget_text(df, labels) -> str:
    """"10 passes each (the main runs': 20)": the budget the variant runs ``labels`` (the m
    sweep's, the schedules') ran, from their traces, beside SAME's main run's where it
    differs, so a reader does not compare their final ll with the main run's."""
    passes = {int(df.loc[df["label"] == lab, "pass"].max()) for lab in labels
              if (df["label"] == lab).any()}
    main = df.loc[df["label"] == "same", "pass"]
    text = " or ".join(f"{p:g}" for p in sorted(passes)) + " passes each"
    if not main.empty and passes and passes != {int(main.max())}:
        text += f" (the main runs': {int(main.max())})"
    return text


def _not_run(claim, dataset, what: str) -> Verdict:
    """The verdict of a claim whose runs the profile switches off (``what``: which, and the
    config key that does)."""
    return _v(claim, dataset, Outcome.NOT_RUN, f"ours: not run in this profile: {what}")


def _name(label: str) -> str:
    return METHOD_NAMES.get(label, label)


def _declines(df, labels, eps) -> list[str]:
    """"X peaks at pass p (ll) and ends d lower" for every label a seed of which ends more
    than ``eps`` below its own peak: the decline is reported, never read as convergence."""
    out = []
    for lab in labels:
        conv = converged(df, lab, eps)
        fell = [c for c in conv if c.decline > eps]
        if fell:
            worst = max(fell, key=lambda c: c.decline)
            out.append(f"{_name(lab)} peaks and declines in {len(fell)} of "
                       f"{len(conv)} seeds (worst: {worst.peak:.4f} at pass "
                       f"{worst.peak_pass:g}, {worst.decline:.4f} lower at pass "
                       f"{worst.budget_passes:g})")
    return out


def claim_c1(df, info, dataset=None) -> Verdict:
    """SAME's final ll against online and batch VB's: Welch tests over seeds."""
    a, at = _alpha(info), _at(info)
    on_l, bat_l = _lab(info, "vb_online"), _lab(info, "vb_batch")
    same, on, bat = (final_lls(df, k, at) for k in ("same", on_l, bat_l))
    c_on, c_bat = welch(same, on, a), welch(same, bat, a)
    if c_on.higher and c_bat.higher:
        outcome = Outcome.REPRODUCED
    elif c_on.higher or c_bat.higher:
        outcome = Outcome.PARTLY
    else:
        outcome = Outcome.NOT_REPRODUCED
    ours = [f"ours ({_when(info)}, nats/token, mean ± {CONFIDENCE:.0%} t interval over seeds): "
            f"{interval_text(same, name='SAME')}; {interval_text(on, name=_name(on_l))}; "
            f"{interval_text(bat, name=_name(bat_l))}",
            f"SAME − {_name(on_l)} {c_on.text()}; SAME − {_name(bat_l)} {c_bat.text()}"]
    for variant, label in info.get("prior_scale_runs", {}).items():
        d = df[df["label"] == label]
        if not d.empty:
            run = first_seed(d)
            ours.append(f"SAME with {variant} (seed {int(run['seed'].iloc[0])}): final ll "
                        f"{fmt(final_ll(run))}")
    return _v("C1", dataset, outcome, ours,
              {"same": same.tolist(), "vb_online": on.tolist(), "vb_batch": bat.tolist(),
               "p_vb_online": c_on.p, "p_vb_batch": c_bat.p,
               "p": {f"SAME − {_name(on_l)}": c_on.p, f"SAME − {_name(bat_l)}": c_bat.p}})


def claim_c2(df, info, dataset=None) -> Verdict:
    """Passes each method needs to converge by its own rule
    (:func:`~same.report.stats.convergence`: within ε of its own final ll for the rest of its
    budget), over seeds, compared by Welch tests: batch VB must need significantly more
    passes than SAME and than online VB; no common target, so no method sets another's."""
    rule, eps, a = RULES["C2"], _eps(info), _alpha(info)
    labels = ("same", _lab(info, "vb_online"), _lab(info, "vb_batch"))
    per = {k: np.array([c.passes for c in converged(df, k, eps)]) for k in labels}
    s, o, b = (per[k] for k in labels)
    cs, co, cb = (float(x.mean()) for x in (s, o, b))
    # the threshold parts: few passes for SAME and VB online, many for VB batch
    fast = max(_bounded(s, info, False), _bounded(o, info, False))
    vs_same, vs_online = welch(b, s, a), welch(b, o, a)
    order = vs_same.higher and vs_online.higher
    if (fast <= rule["max_passes"] and order
            and _bounded(b, info, True) >= rule["batch_factor"] * fast):
        outcome = Outcome.REPRODUCED
    else:
        outcome = Outcome.PARTLY if order else Outcome.NOT_REPRODUCED
    ours = [f"ours (passes until each run stays within ε = {eps:g} of its own final ll, mean ± "
            f"{CONFIDENCE:.0%} t interval over seeds): "
            + "; ".join(interval_text(per[k], 1, _name(k)) for k in labels),
            f"{_name(labels[2])} − SAME {vs_same.text(1)} passes; {_name(labels[2])} − "
            f"{_name(labels[1])} {vs_online.text(1)} passes"]
    ours += _declines(df, labels, eps)
    return _v("C2", dataset, outcome, ours,
              {"eps": eps, "same": cs, "vb_online": co, "vb_batch": cb,
               "p": {f"{_name(labels[2])} − SAME (passes)": vs_same.p,
                     f"{_name(labels[2])} − {_name(labels[1])} (passes)": vs_online.p}})


def _reference_convergence(run, eps: float, reference: str) -> float:
    """Where a run converged: by :func:`~same.report.stats.convergence` (``reference``
    "final": within ε of its final ll for the rest of its budget) or at its first checkpoint
    within ε of its best checkpoint (``reference`` "best")."""
    if reference == "final":
        return convergence(run, eps).passes
    r = run.sort_values("pass")
    return float(r[r["ll"] >= r["ll"].max() - eps]["pass"].iloc[0])


def claim_c3(df, info, dataset=None) -> Verdict:
    """Per sample per word, over seeds: CGS ahead early, SAME higher at the end (Welch
    tests); CGS slow to converge (mean over seeds of where each run converged)."""
    f1c = info["fig1c"]
    eps, reference, a, at = _eps(info), info.get("reference", "final"), _alpha(info), _at(info)
    sames, cgss = runs_of(df, f1c["same"]), runs_of(df, f1c["cgs"])
    x0 = float(sames[0].sort_values("pass")["samples_per_word"].iloc[0])
    end_x = float(sames[0].sort_values("pass")["samples_per_word"].iloc[max(at, -len(sames[0]))])

    def at_x(run, x):
        r = run.sort_values("iteration")
        return float(np.interp(x, r["iteration"], r["ll"]))

    early_same = np.array([float(r.sort_values("pass")["ll"].iloc[0]) for r in sames])
    end_same = final_lls(df, f1c["same"], at)
    early_cgs, end_cgs = (np.array([at_x(r, x) for r in cgss]) for x in (x0, end_x))
    conv = np.array([_reference_convergence(r, eps, reference) for r in cgss])
    lead, ahead = welch(early_cgs, early_same, a), welch(end_same, end_cgs, a)
    outcome = grade([lead.higher, ahead.higher,
                     _bounded(conv, info, True) >= RULES["C3"]["cgs_iterations"]])
    ref_text = ("stays within {e} of its final ll" if reference == "final" else
                "first comes within {e} of its best checkpoint").format(e=f"{eps:g}")
    budget = int(cgss[0]["iteration"].max())
    return _v("C3", dataset, outcome,
              [f"ours ({len(sames)} SAME and {len(cgss)} CGS seeds): at {x0:g} samples/word "
               f"{interval_text(early_cgs, name='CGS')} vs {interval_text(early_same, name='SAME')}"
               f", CGS − SAME {lead.text()}",
               f"at {end_x:g} samples/word ({_when(info)} of SAME) "
               f"{interval_text(end_cgs, name='CGS')} vs {interval_text(end_same, name='SAME')}, "
               f"SAME − CGS {ahead.text()}",
               f"CGS {ref_text} from iteration {interval_text(conv, 0)} of {budget}"],
              {"early": (early_cgs.tolist(), early_same.tolist()),
               "end": (end_cgs.tolist(), end_same.tolist()), "cgs_converged": conv.tolist(),
               "eps": eps, "reference": reference,
               "p": {"CGS − SAME early": lead.p, "SAME − CGS at the end": ahead.p}})


def _plateau_seconds(df, label, eps) -> np.ndarray:
    """Per seed: the (alone) seconds at which the run converged by its own plateau rule."""
    return np.array([c.seconds for c in converged(df, label, eps)])


def _not_judged(claim, dataset, reasons, ours=(), **qualifiers) -> Verdict:
    """A timing claim whose seconds cannot be read (:mod:`same.report.timing`)."""
    return _v(claim, dataset, Outcome.NOT_TESTABLE,
              [f"not judged: {refusal_text(reasons)}", *ours], {"refused": list(reasons)},
              **qualifiers)


def _reach(df, label, target) -> tuple[np.ndarray, np.ndarray]:
    """Per seed of ``label``: (alone) seconds to converge in the paper's sense, a seed that
    never reaches ``target`` at its whole budget's (a lower bound), and which seeds reach it
    (:func:`~same.report.stats.converge_to`)."""
    return converge_to(df, label, target)


def _gap_text(df, label, target) -> str:
    """"not within its budget in k of n seeds (mean final ll f, d from it)"."""
    fin = final_lls(df, label)
    missed = int((~_reach(df, label, target)[1]).sum())
    return (f"not within its budget in {missed} of {len(fin)} seeds (mean final ll "
            f"{fin.mean():.4f}, {fin.mean() - target:+.4f} from it)")


def _round_spread(df, info, label, target, first_reach: bool = False) -> str:
    """"x s (rounds a–b s)": mean over seeds of the seconds to converge (:func:`_reach`; with
    ``first_reach``, to first reach ``target``, every seed reaching it), median over the alone
    measurement's rounds, with their range; "≥ x s" with the seeds not within their budget
    when some are (their budget's seconds: a lower bound)."""
    reach = (lambda d: (seconds_to(d, label, target), None)) if first_reach else \
        (lambda d: _reach(d, label, target))
    stat = over_rounds(lambda d: float(np.mean(reach(d)[0])), df[df["label"] == label],
                       info.get("timing"))
    missed = 0 if first_reach else int((~_reach(df, label, target)[1]).sum())
    bound = "≥ " if missed else ""
    if not np.isfinite(stat["median"]):
        text = f"{bound}{float(np.mean(reach(df)[0])):.2f} s"
    else:
        text = (f"{bound}{stat['median']:.2f} s (over {stat['rounds']} rounds of the alone "
                f"measurement {stat['min']:.2f}–{stat['max']:.2f} s)")
    return text + (f", {_gap_text(df, label, target)}: their budget's seconds counted"
                   if missed else "")


def _converge_target(df, info):
    """(target, text) of the paper's convergence: the mean over CGS seeds of their held-out
    ll after :data:`~same.report.stats.CGS_REFERENCE_ITERATION` iterations; (None, why)."""
    ref = cgs_reference(df)
    if ref is None:
        budget = int(df.loc[df["label"] == "cgs", "iteration"].max()) \
            if (df["label"] == "cgs").any() else 0
        return None, (f"the paper's convergence needs CGS's ll after "
                      f"{CGS_REFERENCE_ITERATION} iterations; CGS ran {budget}")
    return float(ref.mean()), (f"CGS@{CGS_REFERENCE_ITERATION} = {interval_text(ref)} "
                               f"nats/token")


def _per_pass_text(df, info, label) -> str:
    """Seconds per pass alone (median over rounds, range), else from runs that held the
    machine."""
    alone = per_pass_alone(df, info.get("timing"), label)
    if alone is not None:
        return (f"{alone['median']:.3g} s (median of the timing rounds; range "
                f"{alone['min']:.3g}–{alone['max']:.3g})")
    return f"{_per_pass(df, label):.3g} s"


def claim_c4(df, info, dataset=None) -> Verdict:
    """SAME's seconds to converge in the paper's sense (to CGS@1000's held-out ll; seconds
    measured alone) against online VB's: reproduced when SAME reaches it in every seed and 3×
    online VB's seconds (a seed not within its budget: its budget's, a lower bound) are
    significantly above SAME's (Welch over seeds)."""
    max_ratio, eps, a = RULES["C4"]["max_ratio"], _eps(info), _alpha(info)
    on_l = _lab(info, "vb_online")
    backend = df[df["label"] == "same"]["backend"].iloc[0]
    gpu = {"cpu_for_gpu_claim": backend != "cupy"}
    problems = [seconds_problem(df, lab) for lab in ("same", on_l)]
    if any(problems):  # nothing measured: no qualifier to read as the reason
        return _not_judged("C4", dataset, problems)
    target, ref_text = _converge_target(df, info)
    if target is None:
        return _v("C4", dataset, Outcome.NOT_TESTABLE, f"not testable: {ref_text}")
    (s, s_hit), (o, o_hit) = _reach(df, "same", target), _reach(df, on_l, target)
    impl = f"implementations: {_impl(df, 'same')} vs {_impl(df, on_l)}"
    per = (f"per pass alone {_per_pass_text(df, info, 'same')} vs "
           f"{_per_pass_text(df, info, on_l)} ({impl})")
    plateau = (f"by each run's own plateau instead (within ε = {eps:g} of its final ll): SAME "
               f"{_plateau_seconds(df, 'same', eps).mean():.2f} s, {_name(on_l)} "
               f"{_plateau_seconds(df, on_l, eps).mean():.2f} s")
    numbers = {"target": target, "eps": eps}
    if not s_hit.all():
        outcome, said = Outcome.NOT_REPRODUCED, f"SAME {_gap_text(df, 'same', target)}"
    else:
        test = welch(max_ratio * o, s, a)
        ratio = float(s.mean() / o.mean()) if o.mean() > 0 else float("inf")
        # online VB's budget (a lower bound where it never converged) too short to tell
        outcome = (Outcome.REPRODUCED if test.higher else
                   Outcome.NOT_REPRODUCED if o_hit.all() else Outcome.NOT_TESTABLE)
        said = (f"SAME {_round_spread(df, info, 'same', target)}, {_name(on_l)} "
                f"{_round_spread(df, info, on_l, target)}: ratio "
                f"{'' if o_hit.all() else '≤ '}{ratio:.2f}; "
                f"{max_ratio:g}× {_name(on_l)} − SAME {test.text(2)} s")
        numbers |= {"ratio": ratio, "p": {f"{max_ratio:g}× VB online − SAME (s)": test.p}}
    ours = [f"ours ({backend}, {sampler_text(df, 'same')}; seconds measured alone, mean over "
            f"seeds, to converge in the paper's sense: to {ref_text}): {said}", per, plateau]
    return _v("C4", dataset, outcome, ours, numbers, **gpu)


def _per_pass(df, label) -> float:
    """Median over seeds of each seed's seconds per pass."""
    return per_pass_over_seeds(df[df["label"] == label])["median"]


def _impl(df, label) -> str:
    return implementation(label, df[df["label"] == label])


def claim_c5(df, info, dataset=None) -> Verdict:
    """Seconds CGS and batch VB need to converge in the paper's sense (to CGS@1000's held-out
    ll; seconds measured alone) relative to SAME's, by Welch tests over seeds; and, said
    plainly, how long CGS takes to reach SAME's final quality and where it ends."""
    min_ratio, eps, a = RULES["C5"]["min_ratio"], _eps(info), _alpha(info)
    bat_l = _lab(info, "vb_batch")
    others = (("CGS", "cgs"), (_name(bat_l), bat_l))
    problems = [seconds_problem(df, lab) for lab in ("same", "cgs", bat_l)]
    if any(problems):
        return _not_judged("C5", dataset, problems)
    target, ref_text = _converge_target(df, info)
    if target is None:
        return _v("C5", dataset, Outcome.NOT_TESTABLE, f"not testable: {ref_text}")
    s, s_hit = _reach(df, "same", target)
    parts, numbers, p = [], {"target": target, "eps": eps}, {}
    if not s_hit.all():
        outcome = Outcome.NOT_REPRODUCED
        parts.append(f"SAME {_gap_text(df, 'same', target)}")
    else:
        parts.append(f"SAME {_round_spread(df, info, 'same', target)}")
        far, faster = [], []
        for name, lab in others:
            t, hit = _reach(df, lab, target)
            big, beat = welch(t, min_ratio * s, a), welch(t, s, a)
            far.append(big.higher)
            faster.append(beat.higher)
            numbers[name] = {"ratio": float(t.mean() / s.mean())}
            p[f"{name} − {min_ratio:g}× SAME (s)"] = big.p
            p[f"{name} − SAME (s)"] = beat.p
            how = (f" (its {CGS_REFERENCE_ITERATION} iterations, by the definition)"
                   if lab == "cgs" else "")
            parts.append(f"{name} {_round_spread(df, info, lab, target)}{how} "
                         f"({'' if hit.all() else '≥ '}{t.mean() / s.mean():.2f}× SAME's; "
                         f"{name} − SAME {beat.text(2)} s)")
        outcome = (Outcome.REPRODUCED if all(far) else
                   Outcome.PARTLY if any(faster) else Outcome.NOT_REPRODUCED)
    numbers["p"] = p
    same, cgs = final_lls(df, "same"), final_lls(df, "cgs")
    reach = seconds_to(df, "cgs", float(same.mean()))
    missed = int((~np.isfinite(reach)).sum())
    plain = (f"CGS reaches SAME's mean final ll ({same.mean():.4f}) in "
             f"{_round_spread(df, info, 'cgs', float(same.mean()), True)}" if not missed else
             f"CGS does not reach SAME's mean final ll ({same.mean():.4f}) in {missed} of "
             f"{len(reach)} seeds") + (f" and ends at {interval_text(cgs)} against SAME's "
                                       f"{interval_text(same)}: CGS − SAME "
                                       f"{welch(cgs, same, a).text()}")
    plateau = ("by each run's own plateau instead (within ε = " f"{eps:g} of its final ll): "
               + ", ".join(f"{n} {_plateau_seconds(df, lab, eps).mean():.2f} s"
                           for n, lab in (("SAME", "same"), *others)))
    return _v("C5", dataset, outcome,
              [f"ours ({sampler_text(df, 'same')}; seconds measured alone, mean over seeds, to "
               f"converge in the paper's sense: to {ref_text}): " + "; ".join(parts)
               + "; GPU CGS not run here", plain, plateau], numbers)


def claim_c6(df, info, dataset=None) -> Verdict:
    """Seconds per pass at the rule's three m, judged only on a GPU: from the m sweep's own runs
    when they ran on CuPy (a run that shared the machine is refused), else from the newest
    committed GPU measurement (``info["gpu"]``, a :class:`~same.report.gpu.GpuMeasurement`
    or None: :func:`_c6_from_gpu`), the CPU sweep's numbers said beside. ``info["gpu_seconds"]``
    "wall" (a free choice, :data:`~same.report.verdicts.FREE_CHOICES`) reads the measurement's
    wall-clock seconds per pass in place of its device seconds, where it has them."""
    rule = RULES["C6"]
    low, knee, high = rule["low_m"], rule["knee_m"], rule["high_m"]
    gpu = info.get("gpu")
    if (info.get("gpu_seconds") == "wall" and gpu is not None and gpu.wall_seconds_per_pass
            and all(m in gpu.wall_seconds_per_pass for m in (low, knee, high))):
        gpu = replace(gpu, seconds_per_pass=gpu.wall_seconds_per_pass)
    if not info["m_runs"]:
        off = "the m sweep is switched off (same.m_values: null)"
        if gpu is None:
            return _not_run("C6", dataset, off)
        return _c6_from_gpu(gpu, dataset, off)
    backend = df[df["label"] == "same"]["backend"].iloc[0]
    problems = [seconds_problem(df, lab) for lab in info["m_runs"].values()
                if (df["label"] == lab).any()]
    if any(problems):
        if backend != "cupy":
            return _c6_from_gpu(gpu, dataset,
                                f"the m sweep here ({backend}) not judged: "
                                f"{refusal_text(problems)}", {"refused": list(problems)})
        return _not_judged("C6", dataset, problems)
    t2 = {r["n_samples"]: r["s_per_pass"] for r in table2_rows(df, info["m_runs"])}
    if not {low, knee, high} <= set(t2):
        said = f"ours: m = {low:g}, {knee:g} and {high:g} were not all run"
        if backend != "cupy":
            return _c6_from_gpu(gpu, dataset, said)
        return _v("C6", dataset, Outcome.NOT_TESTABLE, said)
    flat, steep = t2[knee] / t2[low], t2[high] / t2[knee]
    ours = ("ours (" + backend + ", " + sampler_text(df, info["m_runs"][knee]) + "): s/pass "
            + _per_m_text(t2, low, knee, high))
    numbers = {"s_per_pass": t2, "flat_ratio": flat, "steep_ratio": steep}
    if backend != "cupy":
        return _c6_from_gpu(gpu, dataset, ours, numbers)
    return _v("C6", dataset, grade([flat <= rule["max_flat"], steep >= rule["min_steep"]]), ours,
              numbers)


def _per_m_text(per_m: dict, low, knee, high) -> str:
    """"m=1: 0.246, m=5: 0.305, ...; t(100)/t(1) = 2.15, t(500)/t(100) = 1.14"."""
    return (", ".join(f"m={m:g}: {t:.3f}" for m, t in sorted(per_m.items()))
            + f"; t({knee:g})/t({low:g}) = {per_m[knee] / per_m[low]:.2f}, "
              f"t({high:g})/t({knee:g}) = {per_m[high] / per_m[knee]:.2f}")


def _c6_from_gpu(gpu, dataset, local: str, local_numbers: dict | None = None) -> Verdict:
    """C6 judged from a committed GPU measurement (:mod:`same.report.gpu`) by the rule's ratios,
    the m sweep run here (``local``, on a CPU) said beside, always as the verdict's last line
    (:func:`~same.report.judge.gpu_judged_once` merges the datasets' verdicts read from one
    measurement and keeps each such line); not testable when there is none or it lacks one
    of the rule's m for the per-nonzero sampler."""
    rule = RULES["C6"]
    low, knee, high = rule["low_m"], rule["knee_m"], rule["high_m"]
    here = f"{local} (the paper's curve is a GPU's: a CPU's own m sweep is not judged)"
    if gpu is None:
        return _v("C6", dataset, Outcome.NOT_TESTABLE,
                  [f"not testable here: no GPU measurement committed ({GPU_DIR}/"
                   f"{MEASUREMENT_GLOB}, written by benchmarks/gpu_same.py)", here],
                  local_numbers)
    where = (f"{gpu.path}, {gpu.date}, commit {gpu.commit_text}: per-nonzero sampler "
             f"('{SAMPLER}'), {gpu.shape_text}")
    t = gpu.seconds_per_pass
    missing = [m for m in (low, knee, high) if m not in t]
    if missing:
        what = (f"the per-nonzero sampler ('{SAMPLER}') not measured" if not t else
                f"m = {', '.join(f'{m:g}' for m in missing)} not measured")
        measured = (f": s/pass {', '.join(f'm={m:g}: {s:.3f}' for m, s in sorted(t.items()))}"
                    if t else "")
        return _v("C6", dataset, Outcome.NOT_TESTABLE,
                  [f"not testable here: {what} on {gpu.device} (newest GPU measurement: "
                   f"{where}{measured})", here], local_numbers)
    flat, steep = t[knee] / t[low], t[high] / t[knee]
    outcome = grade([flat <= rule["max_flat"], steep >= rule["min_steep"]])
    wall = gpu.wall_seconds_per_pass
    walls = ([f"the same pass's wall-clock seconds on the host (its staging included; a free "
              f"choice the verdict is re-judged on): s/pass {_per_m_text(wall, low, knee, high)}"]
             if all(m in wall for m in (low, knee, high)) else [])
    return _v("C6", dataset, outcome,
              [f"ours on a GPU ({gpu.device}; the newest committed GPU measurement, {where}; "
               "one timed pass of one run per m): device s/pass "
               + _per_m_text(t, low, knee, high), *walls, here],
              {"s_per_pass": dict(t), "flat_ratio": flat, "steep_ratio": steep,
               "gpu": {"device": gpu.device, "path": str(gpu.path), "time_utc":
                       gpu.time_utc.isoformat(), "commit": gpu.commit},
               "cpu_sweep": local_numbers or {}})


def claim_c7(df, info, dataset=None) -> Verdict:
    """Final ll after the same passes for each m, over seeds, by Welch tests: a significant
    loss beyond m = 100 counts against the claim as a significant gain does."""
    rule, a, at = RULES["C7"], _alpha(info), _at(info)
    knee = rule["knee_m"]
    if not info["m_runs"]:
        return _not_run("C7", dataset, "the m sweep is switched off (same.m_values: null)")
    fin = variant_lls(df, info["m_runs"], at=at)
    ms = sorted(fin)
    upto = [m for m in ms if m <= knee]
    if len(upto) < 2 or knee not in fin:
        return _v("C7", dataset, Outcome.NOT_TESTABLE,
                  f"ours: m = {knee:g} and a smaller m are needed")
    steps = {(x, y): welch(fin[y], fin[x], a) for x, y in zip(upto, upto[1:])}
    mono = not any(c.lower for c in steps.values())
    base = welch(fin[knee], fin[upto[0]], a)
    better = base.higher
    beyond = {m: welch(fin[m], fin[knee], a) for m in ms if m > knee}
    little = all(not c.lower and not (c.higher and c.diff > rule["little_gain"])
                 for c in beyond.values())
    p = {f"m={y:g} − m={x:g}": c.p for (x, y), c in steps.items()}
    p[f"m={knee:g} − m={upto[0]:g}"] = base.p
    p.update({f"m={m:g} − m={knee:g}": c.p for m, c in beyond.items()})
    return _v("C7", dataset, grade([mono and better, little]),
              [f"ours ({sampler_text(df, info['m_runs'][knee])}; {_when(info)} after the same "
               f"{_budget_text(df, info['m_runs'].values())}, mean ± {CONFIDENCE:.0%} t "
               "interval): "
               + "; ".join(interval_text(fin[m], name=f"m={m:g}") for m in ms),
               f"m={knee:g} − m={upto[0]:g} {base.text()}"
               + "".join(f"; m={m:g} − m={knee:g} {c.text()}" for m, c in beyond.items())],
              {"final_ll": {m: x.tolist() for m, x in fin.items()},
               "p_beyond": {m: c.p for m, c in beyond.items()}, "p": p})


def claim_c8(df, info, dataset=None) -> Verdict:
    """In the paper's words: no schedule's final ll significantly above constant m's (a
    significant loss is reported, not counted against the claim), and inverse-linear the
    highest mean ll after the first pass, significantly above constant's; Welch tests."""
    a, at = _alpha(info), _at(info)
    if not info["schedule_runs"]:
        return _not_run("C8", dataset, "the schedules are switched off (same.schedules: null)")
    final = variant_lls(df, info["schedule_runs"], at=at)
    early = variant_lls(df, info["schedule_runs"], at="first")
    if "constant" not in final or len(final) < 2:
        return _v("C8", dataset, Outcome.NOT_TESTABLE, "ours: fewer than two schedules were run")
    c = final["constant"]
    vs = {s: welch(x, c, a) for s, x in final.items() if s != "constant"}
    level = not any(x.higher for x in vs.values())
    inv = early.get("invlinear")
    first = welch(inv, early["constant"], a) if inv is not None else None
    inv_fast = (inv is not None and inv.mean() >= max(x.mean() for x in early.values())
                and first.higher)
    losses = [s for s, x in vs.items() if x.lower]
    p = {f"{s} − constant ({_when(info)})": x.p for s, x in vs.items()}
    if first is not None:
        p["invlinear − constant (after pass 1)"] = first.p
    return _v("C8", dataset, grade([level, inv_fast]),
              [f"ours (mean ± 95% t interval; "
               f"{_budget_text(df, info['schedule_runs'].values())}): {_when(info)} " + "; ".join(
                  interval_text(x, name=s) for s, x in final.items())
               + "; after pass 1 " + "; ".join(interval_text(x, name=s)
                                                for s, x in early.items()),
               f"{_when(info)}, schedule − constant: " + "; ".join(f"{s} {x.text()}"
                                                                   for s, x in vs.items())]
              + ([f"significantly below constant (reported; the paper claims only that no "
                  f"schedule is clearly better): {', '.join(losses)}"] if losses else []),
              {"final_ll": {k: x.tolist() for k, x in final.items()},
               "first_pass_ll": {k: x.tolist() for k, x in early.items()}, "p": p})


#: claim id → function(df, info, dataset) for the per-dataset claims C1–C8
CLAIM_FUNCTIONS = {"C1": claim_c1, "C2": claim_c2, "C3": claim_c3, "C4": claim_c4,
                   "C5": claim_c5, "C6": claim_c6, "C7": claim_c7, "C8": claim_c8}
