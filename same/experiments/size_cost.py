"""Cost vs corpus size (claim C9): SAME seconds per pass on synthetic corpora of growing size.

Corpora are :func:`same.data.synthetic.shaped_corpus` draws with a base shape's
documents-per-word statistics and ``factor`` × its documents (and nonzeros,
tokens), so every size has the same per-document make-up.  The base is a UCI corpus's
registered shape (``--base kos``: no file is read) or a split's training documents
(``--split results/mine/split.npz``: a corpus of the workflow's own, :func:`split_shape`).  Every size is trained for
``passes`` passes (at least 4), the sizes' passes interleaved (pass 1 of every size, then
pass 2 of every size, …), so that a slow spell of a shared machine falls on all sizes
alike rather than on one; a size's seconds per pass is the fastest of the second half of its
passes (steady state: a pass costs less as θ and φ sharpen, most in the first passes; the
fastest, as ``timeit`` does, because a shared machine's noise only ever adds time).
JIT compilation is never timed (:attr:`same.model.sampler.SameLDA.compile_seconds_`).

    python -m same.experiments.size_cost --out results/scaling/same.json --factors 1 2 4 8
    python -m same.experiments.size_cost --split results/mine/split.npz --name mine \
        --out results/mine/scaling/same_cpu.json --factors 0.5 1 2
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from same.io.cli import ArgumentParser, real_number, whole_number

from .timing import DEFAULT_ATTEMPTS, DEFAULT_QUIET_WAIT

__all__ = ["measure", "linearity", "split_shape", "load_result", "BENCHMARK"]

#: The result's ``benchmark``: what an earlier result at ``--out`` must say to be replaced.
BENCHMARK = "SAME seconds per pass vs corpus size (synthetic)"



def split_shape(path) -> tuple[int, int, int, int]:
    """(documents, words, nonzeros, tokens) of a split's training documents
    (:func:`same.data.split.load_split`; its errors are one line naming the file)."""
    from same.data.split import load_split

    train = load_split(path, mmap=True).train
    return (int(train.shape[0]), int(train.shape[1]), int(train.nnz),
            int(np.asarray(train.data, dtype=np.int64).sum()))


#: Seconds the benchmark waits for other work to end before its measured passes, and the
#: measurements it takes at most (one found shared is taken again): the timing rule's.
QUIET_WAIT, TRIES = DEFAULT_QUIET_WAIT, DEFAULT_ATTEMPTS


def measure(factors, base: str = "kos", n_components: int = 64,
            n_copies: float = 100.0, passes: int = 8, sampler: str = "nonzero",
            threads: int = 1, seed: int = 0, shape=None) -> dict:
    """Seconds per pass for each size: the fastest of passes ``passes // 2 + 1`` to ``passes``,
    the sizes' passes interleaved in time (module docstring).  ``shape``: (documents, words,
    nonzeros, tokens) of the base (:func:`split_shape`), named ``base``; None: the registered
    shape of the UCI corpus ``base``.

    Raises
    ------
    ValueError
        Unknown base shape, a factor that is not a positive finite number or makes more
        tokens than a 64-bit count holds, fewer than 4 passes, a bad SameLDA parameter or
        thread count; all before any corpus is drawn.
    """
    from same.data.corpus import REGISTRY
    from same.data.protocol import paper_batch_size
    from same.data.synthetic import shaped_corpus
    from same.model.kernels.cpu import set_threads
    from same.model.sampler import SameLDA

    from .provenance import provenance

    if shape is None and base not in REGISTRY:
        raise ValueError(f"base must be one of {sorted(REGISTRY)}, got {base!r}")
    if passes < 4:
        raise ValueError(f"passes must be at least 4 (>= 2 steady passes), got {passes}")
    if shape is None:
        info = REGISTRY[base]
        shape = (info.n_docs, info.n_words, info.nnz, info.n_tokens)
    check_factors(factors, shape, base)
    D, W, NNZ, tokens = shape
    batch_size = paper_batch_size(D)  # the base's minibatch size: more minibatches per pass
    SameLDA(n_components=n_components, n_copies=n_copies, max_iter=passes, sampler=sampler,
            batch_size=batch_size, random_state=seed)._validate_params()  # before any draw
    set_threads(threads)
    corpora = [shaped_corpus(int(D * f), W, int(NNZ * f), n_tokens=int(tokens * f), seed=seed)
               for f in factors]

    def model():
        return SameLDA(n_components=n_components, n_copies=n_copies, max_iter=passes,
                       sampler=sampler, batch_size=batch_size, random_state=seed)

    for attempt in range(1, TRIES + 1):
        models, marks, load = _interleaved(corpora, model, passes)
        if not load["shared"] or attempt == TRIES:
            break
        print(f"other work beside the measurement ({load['other_cores']:.2f} cores): measuring "
              f"again ({attempt + 1}/{TRIES})", file=sys.stderr)
    rows = []
    for f, counts, fitted, done in zip(factors, corpora, models, marks):
        steps = np.diff([0.0] + done)
        per_pass = float(np.min(steps[passes // 2:]))
        rows.append({"factor": f, "n_docs": counts.shape[0], "nnz": int(counts.nnz),
                     "n_tokens": int(counts.sum()), "seconds_per_pass": per_pass,
                     "pass_seconds": [round(float(x), 4) for x in steps],
                     "compile_seconds": fitted.compile_seconds_})
        print(f"factor {f:g}: {counts.nnz} nonzeros, {per_pass:.3f} s/pass", file=sys.stderr)
    return provenance({"benchmark": BENCHMARK,
                       "settings": {"base": base, "n_components": n_components, "n_copies": n_copies,
                                    "passes": passes, "steady_passes": passes - passes // 2,
                                    "interleaved": True, "sampler": sampler, "threads": threads,
                                    "batch_size": batch_size},
                       "sizes": rows, "fit": linearity(rows), "machine_load": load})


def check_factors(factors, shape=None, base: str = "the base") -> None:
    """Refuse a size factor :func:`measure` cannot draw: not a positive finite number, or,
    with the base's ``shape`` (D, W, NNZ, tokens), fewer than one document or more tokens
    than a 64-bit count holds (the workflow's config check calls it too).

    Raises
    ------
    ValueError
        One line naming the factor.
    """
    for f in factors:
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not np.isfinite(f) or f <= 0:
            raise ValueError(f"factors must be positive finite numbers, got {list(factors)}")
        if shape is None:
            continue
        n_docs, tokens = shape[0], shape[3]
        if n_docs * f < 1:
            raise ValueError(f"factor {f:g} makes {n_docs * f:.3g} documents of {base}'s "
                             f"{n_docs}, fewer than one; give factors of at least 1/{n_docs}")
        if tokens * f >= 2 ** 63:
            raise ValueError(f"factor {f:g} makes {tokens * f:.3g} tokens of {base}'s make-up, "
                             "beyond a 64-bit count")


def _interleaved(corpora, model, passes: int):
    """(models, seconds after each pass per corpus, machine load) of one measurement: a fresh
    ``model()`` per corpus, pass p of every corpus before pass p + 1 of any, after waiting up
    to :data:`QUIET_WAIT` s for other work to end; the load is what else ran beside the
    measured passes (:class:`~same.experiments.machine_load.LoadMeter`: C9 refuses shared)."""
    from .machine_load import LoadMeter, wait_quiet

    models = [model() for _ in corpora]
    fits = [m.iter_fit(counts) for m, counts in zip(models, corpora)]
    marks = [[] for _ in corpora]
    print(f"waiting up to {QUIET_WAIT:g} s for other work on the machine to end",
          file=sys.stderr)
    wait_quiet(QUIET_WAIT)
    with LoadMeter() as meter:
        for p in range(passes):  # round robin: pass p of every size before pass p + 1 of any
            for fit, done in zip(fits, marks):
                done.append(next(fit)["train_seconds"])
            print(f"pass {p + 1}/{passes} of every size", file=sys.stderr)
    return models, marks, meter.record()


def linearity(rows) -> dict:
    """Least-squares line seconds = a + b · tokens, its R², and the spread of s/token."""
    x = np.array([r["n_tokens"] for r in rows], dtype=float)
    y = np.array([r["seconds_per_pass"] for r in rows], dtype=float)
    if len(x) < 2:
        return {"r2": None, "per_token_spread": None}
    from scipy.stats import linregress

    fit = linregress(x, y)
    per_token = y / x
    return {"intercept_s": float(fit.intercept), "seconds_per_token": float(fit.slope),
            "r2": float(fit.rvalue ** 2), "per_token_spread": float(per_token.max() / per_token.min())}


def load_result(path) -> dict:
    """Read a result of this benchmark (claim C9 judges it); checked: JSON, ours
    (``benchmark``), at least 2 sizes with their factor, tokens and seconds per pass (positive
    numbers), the fit's R² and spread of seconds per token (numbers) and the settings (an
    object).

    Raises
    ------
    ValueError
        One line naming the file and what is wrong.
    """
    from same.io.schema import is_number
    from same.io.textinput import loads_json

    def number(x, positive=False) -> bool:
        return is_number(x) and (x > 0 or not positive)

    try:
        data = loads_json(Path(path).read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable scaling result ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    if not isinstance(data, dict) or data.get("benchmark") != BENCHMARK:
        raise ValueError(f"{path}: not a scaling result of same-lda (rerun the scaling rule)")
    sizes, fit = data.get("sizes"), data.get("fit")
    if not (isinstance(sizes, list) and len(sizes) >= 2 and all(
            isinstance(r, dict) and all(number(r.get(k), positive=True)
                                        for k in ("factor", "n_tokens", "seconds_per_pass"))
            for r in sizes)):
        raise ValueError(f"{path}: sizes must be at least 2 objects with a positive factor, "
                         "n_tokens and seconds_per_pass")
    if not (isinstance(fit, dict) and number(fit.get("r2"))
            and number(fit.get("per_token_spread"), positive=True)):
        raise ValueError(f"{path}: fit must hold the numbers r2 and per_token_spread")
    if not isinstance(data.get("settings"), dict):
        raise ValueError(f"{path}: settings must be an object")
    return data


def main(argv=None) -> int:
    """``python -m same.experiments.size_cost``: refuses ``--out`` (one line, exit 2) before measuring when
    it exists and is not an earlier result of this benchmark (:mod:`same.io.outputs`)."""
    from same.io.outputs import check_option, json_kind

    from .provenance import write_json

    ap = ArgumentParser(prog="python -m same.experiments.size_cost", description=__doc__.splitlines()[0])
    ap.add_argument("--factors", type=real_number(0, low_open=True), nargs="+", required=True,
                    help="size factors (the workflow passes config scaling.factors)")
    base = ap.add_mutually_exclusive_group()
    base.add_argument("--base", default="kos",
                      help="a UCI corpus whose registered shape is the base (no file read)")
    base.add_argument("--split", help="a split whose training documents' shape is the base")
    ap.add_argument("--name", help="the base's name with --split (default: the split's "
                    "folder, results/<name>/split.npz)")
    ap.add_argument("--n-components", type=whole_number(1), default=64)
    ap.add_argument("--n-copies", type=real_number(0, low_open=True), default=100.0)
    ap.add_argument("--passes", type=whole_number(4), default=8, help="at least 4 (>= 2 steady)")
    ap.add_argument("--sampler", default="nonzero")
    ap.add_argument("--threads", type=whole_number(1), default=1)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.name is not None and not args.split:  # it named nothing: a UCI base is its own name
        ap.error("--name names the base of --split; give it with --split only")
    check_option(args.out, json_kind({"benchmark": BENCHMARK}), ap.prog)  # before measuring
    shape, name = None, args.base
    if args.split:
        from same.data.artefact import ArtefactError

        try:
            shape = split_shape(args.split)
        except (OSError, ArtefactError) as exc:
            print(f"{ap.prog}: --split: {exc}", file=sys.stderr)
            return 2
        name = args.name or Path(args.split).parent.name
    try:
        result = measure(args.factors, name, args.n_components, args.n_copies, args.passes,
                         args.sampler, args.threads, shape=shape)
    except ValueError as exc:  # a bad option (named), before any corpus is drawn
        print(f"{ap.prog}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    write_json(args.out, result, option="--out")
    print(json.dumps(result["fit"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
