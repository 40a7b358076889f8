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

from .measures import (
    budget_seconds,
    fmt,
    lowest_final,
    mean_range,
    mean_spread,
    noise,
    passes_to,
    ref_sd,
    sampler_text,
    table1_by_label,
    variant_lls,
)
from .paper import CONVERGED_EPS
from .tables import table2_rows
from .traces import (
    converged_pass,
    final_ll,
    final_lls,
    first_seed,
    mean_reach_seconds,
    per_pass_seconds,
)
from .verdicts import (
    RULES,
    Outcome,
    Verdict,
    grade,
)

__all__ = ["Verdict", "Outcome", "RULES", "CLAIM_FUNCTIONS", "claim_c9"]


def _v(claim, dataset, outcome, ours, numbers=None, **qualifiers) -> Verdict:
    ours = (ours,) if isinstance(ours, str) else tuple(ours)
    return Verdict(claim, dataset, outcome, ours, numbers or {}, **qualifiers)


def claim_c1(df, info, dataset=None) -> Verdict:
    """SAME's final ll against online and batch VB's, over seeds."""
    same, on, bat = (final_lls(df, k) for k in ("same", "vb_online", "vb_batch"))
    if same.min() > on.max() and same.min() > bat.max():
        outcome = Outcome.REPRODUCED
    elif same.mean() > on.mean() or same.mean() > bat.mean():
        outcome = Outcome.PARTLY
    else:
        outcome = Outcome.NOT_REPRODUCED
    ours = [f"ours (final ll, nats/token; mean [min, max] over {len(same)} seeds): "
            f"{mean_range('SAME', same)}, {mean_range('VB online', on)}, "
            f"{mean_range('VB batch', bat)}"]
    for variant, label in info.get("prior_scale_runs", {}).items():
        d = df[df["label"] == label]
        if not d.empty:
            run = first_seed(d)
            ours.append(f"SAME with {variant} (seed {int(run['seed'].iloc[0])}): final ll "
                        f"{fmt(final_ll(run))}")
    return _v("C1", dataset, outcome, ours,
              {"same": same.tolist(), "vb_online": on.tolist(), "vb_batch": bat.tolist()})


def claim_c2(df, info, dataset=None) -> Verdict:
    """Passes for each method to reach one common target: the lowest final ll of any seed of
    the three methods - eps.

    Every seed's final ll is at or above the target, so each method is judged on reaching the
    same level, and a seed spread wider than eps cannot leave a seed that never reaches it (a
    method that plateaus low cannot converge early by definition).
    """
    rule = RULES["C2"]
    labels = ("same", "vb_online", "vb_batch")
    target = min(final_lls(df, k).min() for k in labels) - CONVERGED_EPS
    cp = {k: float(np.mean([passes_to(r, target) for _, r in df[df["label"] == k]
                            .groupby("seed")])) for k in labels}
    cs, co, cb = cp["same"], cp["vb_online"], cp["vb_batch"]
    fast = max(cs, co)
    if fast <= rule["max_passes"] and cb >= rule["batch_factor"] * fast:
        outcome = Outcome.REPRODUCED
    else:
        outcome = Outcome.PARTLY if cb > fast else Outcome.NOT_REPRODUCED

    def passes(x):
        return "not reached by every seed" if np.isinf(x) else f"{x:.1f}"

    return _v("C2", dataset, outcome,
              f"ours (passes to first reach {target:.4f} nats/token = the lowest final ll of "
              f"any seed of the three methods − {CONVERGED_EPS}; mean over seeds): SAME "
              f"{passes(cs)}, "
              f"VB online {passes(co)}, VB batch {passes(cb)}", {"target": target, **cp})


def claim_c3(df, info, dataset=None) -> Verdict:
    """Per sample per word: CGS ahead early, SAME higher at the end; CGS slow to converge."""
    f1c = info["fig1c"]
    same = df[(df["label"] == f1c["same"]) & (df["seed"] == df["seed"].min())].sort_values("pass")
    cgs = first_seed(df[df["label"] == f1c["cgs"]]).sort_values("iteration")
    x0, end_x = float(same["samples_per_word"].iloc[0]), float(same["samples_per_word"].max())
    early_same, end_same = float(same["ll"].iloc[0]), float(same["ll"].iloc[-1])
    early_cgs = float(np.interp(x0, cgs["iteration"], cgs["ll"]))
    end_cgs = float(np.interp(end_x, cgs["iteration"], cgs["ll"]))
    cgs_conv = converged_pass(cgs)
    outcome = grade([early_cgs > early_same, end_same > end_cgs,
                     cgs_conv >= RULES["C3"]["cgs_iterations"]])
    return _v("C3", dataset, outcome,
              f"ours (seed {int(same['seed'].min())}): at {x0:g} samples/word CGS "
              f"{fmt(early_cgs)} vs SAME {fmt(early_same)}; at {end_x:g} samples/word CGS "
              f"{fmt(end_cgs)} vs SAME {fmt(end_same)}; CGS within {CONVERGED_EPS} of its "
              f"final ll after {cgs_conv:g} of {int(cgs['iteration'].max())} iterations",
              {"early": (early_cgs, early_same), "end": (end_cgs, end_same),
               "cgs_converged": cgs_conv})


def claim_c4(df, info, dataset=None) -> Verdict:
    """SAME's time to converge against online VB's; where that is undefined (one never reaches
    CGS's ll), their time to a quality both reach."""
    max_ratio = RULES["C4"]["max_ratio"]
    t1 = table1_by_label(df)
    ts, to = t1["same"], t1["vb_online"]
    s_t, o_t = ts["s_to_converge"], to["s_to_converge"]
    backend = df[df["label"] == "same"]["backend"].iloc[0]
    target = f"CGS's ll at its budget, {ts['converge_target_ll']:.4f}"
    ratio, by_quality = None, s_t is None
    if s_t is not None and o_t is not None:
        ratio = s_t / o_t
        ours = (f"SAME {s_t:.1f} s vs VB online {o_t:.1f} s to converge (ratio {ratio:.2f}; "
                f"target: {target}); per pass {ts['s_per_pass']:.2f} s vs "
                f"{to['s_per_pass']:.2f} s")
    elif s_t is not None:
        ours = (f"SAME converged in {s_t:.1f} s; VB online did not reach the target in every "
                f"seed ({to['seeds_converged']}) within its budget "
                f"({budget_seconds(df, 'vb_online'):.1f} s); target: {target}")
    else:
        level = lowest_final(df, "same", "vb_online")
        (a, _), (b, _) = mean_reach_seconds(df, "same", level), mean_reach_seconds(df, "vb_online", level)
        ratio = a / b if a is not None and b else None
        who = "SAME did not reach" if o_t is not None else "neither reached"
        ours = (f"time to converge undefined: {who} {target} in every seed (SAME "
                f"{ts['seeds_converged']}, VB online {to['seeds_converged']}), so judged by time "
                f"to quality instead: to reach {level:.4f} nats/token (the lowest final ll of "
                f"any seed of the two) SAME needs {fmt(a, 1)} s, VB online {fmt(b, 1)} s"
                + (f" (ratio {ratio:.2f})" if ratio is not None else ""))
    if ratio is not None:
        outcome = Outcome.REPRODUCED if ratio < max_ratio else Outcome.NOT_REPRODUCED
    else:
        outcome = Outcome.REPRODUCED if s_t is not None else Outcome.NOT_TESTABLE
    testable = outcome is not Outcome.NOT_TESTABLE
    return _v("C4", dataset, outcome, f"ours ({backend}, {sampler_text(df, 'same')}): {ours}",
              {"ratio": ratio}, by_time_to_quality=by_quality and testable,
              cpu_for_gpu_claim=backend != "cupy" and testable)


def claim_c5(df, info, dataset=None) -> Verdict:
    """Time to converge of CGS and batch VB relative to SAME's (lower bounds if not reached);
    where SAME never reaches CGS's ll, their time to SAME's own final quality instead."""
    t1 = table1_by_label(df)
    ts = t1["same"]["s_to_converge"]
    by_quality = ts is None
    if by_quality:
        level = lowest_final(df, "same")
        ts = mean_reach_seconds(df, "same", level)[0]
        how = (f"SAME did not reach CGS's ll after {t1['same']['cgs_reference_iterations']} "
               f"iterations ({t1['same']['converge_target_ll']:.4f}) in every seed "
               f"({t1['same']['seeds_converged']}), so time to converge is undefined; judged by "
               f"time to quality: seconds to reach {level:.4f} nats/token (SAME's lowest final "
               f"ll over seeds), relative to SAME's {ts:.1f} s")
    else:
        how = f"time to converge relative to SAME's {ts:.1f} s"
    ratios, parts = {}, []
    for name, lab in (("CGS", "cgs"), ("VB batch", "vb_batch")):
        t = mean_reach_seconds(df, lab, level)[0] if by_quality else t1[lab]["s_to_converge"]
        bound = t is None
        r = (budget_seconds(df, lab) if bound else t) / ts
        ratios[name] = {"ratio": r, "lower_bound": bound}
        parts.append(f"{name} {'> ' if bound else ''}{r:.1f}×"
                     + (" (not reached within its budget)" if bound else ""))
    rs = [x["ratio"] for x in ratios.values()]
    if min(rs) >= RULES["C5"]["min_ratio"]:
        outcome = Outcome.REPRODUCED
    else:
        outcome = Outcome.PARTLY if max(rs) > 1 else Outcome.NOT_REPRODUCED
    return _v("C5", dataset, outcome, f"ours ({sampler_text(df, 'same')}; {how}): "
              + ", ".join(parts) + "; GPU CGS not run here", ratios,
              by_time_to_quality=by_quality)


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
    """Final ll after the same passes for each m, over seeds, against the seed noise."""
    rule = RULES["C7"]
    knee = rule["knee_m"]
    fin = variant_lls(df, info["m_runs"])
    sd = ref_sd(df)
    ms = sorted(fin)
    upto = [m for m in ms if m <= knee]
    if len(upto) < 2 or knee not in fin:
        return _v("C7", dataset, Outcome.NOT_TESTABLE,
                  f"ours: m = {knee:g} and a smaller m are needed")
    mono = all(fin[b].mean() >= fin[a].mean() - noise(fin[a], fin[b], sd)
               for a, b in zip(upto, upto[1:]))
    better = fin[knee].mean() - fin[upto[0]].mean() > noise(fin[knee], fin[upto[0]], sd)
    little = all(fin[m].mean() - fin[knee].mean()
                 <= max(rule["little_gain"], noise(fin[m], fin[knee], sd))
                 for m in ms if m > knee)
    return _v("C7", dataset, grade([mono and better, little]),
              f"ours ({sampler_text(df, info['m_runs'][knee])}; final ll after the same passes, "
              "mean ± seed sd): " + ", ".join(mean_spread(f"m={m:g}", fin[m]) for m in ms),
              {"final_ll": {m: a.tolist() for m, a in fin.items()}})


def claim_c8(df, info, dataset=None) -> Verdict:
    """Final and first-pass ll of each annealing schedule, over seeds."""
    final = variant_lls(df, info["schedule_runs"])
    early = variant_lls(df, info["schedule_runs"], at="first")
    sd = ref_sd(df)
    if "constant" not in final or len(final) < 2:
        return _v("C8", dataset, Outcome.NOT_TESTABLE, "ours: fewer than two schedules were run")
    c = final["constant"]
    none_better = all(a.mean() - c.mean() <= noise(a, c, sd) for a in final.values())
    inv = early.get("invlinear")
    inv_fast = (inv is not None and inv.mean() >= max(a.mean() for a in early.values())
                and inv.mean() - early["constant"].mean() > noise(inv, early["constant"], sd))
    return _v("C8", dataset, grade([none_better, inv_fast]),
              "ours (mean ± seed sd): final ll " + ", ".join(
                  mean_spread(s, a) for s, a in final.items())
              + "; after pass 1 " + ", ".join(mean_spread(s, a) for s, a in early.items()),
              {"final_ll": {k: a.tolist() for k, a in final.items()},
               "first_pass_ll": {k: a.tolist() for k, a in early.items()}})


def claim_c9(datasets: dict, scaling=None) -> Verdict:
    """Seconds per token per pass across datasets, or across synthetic sizes (``scaling``)."""
    rule = RULES["C9"]
    if len(datasets) >= 2:
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
              "ours: synthetic corpora of KOS's make-up (" + ", ".join(
                  f"{r['factor']:g}×: {r['n_tokens']:,} tokens, {r['seconds_per_pass']:.3f} s/pass"
                  for r in sc["sizes"]) + f"); linear fit R² = {fit['r2']:.3f}, seconds per token "
              f"vary {fit['per_token_spread']:.2f}× across sizes ({st['sampler']} sampler, "
              f"K={st.get('n_components', st.get('n_topics'))}, "
              f"m={st.get('n_copies', st.get('n_samples')):g}; the fastest of the last "
              f"{st.get('steady_passes', '?')} of {st.get('passes', '?')} passes)", dict(fit))


#: claim id → function(df, info, dataset) for the per-dataset claims C1–C8
CLAIM_FUNCTIONS = {"C1": claim_c1, "C2": claim_c2, "C3": claim_c3, "C4": claim_c4,
                   "C5": claim_c5, "C6": claim_c6, "C7": claim_c7, "C8": claim_c8}
