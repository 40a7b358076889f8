"""Captions of the figures and tables: what is plotted, what every line, band and bar means,
which claims each bears on, after the setting of the runs it reads.

The one source of a caption's text: each figure draws :func:`figure_caption` under its plot and
the workflow passes the same text to ``snakemake --report`` (a rule's ``params.caption``,
workflow/report/caption.rst).
"""

from __future__ import annotations

from .paper import CLAIMS

__all__ = ["figure_caption", "per_estimator", "CAPTION_NOTES", "FIGURE_CLAIMS", "BAND", "bears_on"]

#: The claims (same.report.paper.CLAIMS) whose verdicts read what each figure or table shows;
#: a name absent here bears on no verdict (its caption says what it is for instead).
FIGURE_CLAIMS = {
    "fig1_passes": ("C1", "C2"),
    "fig1_seconds": ("C2", "C4", "C5"),
    "fig1c_samples": ("C3",),
    "fig2a_m": ("C7",),
    "fig2b_anneal": ("C8",),
    "crossover_study": ("C1", "C3"),
    "table1": ("C2", "C4", "C5"),
    "time_to_quality": ("C4", "C5"),
    "table2": ("C6",),
}

#: What a line and its bands are, in a figure that reads several seeds.
BAND = ("lines: mean over seeds, dark band: its 95% Student-t interval (the interval the "
        "verdicts use), light band: min–max over seeds; under each panel, a zoom on the last "
        "checkpoints, its y-range set by the final means and their intervals and the lines "
        "over those checkpoints (a series far below the best is named there instead; a zoom "
        "that would hold one line alone is left out)")
_ONE_SEED_ZOOM = ("in the zoom, grey: ± the seed noise of a one-seed difference (95%, from "
                  "the main SAME run's seeds, where it has several) around the main run's "
                  "final")
_PER_ESTIMATOR = ("a column per held-out estimator (document completion, left-to-right, the "
                  "paper's metric), each claim being judged under each")


def bears_on(name: str) -> str:
    """The caption's sentence naming the claims figure or table ``name`` bears on, each with
    its statement (same.report.paper.CLAIMS)."""
    claims = FIGURE_CLAIMS.get(name, ())
    if not claims:
        return ""
    ids = ", ".join(claims[:-1]) + (" and " if len(claims) > 1 else "") + claims[-1]
    return f" Bears on {ids}: " + "; ".join(f"{c} {CLAIMS[c][0]}" for c in claims) + "."


#: What each figure's or table's caption says after the workflow's setting.
CAPTION_NOTES = {
    "fig1_passes": f"; held-out ll of the main comparison after each pass of SAME and VB "
                   f"(bottom axis) and each Gibbs iteration of CGS (its own top axis, log "
                   f"scale: an iteration is not a pass); {BAND}; dotted: CGS's ll after 1000 "
                   f"iterations, the paper's convergence target (C4, C5; after its last "
                   f"iteration when it ran fewer); {_PER_ESTIMATOR}. The "
                   f"figure's own caption ends with the final gaps of SAME to CGS and to each "
                   f"batch VB, from the traces.",
    "fig1_seconds": "; lines: each method's "
                    "held-out ll at each checkpoint, mean over seeds, drawn at the seeds' mean "
                    "training seconds there measured with the machine alone (evaluation "
                    "excluded; log scale): the passes of the quality runs, which shared the "
                    "machine, priced by the timing rule's cost of those passes alone "
                    "(timing.json; median over its rounds); dark band: 95% t interval over "
                    "seeds, light band: min–max over seeds; dotted: CGS's ll after 1000 "
                    "iterations, the target the speed verdicts' seconds run to; last column: "
                    "training seconds per pass alone (CGS: per Gibbs iteration) on a linear "
                    "axis, each round's cost after the first pass, median over rounds "
                    "(whiskers: min–max over rounds), each bar named by method and the "
                    "implementation timed. A method whose "
                    "seconds were measured beside other work is refused, not drawn.",
    "fig1c_samples": "; held-out ll against samples drawn per word (SAME: m × passes; CGS: "
                     "iterations; log scale) for SAME at each m of the setting and CGS, "
                     f"one seed, so no band; {_ONE_SEED_ZOOM}; {_PER_ESTIMATOR}.",
    "fig2a_m": f"; SAME's held-out ll after each pass for each number of samples m; {BAND}; "
               f"{_PER_ESTIMATOR}. The figure's own caption ends with each "
               "m's final gap to m = 100. Seconds per pass of the same runs: table2.",
    "fig2b_anneal": f"; SAME's held-out ll after each pass under each annealing schedule of m "
                    f"(the same mean m; constant is the main run); {BAND}; a ring marks a "
                    f"schedule that falls on its last pass; {_PER_ESTIMATOR}. The figure's "
                    f"own caption ends with each schedule's "
                    f"final gap to constant m.",
    "prior_scale": "; SAME's held-out ll after each pass with the counts scaled against the "
                   "priors α, β as BIDMach does and as the paper writes (the legend gives θ "
                   f"and φ̂ of each), one seed, so no band; {_ONE_SEED_ZOOM}. No verdict reads "
                   "it: claims.md lists "
                   "both final lls under C1, to show what the choice moves.",
    "sensitivity": "; SAME's validation ll after each pass as one parameter at a time moves "
                   "from the main setting (one panel per parameter), one seed; scored on "
                   "validation documents (a share of the training documents, never test "
                   "documents), trained on the rest; the main setting is drawn thick. "
                   "Sensitivity only: settings are chosen by the tuning grid (tuning.md).",
    "crossover_study": "; each method's final held-out ll minus the better VB method's at each "
                   "(K, training fraction) point of the study, one seed; error bars on SAME: "
                   "each point's 95% interval of SAME − the better VB, from the main "
                   "comparison's seed spread (Welch's over its seeds at its own setting); a "
                   "ring: a point within seed noise for the finding of its colour; under each "
                   "panel, each finding as the study's table words it; a line joins one "
                   "method's points at one K (more training documents), the marker gives the "
                   "training fraction; a star: the main comparison's own runs (seed 0, their "
                   "budgets) at its K; vertical lines, named on the panel: where SAME "
                   "overtakes VB batch or both VB methods or comes within ε of CGS for good, "
                   "the main comparison's scale and the paper's NYTimes scale; a finding with "
                   "no crossing in the range studied is said under its panel; a panel per "
                   "held-out estimator.",
    "table1": "; per method: seconds per pass measured alone (median over the timing "
              "rounds), the paper's time to converge (seconds and passes to CGS@1000's held-out "
              "ll, or not within its budget) and, beside it, each run's own plateau, and final "
              "ll (means over seeds, the *_95 columns their 95% t half-widths), beside the "
              "paper's.",
    "time_to_quality": "; training seconds measured alone until the held-out ll first "
                       "reaches each target (the best final ll minus a margin), mean over "
                       "seeds where every seed reaches it (the seeds columns: how many did), "
                       "median over the timing rounds (range beside).",
    "table2": "; SAME's seconds per pass for each m (median over seeds, min and max beside), "
              "its ratio to the smallest m's, beside the paper's. C6 is judged from these "
              "seconds only where the sweep ran on a GPU (the paper's curve is a GPU's); "
              "elsewhere claims.md judges it from the newest committed GPU measurement.",
    "tuning": "; every configuration trained without the validation documents and scored on "
              "them, final ll",
    "topic_recovery": "; how well each method's φ recovers the generating topics of the "
                      "synthetic corpus, one seed.",
    "verdict_overview": "; rows: the paper's claims, columns: each dataset at its training "
                        "tokens per φ parameter, then the held-out estimator and the "
                        "configuration (as published, tuned) each verdict was judged under; a "
                        "claim judged once per dataset (C6 from the dataset's own GPU runs) or "
                        "across datasets (C9; C6 read from the committed GPU measurement) fills "
                        "the columns it covers; * a qualified verdict (claims.md says how).",
}


def per_estimator(metrics) -> str:
    """The caption's phrase for the columns of held-out estimators ``metrics`` (trace columns
    of :data:`~.verdicts.METRICS`, those drawn), naming only those."""
    from .verdicts import METRICS_SHORT

    names = [METRICS_SHORT[m] for m in metrics]
    if len(names) == 1:
        return f"one held-out estimator ({names[0]}: the traces have no other)"
    return (f"a column per held-out estimator ({', '.join(names)}), each claim being judged "
            "under each")


def figure_caption(name: str, setting: str, metrics=None, note: str | None = None) -> str:
    """The caption of figure (or table) ``name``: the workflow's setting (the runs it reads:
    seeds, m, sampler, configuration), what it shows, and the claims it bears on.

    metrics : the held-out estimators drawn (trace columns), where not all three: the caption
        names only those (:func:`per_estimator`)
    note : what the figure shows instead of its usual text (:data:`CAPTION_NOTES`), e.g. that
        it has nothing to draw
    """
    text = CAPTION_NOTES.get(name, "") if note is None else note
    if metrics is not None:
        text = text.replace(_PER_ESTIMATOR, per_estimator(metrics))
    return setting + text + bears_on(name)
