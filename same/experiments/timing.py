"""Seconds measured alone: each method's training cost per pass, with the machine to itself.

The quality fits of a workflow run side by side (two 1-thread jobs on a 2-core machine), so
their seconds are not comparable across methods: another job's memory traffic and start-up
move them by 1.2–1.6×.  Their traces give the *work* each method needs (passes, or CGS
iterations, to a held-out ll); this module measures the *cost* of that work, alone: every
method of the main comparison (and each tuned twin) trained on the split's training
documents, without evaluation, for its whole budget or until ``cap_seconds`` of training
(at least 2 passes), one after another in one process that holds every core (the workflow's
``timing`` rule reserves them), ``repeats`` times with the methods' order rotated each round
(interleaved: a slow spell of the machine falls on every method alike) and the seed of round
r the config's r-th.  Each measurement records the other work on the machine meanwhile
(:class:`~same.experiments.machine_load.LoadMeter`); one that shared the machine is retried
(up to ``attempts`` times), each time once the machine is quiet again (up to ``quiet_wait``
seconds of waiting: :func:`~same.experiments.machine_load.wait_quiet`), and kept marked
``shared`` if it still did, and the report refuses it (:mod:`same.report.timing`).

Time to a quality is then the work to reach it (from the quality traces) times this cost:
:func:`same.report.timing.retime` maps each checkpoint's pass to the seconds the alone
measurement took to get there (beyond the last timed pass: what each later pass cost the quality
run itself, scaled by the alone-to-shared ratio of the timed passes' second half).

    python -m same.experiments.timing --split results/kos/split.npz --out results/kos/timing.json \
        --entries '{"same": {"spec": {...}}, "same_tuned": {"spec": {...}, "tuned": true}}' \
        --tuning results/kos/tuning.json --seeds 0 1 2 --repeats 3 --cap-seconds 4
"""

from __future__ import annotations

import sys
from dataclasses import replace

from same.io.cli import ArgumentParser, real_number, whole_number

__all__ = ["ARTEFACT", "measure", "main", "DEFAULT_REPEATS", "DEFAULT_CAP_SECONDS"]

#: ``timing.json["artefact"]`` (what an earlier file at ``--out`` must say to be replaced).
ARTEFACT = "same-lda seconds measured alone"
#: Rounds of the interleaved measurement (each method timed once per round).
DEFAULT_REPEATS = 3
#: Training seconds after which a timed run stops (once it has done 2 passes).
DEFAULT_CAP_SECONDS = 4.0
#: Tries per measurement while the machine is shared.
DEFAULT_ATTEMPTS = 3
#: Seconds a retry waits at most for the machine to be quiet (other work in bursts: e.g. a
#: workflow's figure jobs beside a timed SLURM job on a one-node cluster, 3–5 s each).
DEFAULT_QUIET_WAIT = 30.0


def _time_one(spec, X, cap_seconds: float) -> dict:
    """Train ``spec`` on X without evaluation; (pass, cumulative training seconds) at each of
    the quality run's checkpoints up to the budget, stopping once ``cap_seconds`` of training
    and 2 passes are done."""
    from .methods import checkpoints
    from .runner import _pin_threads

    points, seconds = [], []
    with _pin_threads(spec.threads):
        for _, info in checkpoints(X, spec):
            points.append(int(info["pass"]))
            seconds.append(float(info["train_seconds"]))
            if seconds[-1] >= cap_seconds and points[-1] >= 2:
                break
    return {"points": points, "seconds": seconds, "budget": spec.budget,
            "complete": points[-1] >= spec.budget}


def _time_until_alone(spec, X, cap_seconds: float, meter, attempts: int, quiet_wait: float,
                      said: str | None):
    """(:func:`_time_one`'s record, its machine load, tries, seconds waited): timed again
    while other work shared the machine, up to ``attempts`` tries, each after waiting up to
    ``quiet_wait`` seconds for a quiet machine; each wait announced on stderr as ``said``
    (None: silent)."""
    from .machine_load import wait_quiet

    tries, waited = 0, 0.0
    while True:
        tries += 1
        with meter:
            timed = _time_one(spec, X, cap_seconds)
        load = meter.record()
        if not load["shared"] or tries >= attempts:
            return timed, load, tries, waited
        if said:  # a wait of up to quiet_wait seconds is never silent
            print(f"{said}: other work used {_cores(load)} cores meanwhile (over "
                  f"{meter.threshold:g}); waiting up to {quiet_wait:g} s for a quiet machine, "
                  f"then timing it again (try {tries + 1} of {attempts})", file=sys.stderr,
                  flush=True)
        waited += wait_quiet(quiet_wait, meter.threshold)


def measure(entries: dict, split, *, seeds, repeats: int = DEFAULT_REPEATS,
            cap_seconds: float = DEFAULT_CAP_SECONDS, attempts: int = DEFAULT_ATTEMPTS,
            quiet_wait: float = DEFAULT_QUIET_WAIT, tuning=None, progress: bool = True) -> dict:
    """Time every entry alone, interleaved over ``repeats`` rounds (module docstring).

    entries : {name: {"spec": RunSpec fields (dict), "tuned": bool}}; a tuned entry's spec
        takes the method's choice from ``tuning`` (a tuning.json of this split)
    split : a HeldOutSplit or its path; the runs train on its training documents
    seeds : the seed of each round (cycled when shorter than ``repeats``)

    Returns the timing.json object (without provenance): per entry, one record per round with
    ``seed``, ``points`` (passes; CGS iterations), cumulative training ``seconds`` there,
    ``machine_load`` (:meth:`LoadMeter.record`), ``attempts``, ``waited_seconds`` (for the
    machine to be quiet before each retry, in all) and ``shared``.

    Raises
    ------
    ValueError
        No entry, repeats < 1, cap_seconds ≤ 0, a bad spec (named), a tuned entry without
        ``tuning``.
    """
    from same.data.split import HeldOutSplit, load_split

    from .machine_load import LoadMeter
    from .runner import usable_threads
    from .spec import RunSpec
    from .tuning import apply_tuning

    if not entries:
        raise ValueError("no entries to time")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    if not quiet_wait >= 0:
        raise ValueError(f"quiet_wait must be a number of seconds >= 0, got {quiet_wait!r}")
    if not cap_seconds > 0:
        raise ValueError(f"cap_seconds must be positive, got {cap_seconds!r}")
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    if not isinstance(split, HeldOutSplit):
        split = load_split(split, mmap=True)
    split_sha = split.checksum()
    specs = {}
    for name, entry in entries.items():
        try:
            spec = RunSpec.from_dict(entry["spec"])
        except ValueError as exc:
            raise ValueError(f"--entries: entry {name!r}: {exc}") from None
        if entry.get("tuned"):
            if tuning is None:
                raise ValueError(f"entry {name!r} is tuned: give --tuning")
            spec = apply_tuning(spec, tuning, split_sha)
        specs[name] = replace(spec, threads=usable_threads(spec.threads))
    names = list(specs)
    out = {name: {"method": s.method, "params": s.params, "budget": s.budget,
                  "threads": s.threads, "rounds": []} for name, s in specs.items()}
    meter = LoadMeter()
    for r in range(repeats):
        seed = int(seeds[r % len(seeds)])
        order = names[r % len(names):] + names[:r % len(names)]  # rotated each round
        for name in order:
            spec = replace(specs[name], seed=seed)
            timed, load, tries, waited = _time_until_alone(
                spec, split.train, cap_seconds, meter, attempts, quiet_wait,
                f"round {r + 1}/{repeats} {name}" if progress else None)
            out[name]["rounds"].append({"round": r, "seed": seed, **timed,
                                        "machine_load": load, "attempts": tries,
                                        "waited_seconds": round(waited, 3),
                                        "shared": load["shared"]})
            if progress:
                print(f"round {r + 1}/{repeats} {name} seed {seed}: {timed['points'][-1]} "
                      f"passes in {timed['seconds'][-1]:.3f} s (other cores "
                      f"{_cores(load)}{', SHARED' if load['shared'] else ''})",
                      file=sys.stderr)
    return {"artefact": ARTEFACT, "split_sha256": split_sha, "repeats": repeats,
            "cap_seconds": cap_seconds, "seeds": [int(s) for s in seeds],
            "interleaved": True, "entries": out}


def _cores(load: dict) -> str:
    c = load.get("other_cores")
    return "unknown" if c is None else f"{c:.3f}"


def main(argv=None) -> int:
    """``python -m same.experiments.timing``: a bad argument or input ends in one line on
    stderr, exit status 2; ``--out`` is checked before anything is measured
    (:mod:`same.io.outputs`: only an earlier timing.json is replaced)."""
    from same.io.outputs import check_target, json_kind
    from same.io.textinput import loads_json

    from .provenance import provenance, write_json

    ap = ArgumentParser(prog="python -m same.experiments.timing",
                        description=__doc__.splitlines()[0])
    ap.add_argument("--split", required=True, help="the split whose training documents are used")
    ap.add_argument("--entries", required=True,
                    help='JSON: {name: {"spec": {RunSpec fields}, "tuned": false}}')
    ap.add_argument("--tuning", default=None, help="tuning.json for the tuned entries")
    ap.add_argument("--seeds", type=whole_number(0), nargs="+", required=True,
                    help="seed of each round")
    ap.add_argument("--repeats", type=whole_number(1), default=DEFAULT_REPEATS)
    ap.add_argument("--cap-seconds", type=real_number(0, low_open=True),
                    default=DEFAULT_CAP_SECONDS)
    ap.add_argument("--dataset", default=None)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    try:
        check_target(args.out, json_kind({"artefact": ARTEFACT}), [args.split, args.tuning],
                     option="--out")  # before anything is measured
        entries = loads_json(args.entries, "--entries")
        if not isinstance(entries, dict) or not all(
                isinstance(e, dict) and isinstance(e.get("spec"), dict) for e in entries.values()):
            raise ValueError('--entries: a JSON object {name: {"spec": {...}}}')
        result = measure(entries, args.split, seeds=args.seeds, repeats=args.repeats,
                         cap_seconds=args.cap_seconds, tuning=args.tuning)
        result = provenance({**result, "dataset": args.dataset})
        write_json(args.out, result, inputs=[args.split, args.tuning], option="--out")
    except (ValueError, OSError) as exc:  # OutputError is a ValueError
        print(f"{ap.prog}: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
