"""The crossover study's findings in words: one phrase per finding (:data:`FINDINGS`), shared by
the study's table, claims.md and the study's figure, so the three say the same thing."""

from __future__ import annotations

from .paper import STUDY_CGS_EPS
from .traces import per_parameter_text as _tpp

__all__ = ["FINDINGS", "describe_crossover"]

#: Each finding of :func:`~.study.study_findings`: its key, what holds above its threshold (the
#: phrase the table and claims.md print, :func:`describe_crossover`), its colour.
FINDINGS = (("vb_batch", "SAME above VB batch", "#009E73"),
            ("both_vb", "SAME above both VB methods (C1)", "#0072B2"),
            ("cgs", f"SAME within {STUDY_CGS_EPS} nats/token of CGS (C3)", "#D55E00"))


def describe_crossover(c: dict, what: str) -> str:
    """One phrase for a :func:`crossover` result (``what``: what holds above the threshold),
    with the points within seed noise and what judged the noise, where it has them."""
    return _describe(c, what) + _noise_text(c)


def _describe(c: dict, what: str) -> str:
    if c["status"] == "always":
        return f"{what} at every point (from {_tpp(c['from_scale'])} tokens/parameter)"
    if c["status"] == "never":
        top = c["below_scale"]
        undecided = any(s == top for s, _ in c.get("within") or ())
        at_top = (f"undetermined at the largest scale studied ({_tpp(top)} tokens/parameter: "
                  "within seed noise)" if undecided else
                  f"not at the largest scale studied ({_tpp(top)} tokens/parameter)")
        if not c["exceptions"]:
            return (f"{what} at no point studied (up to {_tpp(top)} tokens/parameter)"
                    if not undecided else f"{what} at no point studied above the noise; "
                    + at_top)
        return (f"{what} {at_top}; it holds at {len(c['exceptions'])} smaller point(s)")
    text = (f"{what} from {_tpp(c['from_scale'])} tokens/parameter on (not at "
            f"{_tpp(c['below_scale'])}; crossing ≈ {_tpp(c['at_scale'])})")
    if c["exceptions"]:
        text += (f"; also at {len(c['exceptions'])} smaller point(s): "
                 + ", ".join(_tpp(s) for s, _ in c["exceptions"]))
    return text


def _noise_text(c: dict) -> str:
    """The points within seed noise, and what the noise was judged by (``c["basis"]``, set by
    :func:`study_findings`); nothing for a bare :func:`crossover`."""
    text = ""
    if c.get("within"):
        text += "; within seed noise at " + ", ".join(_tpp(s) for s, _ in c["within"])
    return text + (f" ({c['basis']})" if c.get("basis") else "")
