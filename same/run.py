"""Command line for the workflow: ``python -m same.run {split,fit,score} ...``.

    python -m same.run split --dataset kos --test-fraction 0.1 --seed 0 --out results/kos/split.npz
    python -m same.run fit --method same --split results/kos/split.npz --n-topics 64 \\
        --alpha 0.1 --beta 0.1 --seed 0 --budget 20 --param n_samples=100 \\
        --out results/kos/same/K64/seed0
    python -m same.run score --model results/kos/same/K64/seed0/model.npz --split results/kos/split.npz
"""

from __future__ import annotations

import argparse
import ast
import json
import sys

from .runner import METHODS, RunConfig, run, score_model


def _param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--param expects key=value, got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = value  # a bare string such as m_schedule=linear
    return key.strip(), parsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m same.run", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)

    sp_ = sub.add_parser("split", help="make the held-out split artifact of a corpus")
    sp_.add_argument("--dataset", required=True)
    sp_.add_argument("--test-fraction", type=float, default=0.1)
    sp_.add_argument("--seed", type=int, default=0)
    sp_.add_argument("--data-dir", default=None)
    sp_.add_argument("--out", required=True)

    fit = sub.add_parser("fit", help="train one method and write its trace, model and meta")
    fit.add_argument("--method", required=True, choices=METHODS)
    fit.add_argument("--split", required=True)
    fit.add_argument("--n-topics", type=int, required=True)
    fit.add_argument("--alpha", type=float, required=True, help="doc_topic_prior α")
    fit.add_argument("--beta", type=float, required=True, help="topic_word_prior β")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--budget", type=int, required=True,
                     help="passes (same, vb_*) or Gibbs iterations (cgs)")
    fit.add_argument("--threads", type=int, default=1)
    fit.add_argument("--backend", default="numpy")
    fit.add_argument("--param", type=_param, action="append", default=[],
                     help="method setting key=value (repeatable)")
    fit.add_argument("--label", default=None)
    fit.add_argument("--out", required=True)
    fit.add_argument("--no-progress", action="store_true")

    sc = sub.add_parser("score", help="score a saved model.npz on a split")
    sc.add_argument("--model", required=True)
    sc.add_argument("--split", required=True)

    args = ap.parse_args(argv)
    if args.command == "split":
        from . import corpus
        from .split import make_split

        data = corpus.load(args.dataset, args.data_dir)
        digest = make_split(data, args.test_fraction, args.seed).save(args.out)
        print(json.dumps({"split": args.out, "sha256": digest}))
    elif args.command == "fit":
        config = RunConfig(method=args.method, n_topics=args.n_topics,
                           doc_topic_prior=args.alpha, topic_word_prior=args.beta,
                           seed=args.seed, budget=args.budget, threads=args.threads,
                           backend=args.backend, params=dict(args.param), label=args.label)
        try:
            out = run(config, args.split, args.out, progress=not args.no_progress)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(out)
    else:
        print(json.dumps(score_model(args.model, args.split).as_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
