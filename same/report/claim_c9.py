"""Claim C9 (cost grows linearly with corpus size), judged across datasets: from SAME's
seconds per pass measured alone on several datasets (:func:`~same.report.timing.per_pass_alone`;
of one K, or of several where no scaling benchmark ran), or from C9's scaling benchmark (:mod:`same.experiments.size_cost`: synthetic corpora of one
make-up at several sizes), whose seconds are read only where its measurement held the machine
(its ``machine_load``, :mod:`same.experiments.machine_load`), as every other seconds verdict's.
"""

from __future__ import annotations

from same.experiments.machine_load import is_shared

from .claims import _not_judged, _not_run, _v
from .timing import per_pass_alone
from .verdicts import RULES, Outcome, Verdict

__all__ = ["claim_c9"]


def claim_c9(datasets: dict, scaling=None) -> Verdict:
    """Seconds per token per pass across datasets (each dataset's ``info["timing"]``, its
    loaded timing.json) where they share one K or no scaling result was given, else across
    the synthetic sizes of the scaling result ``scaling`` (a path); not judged where the
    seconds were not measured alone.

    Raises
    ------
    ValueError
        A malformed scaling result (:func:`same.experiments.size_cost.load_result`).
    """
    ks = {int(d.loc[d["label"] == "same", "n_topics"].iloc[0])
          for d in (info["df"] for info in datasets.values())
          if "n_topics" in d and (d["label"] == "same").any()}
    if len(datasets) >= 2 and (len(ks) == 1 or scaling is None):
        return _across_datasets(datasets)
    across = ("" if len(datasets) < 2 else
              f"the datasets' K differ ({', '.join(map(str, sorted(ks)))}), so their seconds "
              "per token are not one cost; ")
    if scaling is None:
        return _not_run("C9", None, "one dataset, and C9's scaling benchmark is switched off "
                        "(scaling: null); run it, or several datasets of one K")
    return _from_sizes(scaling, across)


def _across_datasets(datasets: dict) -> Verdict:
    """C9 from each dataset's SAME seconds per pass measured alone, per training token."""
    rule = RULES["C9"]
    sizes, refused = {}, []
    for name, info in datasets.items():
        d = info["df"][info["df"]["label"] == "same"]
        alone = per_pass_alone(info["df"], info.get("timing"), "same")
        if alone is None or d.empty:
            refused.append(f"{name}: SAME's seconds per pass were not measured alone")
            continue
        sizes[name] = (float(d.sort_values("pass")["tokens_seen"].iloc[0]), alone["median"])
    if refused:
        return _not_judged("C9", None, refused)
    per_token = {n: s / t for n, (t, s) in sizes.items()}
    spread = max(per_token.values()) / min(per_token.values())
    outcome = (Outcome.REPRODUCED if spread <= rule["max_spread_datasets"]
               else Outcome.NOT_REPRODUCED)
    return _v("C9", None, outcome,
              "ours (seconds measured alone): " + ", ".join(
                  f"{n}: {s:.3f} s/pass for {t:.3g} tokens ({s / t * 1e9:.1f} ns/token)"
                  for n, (t, s) in sizes.items()), {"spread": spread})


def _from_sizes(scaling, across: str) -> Verdict:
    """C9 from the scaling benchmark's result at ``scaling``, refused when it shared the
    machine or does not say."""
    from same.experiments.size_cost import load_result

    rule = RULES["C9"]
    sc = load_result(scaling)
    fit, st = sc["fit"], sc["settings"]
    ours = (f"ours: {across}synthetic corpora of {st.get('base', 'kos')}'s make-up (" + ", ".join(
        f"{r['factor']:g}×: {r['n_tokens']:,} tokens, {r['seconds_per_pass']:.3f} s/pass"
        for r in sc["sizes"]) + f"); linear fit R² = {fit['r2']:.3f}, seconds per token "
        f"vary {fit['per_token_spread']:.2f}× across sizes ({st['sampler']} sampler, "
        f"K={st.get('n_components', st.get('n_topics'))}, "
        f"m={st.get('n_copies', st.get('n_samples')):g}; " + _passes_text(st) + ")")
    load = sc.get("machine_load")
    if not isinstance(load, dict) or load.get("other_cores") is None:
        return _not_judged("C9", None, [f"{scaling}: the scaling benchmark's machine load is "
                                        "not recorded (a result written before it was): "
                                        "rerun the scaling rule"], (ours,))
    if is_shared(load):
        return _not_judged("C9", None, [f"{scaling}: the scaling benchmark's seconds were "
                                        f"measured beside other work ({load['other_cores']:.2f} "
                                        "cores): refused"], (ours,))
    if fit["per_token_spread"] <= rule["max_spread_sizes"] and fit["r2"] >= rule["min_r2"]:
        outcome = Outcome.REPRODUCED
    elif fit["per_token_spread"] <= rule["max_spread_partly"]:
        outcome = Outcome.PARTLY
    else:
        outcome = Outcome.NOT_REPRODUCED
    return _v("C9", None, outcome, ours + f" (other work beside it: {load['other_cores']:.2f} "
              "cores)", dict(fit))


def _passes_text(settings: dict) -> str:
    """"the fastest of the last 4 of 8 passes", as the result's settings record them."""
    steady, passes = settings.get("steady_passes"), settings.get("passes")
    if steady is None or passes is None:
        return "which passes it kept is not recorded (a result written before it was)"
    return f"the fastest of the last {steady} of {passes} passes"
