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

from ..tuning import CONFIGURATIONS
from .measures import NOISE_STANDARD_ERRORS
from .paper import CLAIMS, CONVERGED_EPS

__all__ = ["Outcome", "Verdict", "ClaimRule", "RULES", "KNEE_M", "grade", "METRICS",
           "METRIC_REASON", "LL_CLAIMS", "VB_IMPLEMENTATIONS", "VB_CLAIMS", "METRICS_SHORT"]

#: The held-out metrics every ll claim is judged under: trace column → its name in claims.md.
METRICS = {"ll": "document completion", "ll_bidmach": "the paper's metric (BIDMach-style ll)"}
#: Each metric as tables and the overview figure name it.
METRICS_SHORT = {"ll": "document completion", "ll_bidmach": "the paper's metric"}
#: Why the two metrics can rank methods differently: said once, where they disagree.
METRIC_REASON = ("the paper's metric fits θ on the very tokens it then scores, which rewards a "
                 "sharper φ; document completion folds θ in on one half of each test document "
                 "and scores the other half")
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
    configuration : the methods' settings (a key of :data:`same.tuning.CONFIGURATIONS`): as
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
    configuration: str | None = None  # a key of same.tuning.CONFIGURATIONS; None: not per run

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
        return tuple(out)

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

_NOISE = "with noise = {noise_se:g} standard errors of a difference of seed means: "

#: claim id → its verdict rule.  Every number a rule states is a threshold here.
RULES: dict[str, ClaimRule] = {
    "C1": ClaimRule(
        "reproduced when SAME's worst seed beats both VB methods' best seed; partly when its "
        "mean beats at least one"),
    "C2": ClaimRule(
        "common target for all three methods (the lowest final ll of any seed of the three, "
        "less 0.01); reproduced when SAME and VB online need ≤ "
        "{max_passes:g} passes and VB batch ≥ {batch_factor:g}× as many (or never reaches "
        "it); partly when only the order holds",
        {"max_passes": 6, "batch_factor": 3}),
    "C3": ClaimRule(
        "three parts (early CGS lead, SAME higher at the end, CGS ≥ {cgs_iterations:g} "
        "iterations to converge); all → reproduced, some → partly",
        {"cgs_iterations": 500}),
    "C4": ClaimRule(
        "both converge: reproduced when SAME's time is under {max_ratio:g}× online VB's; only "
        "SAME converges: reproduced; otherwise the same {max_ratio:g}× rule on the seconds each "
        "needs to reach the lowest final ll of any seed of the two (time to quality)",
        {"max_ratio": 3}),
    "C5": ClaimRule(
        "reproduced when CGS and VB batch both take ≥ {min_ratio:g}× SAME's time to converge (a "
        "method that never reaches the target counts with its whole budget, a lower bound); "
        "partly when SAME is faster than at least one; not reproduced when SAME is slower than "
        "both. When SAME never reaches CGS's ll, the times are to SAME's own lowest final ll "
        "over seeds (time to quality)",
        {"min_ratio": 50}),
    "C6": ClaimRule(
        "on a GPU: t({knee_m:g})/t({low_m:g}) ≤ {max_flat:g} and t({high_m:g})/t({knee_m:g}) ≥ "
        "{min_steep:g}. On the CPU not testable: the paper's flat-then-steep curve comes from a "
        "GPU whose fixed per-pass costs (SDDMM, memory traffic) dominate up to m = {knee_m:g}, "
        "while a CPU sampler's Poisson draws make its cost grow with m from the start",
        {"low_m": 1, "knee_m": KNEE_M, "high_m": 500, "max_flat": 2, "min_steep": 1.3}),
    "C7": ClaimRule(
        _NOISE + "no step up in m ≤ {knee_m:g} lowers the mean final ll by more than the noise, "
        "m = {knee_m:g} beats the smallest m by more than the noise, and every m > {knee_m:g} "
        "gains at most max({little_gain:g}, noise) over m = {knee_m:g}",
        {"noise_se": NOISE_STANDARD_ERRORS, "knee_m": KNEE_M, "little_gain": CONVERGED_EPS}),
    "C8": ClaimRule(
        _NOISE + "no schedule's mean final ll exceeds constant m's by more than the noise, and "
        "inverse-linear has the highest mean ll after the first pass, above constant's by more "
        "than the noise",
        {"noise_se": NOISE_STANDARD_ERRORS}),
    "C9": ClaimRule(
        "across datasets, seconds per token per pass within {max_spread_datasets:g}×; on "
        "synthetic sizes, within {max_spread_sizes:g}× and a linear fit with R² ≥ {min_r2:g} "
        "(partly: within {max_spread_partly:g}×)",
        {"max_spread_datasets": 2, "max_spread_sizes": 1.3, "min_r2": 0.98,
         "max_spread_partly": 2}),
}
