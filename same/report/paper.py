"""What the paper reports (Zhao, Jiang, Canny 2014, §5): its tables, and the claims with their statements."""

from __future__ import annotations

__all__ = ["PAPER_TABLE1", "PAPER_TABLE1_OTHER", "PAPER_TABLE2", "CLAIMS", "METHOD_NAMES",
           "CONVERGED_EPS", "STUDY_CGS_EPS", "IMPLEMENTATIONS"]

#: Table 1 of the paper (seconds; NYTimes, K=256; GTX-690 / E5-2660): label → (system,
#: seconds per pass, seconds to converge).
PAPER_TABLE1 = {
    "same": ("SAME GS (BIDMach, GPU)", 30, 90),
    "vb_online": ("VB online (BIDMach, GPU)", 20, 40),
    "vb_batch": ("VB batch (BIDMach, GPU)", 20, 400),
    "cgs": ("CGS (Griffiths, CPU)", 225, 225000),
}
#: Rows of Table 1 without a counterpart here.
PAPER_TABLE1_OTHER = [("VB batch (Blei, CPU)", 12600, 252000),
                      ("GPU CGS (Yan et al., K=128)", 5.4, 5400)]
#: Table 2 of the paper: seconds per pass vs m (NYTimes, K=256, GPU).
PAPER_TABLE2 = {500: 50, 100: 30, 20: 25, 5: 23, 1: 20}
#: A run has "converged" (C2) at the first pass whose ll is within this of its final ll.
CONVERGED_EPS = 0.01
#: The crossover study counts SAME as matching CGS where it ends within this of CGS's ll at its
#: budget (nats/token).
STUDY_CGS_EPS = 0.01
#: Legend and table names of the methods of the main comparison, in its order.
METHOD_NAMES = {"same": "SAME Gibbs", "vb_online": "VB online (gensim)",
                "vb_batch": "VB batch (gensim)", "sklearn_online": "VB online (scikit-learn)",
                "sklearn_batch": "VB batch (scikit-learn)", "cgs": "CGS (tomotopy)"}

#: The implementation behind each method's timings (what a per-pass cost measures).
IMPLEMENTATIONS = {"same": "numba SAME", "vb_online": "gensim", "vb_batch": "gensim",
                   "sklearn_online": "scikit-learn", "sklearn_batch": "scikit-learn",
                   "cgs": "tomotopy"}

#: claim id → (short statement, what the paper shows)
CLAIMS = {
    "C1": ("SAME reaches a higher held-out ll than online and batch VB within 20 passes",
           "SAME above both VB curves on NYTimes and PubMed (Fig. 1a, 1b)"),
    "C2": ("SAME and online VB converge in a few passes, batch VB needs about 20",
           "SAME and VB online 4–5 passes (NYTimes), 2 (PubMed); VB batch ~20"),
    "C3": ("CGS needs 1000–2000 passes; per sample per word CGS leads early, SAME ends higher",
           "Fig. 1c (NYTimes): CGS ahead at first, SAME m=100 higher after 20 passes; CGS takes "
           "1000–2000 passes"),
    "C4": ("SAME costs under 3× online VB's time to converge",
           "(GPU, NYTimes): SAME 90 s vs VB online 40 s to converge (2.25×); 30 vs 20 s per pass"),
    "C5": ("SAME converges ~100× faster than CPU CGS and batch VB (and faster than GPU CGS)",
           "CGS 225000 s, VB batch (BIDMach) 400 s, GPU CGS 5400 s vs SAME 90 s"),
    "C6": ("time per pass grows slowly with m up to 100, steeply beyond",
           "20, 23, 25, 30, 50 s for m = 1, 5, 20, 100, 500 (ratios 1.5 and 1.67)"),
    "C7": ("larger m converges better per pass; little gain beyond m = 100",
           "Fig. 2a, ll improves with m up to 100, marginally beyond"),
    "C8": ("no annealing schedule clearly beats constant m; inverse-linear starts faster",
           "Fig. 2b"),
    "C9": ("cost grows linearly with corpus size",
           "sequential minibatches, so time per pass ∝ tokens"),
}
