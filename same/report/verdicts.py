"""Verdicts as data: the outcomes a claim can have, the verdict object, and the claim rules.

Each rule in :data:`RULES` holds its numbers once: the claim functions of
:mod:`same.report.claims` read them (``RULES["C7"]["little_gain"]``) and the rule's text, printed
under every verdict in ``claims.md``, is formatted from them.  A :class:`Verdict` carries an
:class:`Outcome` and its qualifiers as fields; :mod:`same.report.render` writes it as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Mapping

from same.experiments.tuning import CONFIGURATIONS
from same.model.evaluate import L2R_PARTICLES

from .gpu import GPU_DIR
from .paper import CLAIMS, CONVERGED_EPS
from .stats import ALPHA, CGS_REFERENCE_ITERATION, CONFIDENCE, EPS_RANGE, FRAGILE_P

__all__ = ["Outcome", "Verdict", "ClaimRule", "RULES", "KNEE_M", "grade", "METRICS",
           "METRIC_REASON", "LL_CLAIMS", "VB_IMPLEMENTATIONS", "VB_CLAIMS", "METRICS_SHORT",
           "PRIMARY_METRIC", "PRIMARY_REASON", "FREE_CHOICES", "ORDER_CLAIMS"]

#: The held-out estimators every ll claim is judged under: trace column → its name in
#: claims.md, the primary first. Each gives its own verdict; they are never counted as votes.
METRICS = {"ll": "document completion (primary)",
           "ll_l2r": "left-to-right (Wallach et al. 2009)",
           "ll_bidmach": "the paper's metric (BIDMach-style ll)"}
#: Each estimator as tables and the overview figure name it.
METRICS_SHORT = {"ll": "document completion", "ll_l2r": "left-to-right",
                 "ll_bidmach": "the paper's metric"}
#: The estimator the findings lead with, and why.
PRIMARY_METRIC = "ll"
PRIMARY_REASON = ("it is deterministic and scores only tokens that θ was not fitted on (θ is "
                  "folded in on one half of each test document, the other half scored; "
                  "Wallach, Murray, Salakhutdinov, Mimno 2009 call it document completion). "
                  "Left-to-right (same paper; here its unbiased sequential form, Buntine 2009) "
                  "estimates log p(w_d | φ, α) of whole test documents itself and is the "
                  "arbiter where document completion and the paper's metric disagree, but at "
                  f"its {L2R_PARTICLES} particles it reads low (the log of an unbiased estimate "
                  "of p is biased down, by Jensen's inequality), by an amount that shrinks with "
                  "more particles and need not be the same for two models, so a small "
                  "difference between models under it is not settled by it alone (no run here "
                  "measures that bias: re-scoring a model with more particles, "
                  "same.model.evaluate.evaluate's n_particles, would). The paper's metric fits "
                  "θ on the very tokens it scores")
#: Why the estimators can rank methods differently: said once, where they disagree.
METRIC_REASON = ("the paper's metric fits θ on the very tokens it then scores, which rewards a "
                 "sharper φ; document completion folds θ in on one half of each test document "
                 "and scores the other half; left-to-right fits no θ at all: it integrates θ "
                 "out under its Dirichlet(α) prior, for whole test documents")
#: The claims judged on held-out ll (under each metric); the others are about time alone.
LL_CLAIMS = ("C1", "C2", "C3", "C4", "C5", "C7", "C8")
#: The VB implementations, each with its online and batch run labels (the claim functions
#: read ``vb_online`` and ``vb_batch``: another implementation is judged on a copy of the
#: traces with its labels renamed to those).
VB_IMPLEMENTATIONS = {"gensim": ("vb_online", "vb_batch"),
                      "scikit-learn": ("sklearn_online", "sklearn_batch")}
#: The claims that compare SAME with VB, judged once per VB implementation.
VB_CLAIMS = ("C1", "C2", "C4")


class Outcome(Enum):
    """What a claim's verdict rule concluded; the value is the text ``claims.md`` prints."""

    REPRODUCED = "reproduced"
    PARTLY = "partly"
    NOT_REPRODUCED = "not reproduced"
    NOT_TESTABLE = "not testable here"
    NOT_RUN = "not run in this profile"  # the claim's runs are switched off in the config


def grade(parts) -> Outcome:
    """REPRODUCED when every part of a claim holds, PARTLY when some do, else NOT_REPRODUCED."""
    parts = list(parts)
    if all(parts):
        return Outcome.REPRODUCED
    return Outcome.PARTLY if any(parts) else Outcome.NOT_REPRODUCED


@dataclass(frozen=True)
class ClaimRule:
    """A claim's verdict rule: its numbers, and the text they are formatted into.

    template : the rule in words, with ``{name}`` / ``{name:g}`` fields for every threshold
    thresholds : name → number, read by the claim's function (``rule["name"]``)
    """

    template: str
    thresholds: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "thresholds", MappingProxyType(dict(self.thresholds)))

    def __getitem__(self, name: str) -> float:
        return self.thresholds[name]

    @property
    def text(self) -> str:
        """The rule as ``claims.md`` prints it, with the thresholds filled in."""
        return self.template.format(**self.thresholds)


@dataclass(frozen=True)
class Verdict:
    """The verdict on one claim for one dataset (``dataset`` None: across datasets).

    outcome : the :class:`Outcome` of the claim's rule (:data:`RULES`)
    ours : lines giving our numbers
    numbers : the numbers behind the outcome, machine-readable
    by_time_to_quality : a timing claim judged by the seconds to a quality both methods reach,
        because the time to converge (to CGS's ll) was undefined
    cpu_for_gpu_claim : measured on a CPU while the paper's claim is about a GPU
    metric : the held-out metric (a key of :data:`METRICS`) the ll claims were judged under
    vb : the VB implementation (a key of :data:`VB_IMPLEMENTATIONS`) of :data:`VB_CLAIMS`
    fragile : where re-judging with another value of a free choice of the rule
        (:data:`FREE_CHOICES`) gives another outcome, as "choice = value: outcome"
    configuration : the methods' settings (a key of :data:`same.experiments.tuning.CONFIGURATIONS`): as
        published, or each method's step sizes tuned on validation documents; None for a
        claim judged once (C9)

    Qualifiers are fields with a default, so further axes (the held-out metric, the
    configuration a method ran in) can be added as fields without touching the claims that
    do not set them.
    """

    claim: str
    dataset: str | None
    outcome: Outcome
    ours: tuple[str, ...]
    numbers: dict = field(default_factory=dict)
    by_time_to_quality: bool = False
    cpu_for_gpu_claim: bool = False
    metric: str | None = None  # a key of METRICS; None for claims about time alone
    vb: str | None = None  # a key of VB_IMPLEMENTATIONS for the claims comparing SAME with VB
    configuration: str | None = None  # a key of same.experiments.tuning.CONFIGURATIONS; None: not per run
    fragile: tuple[str, ...] = ()  # "ε = 0.005: partly", where a free choice flips the outcome

    @property
    def title(self) -> str:
        """The claim's short statement (:data:`~same.report.paper.CLAIMS`)."""
        return CLAIMS[self.claim][0]

    @property
    def paper(self) -> str:
        """What the paper shows for the claim."""
        return CLAIMS[self.claim][1]

    @property
    def rule(self) -> str:
        """The claim's verdict rule in words, its thresholds filled in from :data:`RULES`."""
        return RULES[self.claim].text

    @property
    def qualifiers(self) -> tuple[str, ...]:
        """The qualifier fields that are set, as the phrases ``claims.md`` prints."""
        out = []
        if self.by_time_to_quality:
            out.append("by time to quality")
        if self.cpu_for_gpu_claim:
            out.append("CPU here; the paper's claim is about GPU")
        if self.fragile:
            out.append("fragile: " + ", ".join(self.fragile))
        return tuple(out)

    @property
    def covers(self) -> tuple[str, ...] | None:
        """The datasets a verdict judged once across datasets stands for, where it names them
        (``numbers["datasets"]``: C6 read from the GPU measurement for the datasets whose m
        sweep ran on a CPU); None: every dataset (C9), or a per-dataset verdict's own."""
        named = self.numbers.get("datasets") if isinstance(self.numbers, dict) else None
        return tuple(named) if self.dataset is None and named else None

    @property
    def gpu_device(self) -> str | None:
        """The device of the committed GPU measurement the verdict was read from (C6, when the
        dataset's own m sweep did not run on a GPU), else None: such a verdict is not about
        the dataset's runs."""
        g = self.numbers.get("gpu") if isinstance(self.numbers, dict) else None
        return g.get("device") if isinstance(g, dict) else None

    @property
    def metric_name(self) -> str | None:
        """The metric's name as ``claims.md`` prints it (None for claims about time alone)."""
        return None if self.metric is None else METRICS[self.metric]

    @property
    def configuration_name(self) -> str | None:
        """The configuration as ``claims.md`` prints it ("as published", "tuned")."""
        return None if self.configuration is None else CONFIGURATIONS[self.configuration]

    @property
    def verdict(self) -> str:
        """The verdict as printed: the outcome, then each qualifier in parentheses."""
        return " ".join([self.outcome.value] + [f"({q})" for q in self.qualifiers])


#: The paper's m where time per pass and ll per pass bend (C6, C7).
KNEE_M = 100

_WELCH = ("by Welch's t-test over seeds (two-sided, α = {alpha:g}; means printed with "
          "{confidence:.0%} Student-t intervals): ")
_CONV = ("converged = the first checkpoint after which a run stays within ε = {eps:g} of its "
         "own final ll for the rest of its budget (the paper's Convergence section reads 'converged after "
         "4–5 passes' off each method's own curve and defines no rule for it; its one stated "
         "definition, reaching CGS's ll after 1000 iterations, is for the time to converge of "
         "Table 1, which C4 and C5 use); ")
_PAPER_CONV = ("converged = the paper's definition (§5.2, Table 1): the first time a run's "
               "held-out ll reaches standard CGS's after {cgs_iteration:g} iterations (the mean "
               "over CGS's seeds), in training seconds measured with the machine alone (the "
               "quality traces give the passes to it, the timing rule the seconds those passes "
               "take alone; median over its rounds); CGS itself converges by that definition at "
               "iteration {cgs_iteration:g} (the paper's Table 1: 1000 iterations' seconds); a "
               "seed that never reaches it is 'not within its budget' and counts with its whole "
               "budget's seconds, a lower bound of its time to converge (so a test that it is "
               "slower stays conservative); each run's own plateau (within ε = {eps:g} of "
               "its final ll) is given beside, not judged. By Welch's t-test over seeds "
               "(two-sided, α = {alpha:g}) on the seconds: ")

#: Each rule's free choices and the values the robustness check re-judges it with (one at a
#: time, the others at the rule's own); a verdict that moves is marked fragile: ε and the
#: reference checkpoint of a convergence rule, the level α its Welch tests are read at
#: (:data:`~same.report.stats.FRAGILE_P`: a deciding p between 0.01 and 0.10 makes it
#: fragile), and the checkpoint read as "final" (the third-last: a verdict that holds only
#: at the very last checkpoint is fragile). C6, judged from a GPU measurement's seconds of one
#: timed pass of one run, is re-judged on the same pass's wall-clock seconds (``gpu_seconds``:
#: the host's clock, its staging included, where the rule reads the device's; a measurement
#: without them has no such choice). A rule that compares a mean over seeds with a threshold
#: (C2's passes, C3's CGS iterations) is re-judged with each such mean read at the end of its
#: 95 % t interval that works against the claim's part, then at the end that works for it
#: (``bound``): a threshold inside the interval decides nothing by itself.
FREE_CHOICES = {
    "C1": {"alpha": FRAGILE_P, "checkpoint": (-3,)},
    "C2": {"eps": EPS_RANGE, "alpha": FRAGILE_P, "bound": ("against", "for")},
    "C3": {"eps": EPS_RANGE, "reference": ("final", "best"), "alpha": FRAGILE_P,
           "checkpoint": (-3,), "bound": ("against", "for")},
    "C4": {"alpha": FRAGILE_P},
    "C5": {"alpha": FRAGILE_P},
    "C6": {"gpu_seconds": ("wall",)},
    "C7": {"alpha": FRAGILE_P, "checkpoint": (-3,)},
    "C8": {"alpha": FRAGILE_P, "checkpoint": (-3,)},
}
#: The claims also re-judged in the other document order (their online methods' runs in the
#: other order, ``*_other_order``, in place of theirs): the main comparison's. C7 and C8 read
#: the m sweep's and the schedules' runs, which run in the stored order only.
ORDER_CLAIMS = ("C1", "C2", "C3", "C4", "C5")

#: claim id → its verdict rule.  Every number a rule states is a threshold here.
RULES: dict[str, ClaimRule] = {
    "C1": ClaimRule(
        _WELCH + "reproduced when SAME's mean final ll is significantly above both VB "
        "methods'; partly when above one",
        {"alpha": ALPHA, "confidence": CONFIDENCE}),
    "C2": ClaimRule(
        _CONV + "by Welch's t-test over seeds (two-sided, α = {alpha:g}): reproduced when "
        "SAME and VB online converge within ≤ {max_passes:g} passes (means over seeds) and VB "
        "batch needs significantly more passes than each and ≥ {batch_factor:g}× as many; "
        "partly when only that significant order holds; where a mean's 95% t interval "
        "holds its threshold, the verdict is re-judged at both ends (fragile if it moves). A "
        "run that peaks and declines is reported as such",
        {"eps": CONVERGED_EPS, "max_passes": 6, "batch_factor": 3, "alpha": ALPHA}),
    "C3": ClaimRule(
        "three parts (early CGS lead and SAME higher at the end, each by Welch's t-test over "
        "seeds at α = {alpha:g}; CGS converged — within ε = {eps:g} of its final ll for the "
        "rest of its run — only after ≥ {cgs_iterations:g} iterations, by the mean over "
        "seeds, re-judged at both ends of its 95% t interval: fragile if that moves it); all "
        "→ reproduced, some → partly",
        {"eps": CONVERGED_EPS, "cgs_iterations": 500, "alpha": ALPHA}),
    "C4": ClaimRule(
        _PAPER_CONV + "reproduced when SAME reaches it in every seed and {max_ratio:g}× online "
        "VB's seconds are significantly above SAME's; not reproduced when SAME does not reach "
        "it or is not significantly under {max_ratio:g}× online VB's; not testable when online "
        "VB never reached it in some seed and {max_ratio:g}× its budget does not show it",
        {"cgs_iteration": CGS_REFERENCE_ITERATION, "eps": CONVERGED_EPS, "alpha": ALPHA,
         "max_ratio": 3}),
    "C5": ClaimRule(
        _PAPER_CONV + "reproduced when SAME reaches it in every seed and CGS and VB batch each "
        "take significantly more than {min_ratio:g}× SAME's seconds; partly when SAME is "
        "significantly faster than at least one; not reproduced when SAME does not reach it "
        "or is faster than neither. Where CGS reaches SAME's final ll, and when, is said "
        "beside",
        {"cgs_iteration": CGS_REFERENCE_ITERATION, "eps": CONVERGED_EPS, "alpha": ALPHA,
         "min_ratio": 50}),
    "C6": ClaimRule(
        "on a GPU: t({knee_m:g})/t({low_m:g}) ≤ {max_flat:g} and t({high_m:g})/t({knee_m:g}) ≥ "
        "{min_steep:g}, read from the m sweep's runs when they ran on CuPy, else from the "
        "newest GPU measurement committed under " + GPU_DIR + "/ (benchmarks/gpu_same.py: the "
        "per-nonzero sampler on a synthetic corpus of a paper shape; not testable when none "
        "measured m = {low_m:g}, {knee_m:g} and {high_m:g}). A CPU's own m sweep is not judged: "
        "the paper's flat-then-steep curve comes from a GPU whose fixed per-pass costs (SDDMM, "
        "memory traffic) dominate up to m = {knee_m:g}, while a CPU sampler's Poisson draws "
        "make its cost grow with m from the start",
        {"low_m": 1, "knee_m": KNEE_M, "high_m": 500, "max_flat": 2, "min_steep": 1.3}),
    "C7": ClaimRule(
        _WELCH + "no step up in m ≤ {knee_m:g} significantly lowers the final ll, m = "
        "{knee_m:g} is significantly above the smallest m, and no m > {knee_m:g} is "
        "significantly below m = {knee_m:g} (a significant loss counts against the claim) "
        "nor significantly above it by more than {little_gain:g}",
        {"alpha": ALPHA, "confidence": CONFIDENCE, "knee_m": KNEE_M,
         "little_gain": CONVERGED_EPS}),
    "C8": ClaimRule(
        _WELCH + "in the paper's words: no schedule's final ll is significantly above "
        "constant m's (a significant loss is reported, and does not count against the claim, "
        "which is only that no schedule is clearly better), and inverse-linear has the highest "
        "mean ll after the first pass, significantly above constant's",
        {"alpha": ALPHA, "confidence": CONFIDENCE}),
    "C9": ClaimRule(
        "across datasets, seconds per token per pass within {max_spread_datasets:g}×; on "
        "synthetic sizes, within {max_spread_sizes:g}× and a linear fit with R² ≥ {min_r2:g} "
        "(partly: within {max_spread_partly:g}×)",
        {"max_spread_datasets": 2, "max_spread_sizes": 1.3, "min_r2": 0.98,
         "max_spread_partly": 2}),
}
