"""The quantities every verdict, table and figure reads, each computed by one function here.

- seed statistics: a mean with its Student-t interval (:func:`t_interval`), two runs compared
  by Welch's t-test at :data:`ALPHA` (:func:`welch`);
- convergence each method defines for itself (:func:`convergence`): the first checkpoint
  after which a run stays within ε of its own final ll for the rest of its budget, with the
  peak and the decline after it reported (a curve that peaks and falls back is judged by the
  same rule);
- time to quality (:func:`ladder`, :func:`seconds_to`): one ladder of absolute held-out ll
  targets fixed below the best method's mean final ll, never from the worst method, shared
  by every table and claim.

ll in nats/token, seconds of training (evaluation excluded).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from .paper import CONVERGED_EPS
from .traces import final_lls, reach_seconds

__all__ = ["ALPHA", "CONFIDENCE", "EPS_RANGE", "LADDER_GAPS", "PRIMARY_GAP", "t_interval",
           "interval_text", "Comparison", "welch", "Convergence", "convergence", "converged",
           "ladder", "primary_rung", "seconds_to", "runs_of", "memoized_runs", "cgs_reference",
           "CGS_REFERENCE_ITERATION", "FRAGILE_P", "passes_to", "converge_to",
           "one_seed_half", "seed_noise"]

#: Two-sided level of every Welch test a verdict reads.
ALPHA = 0.05
#: Coverage of every interval printed beside a mean (Student t over seeds).
CONFIDENCE = 0.95
#: The ε values a verdict's convergence rule is re-judged under (the middle one is the rule's).
EPS_RANGE = (0.005, CONVERGED_EPS, 0.02)
#: Rungs of the time-to-quality ladder: this far below the best method's mean final ll.
LADDER_GAPS = (0.01, 0.02, 0.05, 0.1, 0.2)
#: The rung a claim reads unless its robustness check varies it.
PRIMARY_GAP = 0.05
#: The levels a verdict's tests are re-read at by the fragility check: a verdict whose
#: outcome moves when its deciding test is read at 0.01 or at 0.10 is fragile (its p lies
#: between them).
FRAGILE_P = (0.01, 0.10)


def t_interval(a, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, low, high) of the Student-t interval of the mean of per-seed values ``a``;
    low = high = nan for fewer than two seeds (no interval without a spread)."""
    from scipy import stats

    a = np.asarray(a, dtype=float)
    m = float(a.mean())
    if len(a) < 2:
        return m, float("nan"), float("nan")
    half = float(stats.t.ppf(0.5 + confidence / 2, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a)))
    return m, m - half, m + half


def one_seed_half(sa: tuple[float, int], sb: tuple[float, int],
                  confidence: float = CONFIDENCE) -> float:
    """Half-width of the ``confidence`` interval of a difference of two one-seed values whose
    seed-to-seed spreads are ``sa`` and ``sb`` ((standard deviation, seeds) each, measured
    elsewhere: the main comparison's): t · √(s_a² + s_b²), the t quantile at the fewer seeds."""
    from scipy import stats

    n = min(sa[1], sb[1])
    return float(stats.t.ppf(0.5 + confidence / 2, n - 1) * np.hypot(sa[0], sb[0]))


def seed_noise(df, label: str, y: str = "ll") -> float | None:
    """The seed noise of a one-seed difference between two runs each as noisy as ``label``'s
    runs of ``df`` (its final ``y`` over seeds): :func:`one_seed_half` with that spread on both
    sides; None with fewer than two seeds (the noise is unknown)."""
    a = final_lls(df, label, y=y) if y in df.columns else np.array([])
    if len(a) < 2:
        return None
    spread = (float(np.std(a, ddof=1)), len(a))
    return one_seed_half(spread, spread)


def interval_text(a, nd: int = 4, name: str | None = None) -> str:
    """"name mean ± half-width (95% t, n seeds)"; "(1 seed)" without an interval."""
    m, lo, hi = t_interval(a)
    head = (f"{name} " if name else "") + f"{m:.{nd}f}"
    if np.isnan(lo):
        return head + " (1 seed, no interval)"
    return head + f" ± {(hi - lo) / 2:.{nd}f} ({CONFIDENCE:.0%} t, {len(a)} seeds)"


@dataclass(frozen=True)
class Comparison:
    """Welch's t-test of mean(a) − mean(b) (:func:`welch`) at level ``alpha``."""

    diff: float  #: mean(a) − mean(b)
    p: float  #: two-sided p-value (nan when either side has one seed or no spread)
    alpha: float = ALPHA  #: the level the verdict reads it at (the fragility check varies it)

    @property
    def significant(self) -> bool:
        """p < ``alpha`` (False when p is undefined)."""
        return bool(self.p < self.alpha)

    @property
    def higher(self) -> bool:
        """a significantly above b."""
        return self.significant and self.diff > 0

    @property
    def lower(self) -> bool:
        """a significantly below b."""
        return self.significant and self.diff < 0

    def text(self, nd: int = 4) -> str:
        p = "p undefined" if np.isnan(self.p) else f"Welch p = {self.p:.2g}"
        return f"{self.diff:+.{nd}f} ({p})"


def welch(a, b, alpha: float = ALPHA) -> Comparison:
    """Welch's unequal-variance t-test (scipy.stats.ttest_ind, equal_var=False) of per-seed
    values ``a`` against ``b``, read at level ``alpha``; identical constant samples give p = 1
    (no difference) and distinct constant ones p = 0."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return Comparison(diff, float("nan"), alpha)
    if a.std() == 0 and b.std() == 0:
        return Comparison(diff, 1.0 if diff == 0 else 0.0, alpha)
    import warnings

    with warnings.catch_warnings():  # nearly equal seeds: scipy warns, its p stays right
        warnings.simplefilter("ignore", RuntimeWarning)
        return Comparison(diff, float(stats.ttest_ind(a, b, equal_var=False).pvalue), alpha)


@dataclass(frozen=True)
class Convergence:
    """How one run converged by its own rule (:func:`convergence`)."""

    passes: float  #: the pass (CGS: iteration) of the first checkpoint it stays within ε after
    seconds: float  #: training seconds at that checkpoint
    final: float  #: ll at the last checkpoint
    peak: float  #: the highest ll of any checkpoint
    peak_pass: float  #: where the peak was
    budget_passes: float  #: the last checkpoint's pass

    @property
    def decline(self) -> float:
        """How far the run fell from its peak by the end (≥ 0)."""
        return self.peak - self.final


def convergence(run, eps: float = CONVERGED_EPS, y: str = "ll") -> Convergence:
    """A run has converged at the first checkpoint after which every checkpoint of its budget
    stays within ``eps`` of its final ll (|ll − final| ≤ eps); a run that peaks and declines
    by more than ``eps`` converges only once it is within ``eps`` of where it ends.

    run : one run's trace rows (columns pass, train_seconds and ``y``)
    """
    r = run.sort_values("pass")
    ll = r[y].to_numpy(dtype=float)
    final = ll[-1]
    outside = np.nonzero(np.abs(ll - final) > eps)[0]
    i = 0 if not len(outside) else int(outside[-1]) + 1
    top = int(np.argmax(ll))
    passes = r["pass"].to_numpy(dtype=float)
    return Convergence(float(passes[i]), float(r["train_seconds"].iloc[i]), float(final),
                       float(ll[top]), float(passes[top]), float(passes[-1]))


#: The paper's convergence reference: standard CGS after this many iterations (§5.2, Table 1:
#: "converged" = reached the held-out ll of CGS after 1000 iterations).
CGS_REFERENCE_ITERATION = 1000


def cgs_reference(df, label: str = "cgs", iteration: int = CGS_REFERENCE_ITERATION,
                  y: str = "ll") -> np.ndarray | None:
    """Per seed of ``label`` (CGS): its held-out ll after ``iteration`` Gibbs iterations
    (linear between checkpoints), the reference whose mean defines convergence in the paper;
    None when CGS is absent or ran fewer iterations."""
    runs = runs_of(df, label)
    if not runs or any(float(r["iteration"].max()) < iteration for r in runs):
        return None
    out = []
    for r in runs:
        r = r.sort_values("iteration")
        out.append(float(np.interp(iteration, r["iteration"].to_numpy(dtype=float),
                                   r[y].to_numpy(dtype=float))))
    return np.array(out)


#: While :func:`memoized_runs` is open: id(frame) → (the frame, label → its runs).
_RUNS: dict | None = None


@contextlib.contextmanager
def memoized_runs():
    """Within it, :func:`runs_of` splits each frame into runs once (by label, then seed) and
    hands the same run frames out again: judging a dataset re-judges every claim under each
    free choice and metric, asking for the same runs hundreds of times. The frames are held
    until it closes (so no id is reused), and must not be changed in place meanwhile (the
    verdicts read traces, never write them); a run frame handed out is never changed either
    (its readers sort into new frames)."""
    global _RUNS
    outer = _RUNS
    if outer is None:
        _RUNS = {}
    try:
        yield
    finally:
        if outer is None:
            _RUNS = None


def runs_of(df, label: str):
    """The runs of ``label``: one trace per seed, in seed order."""
    if _RUNS is None:
        return [r for _, r in df[df["label"] == label].groupby("seed")]
    hit = _RUNS.get(id(df))
    if hit is None:
        hit = _RUNS[id(df)] = (df, {lab: [r for _, r in g.groupby("seed")]
                                    for lab, g in df.groupby("label", sort=False)})
    return list(hit[1].get(label, ()))


def converged(df, label: str, eps: float = CONVERGED_EPS) -> list[Convergence]:
    """:func:`convergence` of every seed of ``label``."""
    return [convergence(r, eps) for r in runs_of(df, label)]


def ladder(df, labels) -> dict[float, str]:
    """The time-to-quality targets: {absolute ll: its name}, one rung per gap of
    :data:`LADDER_GAPS` below the best mean final ll of any of ``labels`` (the best method
    fixes the ladder, so no target depends on the worst method)."""
    finals = {lab: final_lls(df, lab) for lab in labels}
    best = max(float(a.mean()) for a in finals.values() if len(a))
    return {round(best - g, 4): f"best − {g:g}" for g in LADDER_GAPS}


def primary_rung(df, labels) -> tuple[float, str]:
    """(target, name) of the ladder's rung :data:`PRIMARY_GAP` below the best mean final ll:
    the rung claims and the findings read."""
    rungs = ladder(df, labels)
    target = next(t for t, name in rungs.items() if name == f"best − {PRIMARY_GAP:g}")
    return target, rungs[target]


def _reach(df, label: str, target: float, column: str) -> np.ndarray:
    """Per seed of ``label``: ``column`` (training seconds, or passes) where the run first
    reaches ``target``, interpolated linearly between checkpoints
    (:func:`~same.report.traces.reach_seconds`); inf if never within its budget."""
    out = []
    for r in runs_of(df, label):
        r = r.sort_values("pass")
        x = reach_seconds(r[column], r["ll"], target)[1]
        out.append(np.inf if x is None else x)
    return np.array(out, dtype=float)


def converge_to(df, label: str, target: float, column: str = "train_seconds",
                reference: str = "cgs") -> tuple[np.ndarray, np.ndarray]:
    """Per seed of ``label``: ``column`` (training seconds, or passes) where the run converges in
    the paper's sense (§5.2: reaches the held-out ll ``target`` of standard CGS after
    :data:`CGS_REFERENCE_ITERATION` iterations), and whether it does within its budget.

    CGS itself (``reference``) converges by that definition at iteration
    :data:`CGS_REFERENCE_ITERATION` (the paper's Table 1: CGS's 225,000 s to converge are its
    1000 iterations of 225 s), so each of its seeds is read there, not where it first crosses
    the mean over seeds.  Another method's seed is read where it first reaches ``target``
    (:func:`seconds_to`); one that never does has its whole budget's value, a lower bound of
    its time to converge (censored: a test that it is slower stays conservative).

    Returns
    -------
    (values, reached) : float64 and bool arrays, one entry per seed in seed order.
    """
    if label == reference:
        ref = cgs_reference(df, label, y=column)
        if ref is not None:
            return ref, np.ones(len(ref), dtype=bool)
    values = _reach(df, label, target, column)
    reached = np.isfinite(values)
    if not reached.all():
        budget = np.array([float(r.sort_values("pass")[column].iloc[-1])
                           for r in runs_of(df, label)])
        values = np.where(reached, values, budget)
    return values, reached


def passes_to(df, label: str, target: float) -> np.ndarray:
    """Per seed of ``label``: passes (CGS: iterations) to first reach ``target``,
    interpolated as :func:`seconds_to` interpolates seconds; inf if never reached."""
    return _reach(df, label, target, "pass")


def seconds_to(df, label: str, target: float) -> np.ndarray:
    """Per seed of ``label``: training seconds to first reach ``target`` (interpolated
    linearly between checkpoints, :func:`~same.report.traces.reach_seconds`), inf if the seed
    never reaches it within its budget."""
    return _reach(df, label, target, "train_seconds")
