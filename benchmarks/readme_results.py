"""The README's paragraphs about the committed workflow results, rendered from them.

Every number in these blocks is computed here from the committed traces (``results/<d>/*/K*/
seed*/trace.csv`` with their meta.json), the seconds measured alone (``results/<d>/
timing.json``), the topic-recovery table, claims.md (itself rendered from the same results)
and ``results/bench/workflow_runs.json`` (the wall time of each profile's last run from a
fresh clone, with its commit and machine), through the report's own functions; only the
prose is written here. README.md is rewritten between ``<!-- bench:NAME:begin -->`` and
``<!-- bench:NAME:end -->`` and nowhere else (benchmarks/readme_numbers.py's mechanism).

    python benchmarks/readme_results.py            # rewrite the blocks
    python benchmarks/readme_results.py --check    # exit 1 if the README's blocks are stale
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np

from same.io.cli import ArgumentParser

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_numbers",
                                               Path(__file__).with_name("readme_numbers.py"))
rn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rn)
num, wrap = rn.num, rn.wrap

WORKFLOW_RUNS = REPO / "results" / "bench" / "workflow_runs.json"


def _traces(results: Path, dataset: str, labels=None):
    from same.report import load_traces, test_traces

    paths = sorted((results / dataset).glob("*/K*/seed*/trace.csv"))
    if labels is not None:
        paths = [p for p in paths if p.parts[-4] in labels]
    return test_traces(load_traces(paths))


def _main_labels() -> set[str]:
    from same.experiments.runs import MAIN_LABELS, ORDER_SUFFIX
    from same.experiments.tuning import TUNED_SUFFIX

    return ({*MAIN_LABELS} | {f"{lab}{TUNED_SUFFIX}" for lab in MAIN_LABELS}
            | {f"{lab}{ORDER_SUFFIX}" for lab in MAIN_LABELS})


def _names(labels) -> str:
    from same.report.paper import METHOD_NAMES

    names = [METHOD_NAMES.get(lab, lab) for lab in labels]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _standing(frame, against) -> str:
    """"significantly above X, level with Y, significantly below Z" (Welch, α = 0.05) of
    SAME's final ll against each of ``against``."""
    from same.report.stats import welch
    from same.report.traces import final_lls

    same = final_lls(frame, "same")
    above, level, below = [], [], []
    for lab in against:
        c = welch(same, final_lls(frame, lab))
        (above if c.higher else below if c.lower else level).append(lab)
    parts = ([f"significantly above {_names(above)}"] if above else []) + (
        [f"not significantly different from {_names(level)}"] if level else []) + (
        [f"significantly below {_names(below)}"] if below else [])
    return "; ".join(parts) if parts else "alone"


def _convergence(frame) -> tuple[float, str] | None:
    """(CGS@1000's ll, what SAME does against it: its seconds alone, or its gap), or None."""
    from same.report.stats import cgs_reference, seconds_to
    from same.report.timing import seconds_problem
    from same.report.traces import final_lls

    ref = cgs_reference(frame)
    if ref is None:
        return None
    target = float(ref.mean())
    secs = seconds_to(frame, "same", target)
    if np.isfinite(secs).all() and seconds_problem(frame, "same") is None:
        return target, f"reaches it in {num(secs.mean(), 2)} s"
    if np.isfinite(secs).all():
        return target, "reaches it (its seconds refused)"
    gap = target - float(final_lls(frame, "same").mean())
    return target, f"ends {num(gap, 3)} below it, not within its budget"


def _rung(frame, gap: float = 0.1) -> tuple[float, str]:
    """(the ladder's rung ``gap`` below the best final ll, the seconds measured alone each
    method needs to reach it)."""
    from same.report.paper import METHOD_NAMES
    from same.report.stats import ladder, seconds_to
    from same.report.timing import seconds_problem

    labels = [lab for lab in METHOD_NAMES if lab in set(frame["label"])]
    rung = next(t for t, name in ladder(frame, labels).items() if name == f"best − {gap:g}")
    got, never, refused = [], [], []
    for lab in labels:
        if seconds_problem(frame, lab) is not None:
            refused.append(lab)
            continue
        s = seconds_to(frame, lab, rung)
        (got if np.isfinite(s).all() else never).append((float(np.mean(s)), lab))
    parts = [", ".join(f"{METHOD_NAMES[lab]} {num(s, 1)} s" for s, lab in sorted(got))] \
        if got else []
    if never:
        parts.append(f"not in every seed: {_names([lab for _, lab in never])}")
    if refused:
        parts.append(f"seconds refused: {_names(refused)}")
    return rung, "; ".join(parts)


def _order(frame) -> str:
    from same.report.findings import ORDER_NAMES
    from same.report.stats import welch
    from same.report.traces import ORDER_SUFFIX, final_lls

    twin = f"same{ORDER_SUFFIX}"
    if twin not in set(frame["label"]):
        return ""
    what = ORDER_NAMES.get(frame.loc[frame["label"] == twin, "document_order"].iloc[0],
                           "the other order")
    c = welch(final_lls(frame, twin), final_lls(frame, "same"))
    sign = "+" if c.diff > 0 else ""
    return (f"In the other document order ({what}), SAME's final ll moves by "
            f"{sign}{num(c.diff, 3)} nats/token (Welch p = {c.p:.2g}).")


def _claims_held(claims_md: str, dataset: str) -> dict[str, str]:
    """Configuration → "reproduced: …; partly: …" of claims.md's finding for ``dataset``."""
    part = claims_md.split(f"### {dataset} (", 1)[1].split("\n### ", 1)[0]
    out = {}
    for config, body in re.findall(r"\*\*(as published|tuned)\.\*\*(.*?)(?=\*\*|\Z)", part, re.S):
        m = re.search(r"- Paper claims under document completion: (.*)\.\n", body)
        if m:
            out[config] = m.group(1)
    return out


def _agreement(claims_md: str, other: str) -> str:
    m = re.search(r"Of (\d+) judgements made on more than one corpus, (\d+) have the same "
                  r"outcome on every corpus", claims_md)
    if not m:
        return ""
    section = claims_md.split("## Across corpora", 1)[1].split("\n## ", 1)[0]
    differ = sorted(set(re.findall(r"^- (C\d)\b", section, re.M)), key=lambda c: int(c[1:]))
    return (f"The verdicts agree with {other}'s in {m.group(2)} of the {m.group(1)} judgements "
            "made on both corpora" + (f"; those that differ concern {', '.join(differ)} "
                                      "(claims.md's \"Across corpora\" lists each)."
                                      if differ else "."))


def render_findings(results: Path, dataset: str, claims: Path, other: str | None = None) -> str:
    """What the committed run shows on ``dataset`` (its claims.md: ``claims``)."""
    from same.report import configuration_frame, configurations, load_timing, retime, shape_of
    from same.report.paper import METHOD_NAMES
    from same.report.stats import t_interval
    from same.report.timing import timed_labels
    from same.report.traces import final_lls

    df = _traces(results, dataset, _main_labels())
    tpath = results / dataset / "timing.json"
    timing = load_timing(tpath) if tpath.is_file() else None
    if timing is not None:
        df = retime(df, timing, labels=timed_labels(df))
    shape = shape_of(df, dataset)
    seeds = df.loc[df["label"] == "same", "seed"].nunique()
    claims_md = claims.read_text()
    held = _claims_held(claims_md, dataset)
    m = json.loads(df.loc[df["label"] == "same", "params"].iloc[0]).get("n_copies")
    standing, rungs, conv = [], [], []
    for config in configurations(df):
        frame = configuration_frame(df, config)
        labels = [lab for lab in METHOD_NAMES if lab in set(frame["label"])]
        finals = {lab: final_lls(frame, lab) for lab in labels}
        best = max(labels, key=lambda lab: finals[lab].mean())
        name = "as published" if config == "published" else "tuned"
        if config == "published":
            mean, lo, hi = t_interval(finals[best])
            standing.append(f"{METHOD_NAMES[best]} is best ({num(mean, 4)} ± {num((hi - lo) / 2, 4)}"
                            f" nats/token, 95% t over {seeds} seeds).")
        where = ("SAME is best" if best == "same" else
                 f"SAME (m = {num(m)}) ends {num(finals[best].mean() - finals['same'].mean(), 3)}"
                 " below it")
        others = [lab for lab in labels if lab not in ("same", best)]
        standing.append(f"{name.capitalize()}, {where}: {_standing(frame, others)}.")
        rung, reach = _rung(frame)
        rungs.append(f"{name}: {reach}")
        c = _convergence(frame)
        if c is not None:
            conv.append((c[0], f"{name} {c[1]}"))
    text = [f"What the committed run shows on {dataset} (K = {shape['n_topics']}, "
            f"{num(shape['tokens_per_parameter'], 2)} training tokens per φ parameter, {seeds} "
            f"seeds, held-out ll by document completion; `{claims.relative_to(REPO)}` opens "
            "with the same in full):", *standing,
            f"Training seconds measured alone to the best final ll − 0.1 ({num(rung, 4)}), "
            + "; ".join(rungs) + "."]
    if conv:
        text.append(f"Against the paper's convergence (CGS's held-out ll after 1000 iterations, "
                    f"{num(conv[0][0], 4)}), SAME " + "; ".join(t for _, t in conv) + ".")
    if held:
        text.append("Claims under document completion: " + "; ".join(
            f"{name}, {h}" for name, h in held.items()) + ".")
    once = re.search(r"^- Judged once, across datasets: (.*)\.$", claims_md, re.M)
    if once:
        text.append(f"Judged once, across datasets: {once.group(1)}.")
    order = _order(configuration_frame(df, "published"))
    if order:
        text.append(order)
    if other:
        text.append(_agreement(claims_md, other))
    return wrap(" ".join(t for t in text if t))


def render_scale(results: Path = REPO / "results") -> str:
    """What the committed scale profile run shows (one seed): SAME's curve against the others'
    final lls and the true topics', and the topic recovery (results/scale)."""
    import pandas as pd

    from same.report import shape_of
    from same.report.paper import METHOD_NAMES
    from same.report.traces import final_ll

    df = _traces(results, "scale", _main_labels())
    shape = shape_of(df, "scale")
    kos = shape_of(_traces(results, "kos", {"same"}), "kos")
    rec = pd.read_csv(results / "scale" / "topic_recovery.csv")
    same = df[df["label"] == "same"].sort_values("pass")
    peak = same.loc[same["ll"].idxmax()]
    final = float(same["ll"].iloc[-1])
    others = {lab: final_ll(df[df["label"] == lab]) for lab in METHOD_NAMES
              if lab != "same" and (df["label"] == lab).any()}
    below = [lab for lab, ll in others.items() if final < ll]
    cgs_iters = int(df.loc[df["label"] == "cgs", "iteration"].max())
    tv = dict(zip(rec["method"], rec["mean matched TV"]))
    oracle = float(rec.loc[rec["method"].str.startswith("true topics"), "final ll"].iloc[0])
    mutual = float(rec["true topics' mutual TV"].iloc[0])
    other_tv = [v for k, v in tv.items() if k not in ("SAME Gibbs",) and
                not k.startswith("true topics")]
    closest = min(tv, key=lambda k: tv[k] if not k.startswith("true") else np.inf)
    curve = (f"SAME's held-out ll peaks after pass {int(peak['pass'])} ({num(peak['ll'], 2)}) and "
             f"then falls ({num(final, 2)} after {int(same['pass'].iloc[-1])})"
             if int(peak["pass"]) < int(same["pass"].iloc[-1]) else
             f"SAME's held-out ll ends at {num(final, 2)}")
    versus = ", ".join(f"{METHOD_NAMES[lab]} ({num(others[lab], 2)})" for lab in below)
    text = (f"What the committed run shows (one seed, {num(shape['tokens_per_parameter'], 2)} "
            f"training tokens per φ parameter, {num(shape['tokens_per_parameter'] / kos['tokens_per_parameter'], 2)}× "
            f"KOS's at K = {kos['n_topics']}; CGS {cgs_iters} iterations): {curve}"
            + (f", below {versus}" if below else "")
            + f"; the true topics score {num(oracle, 2)} with the same evaluator. "
            + (f"Yet SAME's topics are the closest to the true ones (mean matched total-variation "
               f"distance {num(tv['SAME Gibbs'], 2)}, against {num(min(other_tv), 2)}–"
               f"{num(max(other_tv), 2)} for VB and CGS; two distinct true topics are "
               f"{num(mutual, 2)} apart)." if closest == "SAME Gibbs" else
               f"The closest topics to the true ones are {closest}'s (mean matched "
               f"total-variation distance {num(tv[closest], 2)}; SAME's "
               f"{num(tv['SAME Gibbs'], 2)}; two distinct true topics are {num(mutual, 2)} "
               "apart).")
            + " With one seed, `results/scale/claims.md` (rebuilt from these traces under the "
            "current rules) judges none of C1–C8: every verdict that needs a Welch test over seeds "
            "says \"not judged: 1 seed(s)\", and none about time, as no seconds of this run were "
            "measured with the machine alone.")
    return wrap(text)


def render_wall(profile: str) -> str:
    """The wall time of a profile's last run from a fresh clone (workflow_runs.json)."""
    runs = json.loads(WORKFLOW_RUNS.read_text())
    r = runs[profile]
    minutes, seconds = divmod(round(r["wall_seconds"]), 60)
    text = (f"{r['what']} took {minutes} min {seconds} s from a fresh clone on this "
            f"{num(r['machine']['logical_cores'])}-core VM ({r['date']}, commit "
            f"{r['commit'][:7]}; `{r['command']}`): {r['jobs']} jobs, {r['fits']} of them fits"
            f"{', ' + r['note'] if r.get('note') else ''}.")
    return wrap(text)


def render_blocks(results: Path = REPO / "results") -> dict[str, str]:
    return {
        "workflow_quick": render_wall("quick"),
        "findings_kos": render_findings(results, "kos", results / "claims.md"),
        "workflow_corpora": render_wall("corpora"),
        "findings_20news": render_findings(results, "20news", results / "20news" / "claims.md",
                                           other="KOS"),
        "findings_scale": render_scale(results),
    }


def main(argv: list[str] | None = None) -> int:
    """Rewrite README.md's result blocks, or with ``--check`` exit 1 if they are stale."""
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report stale blocks (exit 1)")
    ap.add_argument("--readme", type=Path, default=REPO / "README.md")
    args = ap.parse_args(argv)
    return rn.update_readme(args.readme, render_blocks(), args.check,
                            "the committed results", "benchmarks/readme_results.py")


if __name__ == "__main__":
    sys.exit(main())
