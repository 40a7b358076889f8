"""One function per paper claim (:data:`same.report.paper.CLAIMS`), each returning a :class:`Verdict`.

Every function reads one dataset's traces (a DataFrame from
:func:`same.report.traces.load_traces`) and the run labels of the variants it
needs (``info``), and judges them by the claim's rule in
:data:`~same.report.verdicts.RULES`, whose thresholds it reads from there; nothing here
writes files: :mod:`same.report.render` turns verdicts into Markdown.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .measures import fmt, sampler_text, variant_lls
from .paper import CONVERGED_EPS, METHOD_NAMES
from .stats import (
    CONFIDENCE,
    PRIMARY_GAP,
    converged,
    convergence,
    interval_text,
    primary_rung,
    runs_of,
    seconds_to,
    welch,
)
from .tables import table2_rows
from .traces import (
    final_ll,
    final_lls,
    first_seed,
    implementation,
    per_pass_over_seeds,
    per_pass_seconds,
)
from .verdicts import RULES, Outcome, Verdict, grade

__all__ = ["Verdict", "Outcome", "RULES", "CLAIM_FUNCTIONS", "claim_c9"]


def _v(claim, dataset, outcome, ours, numbers=None, **qualifiers) -> Verdict:
    ours = (ours,) if isinstance(ours, str) else tuple(ours)
    return Verdict(claim, dataset, outcome, ours, numbers or {}, **qualifiers)


def _eps(info) -> float:
    """The convergence tolerance ε a claim is judged with (varied by the robustness check)."""
    return float(info.get("eps", CONVERGED_EPS))


def _declines(df, labels, eps) -> list[str]:
    """"X peaks at pass p (ll) and ends d lower" for every label a seed of which ends more
    than ``eps`` below its own peak: the decline is reported, never read as convergence."""
    out = []
    for lab in labels:
        conv = converged(df, lab, eps)
        fell = [c for c in conv if c.decline > eps]
        if fell:
            worst = max(fell, key=lambda c: c.decline)
            out.append(f"{METHOD_NAMES.get(lab, lab)} peaks and declines in {len(fell)} of "
                       f"{len(conv)} seeds (worst: {worst.peak:.4f} at pass "
                       f"{worst.peak_pass:g}, {worst.decline:.4f} lower at pass "
                       f"{worst.budget_passes:g})")
    return out


def claim_c1(df, info, dataset=None) -> Verdict:
    """SAME's final ll against online and batch VB's: Welch tests over seeds."""
    same, on, bat = (final_lls(df, k) for k in ("same", "vb_online", "vb_batch"))
    c_on, c_bat = welch(same, on), welch(same, bat)
    if c_on.higher and c_bat.higher:
        outcome = Outcome.REPRODUCED
    elif c_on.higher or c_bat.higher:
        outcome = Outcome.PARTLY
    else:
        outcome = Outcome.NOT_REPRODUCED
    ours = [f"ours (final ll, nats/token, mean ± {CONFIDENCE:.0%} t interval over seeds): "
            f"{interval_text(same, name='SAME')}; {interval_text(on, name='VB online')}; "
            f"{interval_text(bat, name='VB batch')}",
            f"SAME − VB online {c_on.text()}; SAME − VB batch {c_bat.text()}"]
    for variant, label in info.get("prior_scale_runs", {}).items():
        d = df[df["label"] == label]
        if not d.empty:
            run = first_seed(d)
            ours.append(f"SAME with {variant} (seed {int(run['seed'].iloc[0])}): final ll "
                        f"{fmt(final_ll(run))}")
    return _v("C1", dataset, outcome, ours,
              {"same": same.tolist(), "vb_online": on.tolist(), "vb_batch": bat.tolist(),
               "p_vb_online": c_on.p, "p_vb_batch": c_bat.p})


def claim_c2(df, info, dataset=None) -> Verdict:
    """Passes each method needs to converge by its own rule
    (:func:`~same.report.stats.convergence`: within ε of its own final ll for the rest of its
    budget), mean over seeds; no common target, so no method sets another's."""
    rule, eps = RULES["C2"], _eps(info)
    labels = ("same", "vb_online", "vb_batch")
    per = {k: np.array([c.passes for c in converged(df, k, eps)]) for k in labels}
    cp = {k: float(a.mean()) for k, a in per.items()}
    cs, co, cb = cp["same"], cp["vb_online"], cp["vb_batch"]
    fast = max(cs, co)
    if fast <= rule["max_passes"] and cb >= rule["batch_factor"] * fast:
        outcome = Outcome.REPRODUCED
    else:
        outcome = Outcome.PARTLY if cb > fast else Outcome.NOT_REPRODUCED
    ours = [f"ours (passes until each run stays within ε = {eps:g} of its own final ll, mean ± "
            f"{CONFIDENCE:.0%} t interval over seeds): "
            + "; ".join(interval_text(per[k], 1, METHOD_NAMES[k]) for k in labels)]
    ours += _declines(df, labels, eps)
    return _v("C2", dataset, outcome, ours, {"eps": eps, **cp})


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
    eps, reference = _eps(info), info.get("reference", "final")
    sames, cgss = runs_of(df, f1c["same"]), runs_of(df, f1c["cgs"])
    x0 = float(sames[0].sort_values("pass")["samples_per_word"].iloc[0])
    end_x = float(sames[0]["samples_per_word"].max())

    def at(run, x):
        r = run.sort_values("iteration")
        return float(np.interp(x, r["iteration"], r["ll"]))

    early_same = np.array([float(r.sort_values("pass")["ll"].iloc[0]) for r in sames])
    end_same = np.array([final_ll(r) for r in sames])
    early_cgs, end_cgs = (np.array([at(r, x) for r in cgss]) for x in (x0, end_x))
    conv = np.array([_reference_convergence(r, eps, reference) for r in cgss])
    lead, ahead = welch(early_cgs, early_same), welch(end_same, end_cgs)
    outcome = grade([lead.higher, ahead.higher, conv.mean() >= RULES["C3"]["cgs_iterations"]])
    ref_text = ("stays within {e} of its final ll" if reference == "final" else
                "first comes within {e} of its best checkpoint").format(e=f"{eps:g}")
    budget = int(cgss[0]["iteration"].max())
    return _v("C3", dataset, outcome,
              [f"ours ({len(sames)} SAME and {len(cgss)} CGS seeds): at {x0:g} samples/word "
               f"{interval_text(early_cgs, name='CGS')} vs {interval_text(early_same, name='SAME')}"
               f", CGS − SAME {lead.text()}",
               f"at {end_x:g} samples/word {interval_text(end_cgs, name='CGS')} vs "
               f"{interval_text(end_same, name='SAME')}, SAME − CGS {ahead.text()}",
               f"CGS {ref_text} from iteration {interval_text(conv, 0)} of {budget}"],
              {"early": (early_cgs.tolist(), early_same.tolist()),
               "end": (end_cgs.tolist(), end_same.tolist()), "cgs_converged": conv.tolist(),
               "eps": eps, "reference": reference})


def _seconds(df, label, eps) -> np.ndarray:
    return np.array([c.seconds for c in converged(df, label, eps)])


def claim_c4(df, info, dataset=None) -> Verdict:
    """SAME's training seconds to converge (its own rule) against online VB's (its own)."""
    max_ratio, eps = RULES["C4"]["max_ratio"], _eps(info)
    s, o = _seconds(df, "same", eps), _seconds(df, "vb_online", eps)
    ratio = float(s.mean() / o.mean()) if o.mean() > 0 else float("inf")
    backend = df[df["label"] == "same"]["backend"].iloc[0]
    rung, _ = primary_rung(df, [k for k in METHOD_NAMES if k in set(df["label"])])
    reach = {k: seconds_to(df, k, rung) for k in ("same", "vb_online")}
    ours = (f"ours ({backend}, {sampler_text(df, 'same')}): seconds to converge (within ε = "
            f"{eps:g} of its own final ll), mean over seeds: SAME {s.mean():.1f} s, VB online "
            f"{o.mean():.1f} s (ratio {ratio:.2f}); per pass {_per_pass(df, 'same'):.2f} s vs "
            f"{_per_pass(df, 'vb_online'):.2f} s (implementations: {_impl(df, 'same')} vs "
            f"{_impl(df, 'vb_online')}); to {rung:.4f} "
            f"nats/token (the ladder's rung {PRIMARY_GAP:g} below the best method's mean final "
            f"ll): SAME {_reach_text(reach['same'])}, VB online {_reach_text(reach['vb_online'])}")
    outcome = Outcome.REPRODUCED if ratio < max_ratio else Outcome.NOT_REPRODUCED
    return _v("C4", dataset, outcome, ours, {"ratio": ratio, "eps": eps},
              cpu_for_gpu_claim=backend != "cupy")


def _per_pass(df, label) -> float:
    """Median over seeds of each seed's seconds per pass."""
    return per_pass_over_seeds(df[df["label"] == label])["median"]


def _impl(df, label) -> str:
    return implementation(label, df[df["label"] == label])


def _reach_text(secs: np.ndarray) -> str:
    hit = np.isfinite(secs)
    if hit.all():
        return f"{secs.mean():.1f} s"
    return f"not reached by {int((~hit).sum())} of {len(secs)} seeds"


def claim_c5(df, info, dataset=None) -> Verdict:
    """Seconds CGS and batch VB need to converge (their own rule) relative to SAME's; and,
    said plainly, how long CGS takes to reach SAME's final quality and where it ends."""
    eps = _eps(info)
    ts = float(_seconds(df, "same", eps).mean())
    ratios, parts = {}, []
    for name, lab in (("CGS", "cgs"), ("VB batch", "vb_batch")):
        r = float(_seconds(df, lab, eps).mean()) / ts
        ratios[name] = {"ratio": r}
        parts.append(f"{name} {r:.1f}×")
    rs = [x["ratio"] for x in ratios.values()]
    if min(rs) >= RULES["C5"]["min_ratio"]:
        outcome = Outcome.REPRODUCED
    else:
        outcome = Outcome.PARTLY if max(rs) > 1 else Outcome.NOT_REPRODUCED
    same, cgs = final_lls(df, "same"), final_lls(df, "cgs")
    reach = seconds_to(df, "cgs", float(same.mean()))
    plain = (f"CGS reaches SAME's mean final ll ({same.mean():.4f}) in "
             + (f"{reach.mean():.1f} s ({reach.mean() / ts:.2f}× SAME's time to converge)"
                if np.isfinite(reach).all() else _reach_text(reach))
             + f" and ends at {interval_text(cgs)} against SAME's {interval_text(same)}: "
             f"CGS − SAME {welch(cgs, same).text()}")
    return _v("C5", dataset, outcome,
              [f"ours ({sampler_text(df, 'same')}; seconds to converge within ε = {eps:g} of "
               f"each run's own final ll, relative to SAME's {ts:.1f} s): " + ", ".join(parts)
               + "; GPU CGS not run here", plain], {**ratios, "eps": eps})


def claim_c6(df, info, dataset=None) -> Verdict:
    """Seconds per pass at the rule's three m (judged only for the GPU sampler)."""
    rule = RULES["C6"]
    low, knee, high = rule["low_m"], rule["knee_m"], rule["high_m"]
    t2 = {r["n_samples"]: r["s_per_pass"] for r in table2_rows(df, info["m_runs"])}
    if not {low, knee, high} <= set(t2):
        return _v("C6", dataset, Outcome.NOT_TESTABLE,
                  f"ours: m = {low:g}, {knee:g} and {high:g} were not all run")
    flat, steep = t2[knee] / t2[low], t2[high] / t2[knee]
    backend = df[df["label"] == "same"]["backend"].iloc[0]
    ours = ("ours (" + backend + ", " + sampler_text(df, info["m_runs"][knee]) + "): s/pass "
            + ", ".join(f"m={m:g}: {t:.3f}" for m, t in sorted(t2.items()))
            + f"; t({knee:g})/t({low:g}) = {flat:.2f}, t({high:g})/t({knee:g}) = {steep:.2f}")
    outcome = (grade([flat <= rule["max_flat"], steep >= rule["min_steep"]])
               if backend == "cupy" else Outcome.NOT_TESTABLE)
    return _v("C6", dataset, outcome, ours,
              {"s_per_pass": t2, "flat_ratio": flat, "steep_ratio": steep})


def claim_c7(df, info, dataset=None) -> Verdict:
    """Final ll after the same passes for each m, over seeds, by Welch tests: a significant
    loss beyond m = 100 counts against the claim as a significant gain does."""
    rule = RULES["C7"]
    knee = rule["knee_m"]
    fin = variant_lls(df, info["m_runs"])
    ms = sorted(fin)
    upto = [m for m in ms if m <= knee]
    if len(upto) < 2 or knee not in fin:
        return _v("C7", dataset, Outcome.NOT_TESTABLE,
                  f"ours: m = {knee:g} and a smaller m are needed")
    mono = not any(welch(fin[b], fin[a]).lower for a, b in zip(upto, upto[1:]))
    better = welch(fin[knee], fin[upto[0]]).higher
    beyond = {m: welch(fin[m], fin[knee]) for m in ms if m > knee}
    little = all(not c.lower and not (c.higher and c.diff > rule["little_gain"])
                 for c in beyond.values())
    return _v("C7", dataset, grade([mono and better, little]),
              [f"ours ({sampler_text(df, info['m_runs'][knee])}; final ll after the same "
               f"passes, mean ± {CONFIDENCE:.0%} t interval): "
               + "; ".join(interval_text(fin[m], name=f"m={m:g}") for m in ms),
               f"m={knee:g} − m={upto[0]:g} {welch(fin[knee], fin[upto[0]]).text()}"
               + "".join(f"; m={m:g} − m={knee:g} {c.text()}" for m, c in beyond.items())],
              {"final_ll": {m: a.tolist() for m, a in fin.items()},
               "p_beyond": {m: c.p for m, c in beyond.items()}})


def claim_c8(df, info, dataset=None) -> Verdict:
    """Final and first-pass ll of each annealing schedule, over seeds, by Welch tests."""
    final = variant_lls(df, info["schedule_runs"])
    early = variant_lls(df, info["schedule_runs"], at="first")
    if "constant" not in final or len(final) < 2:
        return _v("C8", dataset, Outcome.NOT_TESTABLE, "ours: fewer than two schedules were run")
    c = final["constant"]
    vs = {s: welch(a, c) for s, a in final.items() if s != "constant"}
    level = all(not x.significant for x in vs.values())
    inv = early.get("invlinear")
    inv_fast = (inv is not None and inv.mean() >= max(a.mean() for a in early.values())
                and welch(inv, early["constant"]).higher)
    return _v("C8", dataset, grade([level, inv_fast]),
              ["ours (mean ± 95% t interval): final ll " + "; ".join(
                  interval_text(a, name=s) for s, a in final.items())
               + "; after pass 1 " + "; ".join(interval_text(a, name=s)
                                                for s, a in early.items()),
               "final, schedule − constant: " + "; ".join(f"{s} {x.text()}"
                                                          for s, x in vs.items())],
              {"final_ll": {k: a.tolist() for k, a in final.items()},
               "first_pass_ll": {k: a.tolist() for k, a in early.items()}})


def claim_c9(datasets: dict, scaling=None) -> Verdict:
    """Seconds per token per pass across datasets, or across synthetic sizes (``scaling``)."""
    rule = RULES["C9"]
    ks = {int(d.loc[d["label"] == "same", "n_topics"].iloc[0])
          for d in (info["df"] for info in datasets.values())
          if "n_topics" in d and (d["label"] == "same").any()}
    if len(datasets) >= 2 and (len(ks) == 1 or scaling is None):
        sizes = {}
        for name, info in datasets.items():
            d = info["df"][info["df"]["label"] == "same"]
            tok = float(d.sort_values("pass")["tokens_seen"].iloc[0])
            sizes[name] = (tok, float(np.mean([per_pass_seconds(r) for _, r in d.groupby("seed")])))
        per_token = {n: s / t for n, (t, s) in sizes.items()}
        spread = max(per_token.values()) / min(per_token.values())
        outcome = (Outcome.REPRODUCED if spread <= rule["max_spread_datasets"]
                   else Outcome.NOT_REPRODUCED)
        return _v("C9", None, outcome,
                  "ours: " + ", ".join(f"{n}: {s:.3f} s/pass for {t:.3g} tokens "
                                       f"({s / t * 1e9:.1f} ns/token)"
                                       for n, (t, s) in sizes.items()), {"spread": spread})
    across = ("" if len(datasets) < 2 else
              f"the datasets' K differ ({', '.join(map(str, sorted(ks)))}), so their seconds "
              "per token are not one cost; ")
    if scaling is None:
        return _v("C9", None, Outcome.NOT_TESTABLE,
                  "ours: one dataset in this run; run with several (e.g. --config "
                  "datasets=[kos,nips]) or see benchmarks/ for scaling on synthetic corpora")
    sc = json.loads(Path(scaling).read_text())
    fit, st = sc["fit"], sc["settings"]
    if fit["per_token_spread"] <= rule["max_spread_sizes"] and fit["r2"] >= rule["min_r2"]:
        outcome = Outcome.REPRODUCED
    elif fit["per_token_spread"] <= rule["max_spread_partly"]:
        outcome = Outcome.PARTLY
    else:
        outcome = Outcome.NOT_REPRODUCED
    return _v("C9", None, outcome,
              f"ours: {across}synthetic corpora of KOS's make-up (" + ", ".join(
                  f"{r['factor']:g}×: {r['n_tokens']:,} tokens, {r['seconds_per_pass']:.3f} s/pass"
                  for r in sc["sizes"]) + f"); linear fit R² = {fit['r2']:.3f}, seconds per token "
              f"vary {fit['per_token_spread']:.2f}× across sizes ({st['sampler']} sampler, "
              f"K={st.get('n_components', st.get('n_topics'))}, "
              f"m={st.get('n_copies', st.get('n_samples')):g}; the fastest of the last "
              f"{st.get('steady_passes', '?')} of {st.get('passes', '?')} passes)", dict(fit))


#: claim id → function(df, info, dataset) for the per-dataset claims C1–C8
CLAIM_FUNCTIONS = {"C1": claim_c1, "C2": claim_c2, "C3": claim_c3, "C4": claim_c4,
                   "C5": claim_c5, "C6": claim_c6, "C7": claim_c7, "C8": claim_c8}
