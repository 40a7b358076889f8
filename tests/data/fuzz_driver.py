"""Seeded random corruptions of one artefact type, each fed to the command that reads it.

Run by tests/data/test_fuzz.py in a child process (a native crash then shows as a signal, not as a
dead test run)::

    python tests/data/fuzz_driver.py KIND WORKDIR N SEED

KIND: split | model | corpus | trace | cache.  WORKDIR holds the intact artefacts the parent
made with the real writers (split.npz, corpus.npz, run/ with trace.csv, meta.json,
model.npz; docword.toy.txt.gz, vocab.toy.txt and its parsed cache for ``cache``).  Prints one
JSON object: a list of outcomes, one per corruption, with the exit status, the lines written
to stderr, and whether any output appeared.

Corruptions, in turn: 1-8 flipped bytes; truncation at a random length; bytes appended, a
block zeroed or a block deleted; and an edit of the content that the command would accept
were it not checked (a malformed array or trace row), written back with a valid SHA-256 seal
(and, for half of the split edits, a recomputed content checksum) so that only the
structural checks can refuse it.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import shutil
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

SPEC = json.dumps({"method": "same", "n_components": 3, "doc_topic_prior": 0.1,
                   "topic_word_prior": 0.1, "seed": 0, "budget": 2,
                   "params": {"n_copies": 5.0}})
MODES = ("flip", "flip", "truncate", "splice", "edit")


def byte_damage(raw: bytes, mode: str, rng) -> bytes:
    b = bytearray(raw)
    if mode == "flip":
        for pos in rng.choice(len(b), size=int(rng.integers(1, 9)), replace=False):
            b[pos] ^= int(rng.integers(1, 256))
        return bytes(b)
    if mode == "truncate":
        return bytes(b[:int(rng.integers(0, len(b)))])
    what = int(rng.integers(3))
    if what == 0:
        return bytes(b) + rng.bytes(int(rng.integers(1, 64)))
    a = int(rng.integers(0, len(b) - 1))
    n = int(rng.integers(1, min(256, len(b) - a) + 1))
    if what == 1:
        if not any(b[a:a + n]):  # already zero: zeroing would change nothing
            b[a] = 0xFF
        else:
            b[a:a + n] = bytes(n)
        return bytes(b)
    del b[a:a + n]
    return bytes(b)


def load_arrays(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k].copy() for k in z.files}


def break_csr(z: dict, prefix: str, rng) -> str:
    """Make the CSR matrix ``prefix*`` in ``z`` malformed in one of several ways; returns how."""
    indptr, indices, data = (z[f"{prefix}indptr"], z[f"{prefix}indices"], z[f"{prefix}data"])
    shape = z[f"{prefix}shape"]
    how = str(rng.choice(["indptr_down", "index_high", "index_negative", "count_negative",
                          "row_unsorted", "indptr_end", "shape_rows", "shape_words",
                          "data_float_nan", "indptr_2d", "drop"]))
    full = np.flatnonzero(np.diff(indptr) >= 2)
    if how == "indptr_down":
        r = int(rng.integers(1, len(indptr) - 1))
        indptr[r] = indptr[r + 1] + int(rng.integers(1, 50))
    elif how == "index_high":
        indices[int(rng.integers(len(indices)))] = shape[1] + int(rng.integers(0, 10**6))
    elif how == "index_negative":
        indices[int(rng.integers(len(indices)))] = -int(rng.integers(1, 100))
    elif how == "count_negative":
        data[int(rng.integers(len(data)))] = -int(rng.integers(1, 100))
    elif how == "row_unsorted" and full.size:
        a = int(indptr[int(rng.choice(full))])
        indices[a + 1] = indices[a]  # a duplicate or a descent
    elif how == "indptr_end":
        indptr[-1] += int(rng.integers(1, 1000))
    elif how == "shape_rows":
        shape[0] += int(rng.integers(1, 5))
    elif how == "shape_words":
        shape[1] = max(1, int(indices.max()) - int(rng.integers(0, 5)))
    elif how == "data_float_nan":
        d = data.astype(np.float64)
        d[int(rng.integers(len(d)))] = np.nan
        z[f"{prefix}data"] = d
    elif how == "indptr_2d":
        z[f"{prefix}indptr"] = np.stack([indptr, indptr])
    else:
        how = "drop"
        del z[f"{prefix}{str(rng.choice(['data', 'indices', 'indptr', 'shape']))}"]
    return how


def reseal_split(z: dict, rng) -> None:
    """Half the time, recompute the content checksum of an edited split (its meta's last
    field), so that the edit must be caught by the structural checks, not the checksum."""
    from same.data.split import HeldOutSplit

    if (rng.random() < 0.5 or any(k not in z for k in ("meta", "train_docs", "test_docs"))
            or z["meta"].shape != (5,)):
        return
    try:
        ns = SimpleNamespace(
            corpus=str(z["meta"][0]), seed=int(z["meta"][1]), test_fraction=float(z["meta"][2]),
            vocab_sha256=str(z["meta"][3]), train_docs=z["train_docs"], test_docs=z["test_docs"],
            **{m: SimpleNamespace(shape=tuple(z[f"{m}_shape"]), indptr=z[f"{m}_indptr"],
                                  indices=z[f"{m}_indices"], data=z[f"{m}_data"])
               for m in ("train", "test_observed", "test_heldout")})
        ns._provenance = lambda: HeldOutSplit._provenance(ns)
        digest = HeldOutSplit.checksum(ns)
    except (KeyError, ValueError, TypeError, OverflowError):
        return
    meta = z["meta"].copy()
    meta[4] = digest
    z["meta"] = meta


def edit_split(raw_path: Path, rng) -> tuple[dict, str]:
    z = load_arrays(raw_path)
    roll = int(rng.integers(4))
    if roll == 3:
        how = str(rng.choice(["docs_short", "words_differ", "meta_short", "docs_float"]))
        if how == "docs_short":
            z["test_docs"] = z["test_docs"][:-1]
        elif how == "words_differ":
            z["test_heldout_shape"] = z["test_heldout_shape"] + np.array([0, 1])
        elif how == "meta_short":
            z["meta"] = z["meta"][:4]
        else:
            z["train_docs"] = z["train_docs"].astype(np.float64)
    else:
        how = break_csr(z, ("train_", "test_observed_", "test_heldout_")[roll], rng)
    reseal_split(z, rng)
    return z, how


def edit_model(raw_path: Path, rng) -> tuple[dict, str]:
    z = load_arrays(raw_path)
    how = str(rng.choice(["phi_nan", "phi_negative", "phi_zero_topic", "phi_1d", "phi_int",
                          "prior_zero", "prior_nan", "words_fewer", "drop", "method_array"]))
    phi = z["topic_word"]
    if how == "phi_nan":
        phi[int(rng.integers(phi.shape[0])), int(rng.integers(phi.shape[1]))] = np.nan
    elif how == "phi_negative":
        phi[int(rng.integers(phi.shape[0])), int(rng.integers(phi.shape[1]))] = -0.5
    elif how == "phi_zero_topic":
        phi[int(rng.integers(phi.shape[0]))] = 0
    elif how == "phi_1d":
        z["topic_word"] = phi.ravel()
    elif how == "phi_int":
        z["topic_word"] = (phi * 1000).astype(np.int32)
    elif how == "prior_zero":
        z[str(rng.choice(["doc_topic_prior", "topic_word_prior"]))] = np.float64(0)
    elif how == "prior_nan":
        z[str(rng.choice(["doc_topic_prior", "topic_word_prior"]))] = np.float64(np.nan)
    elif how == "words_fewer":
        z["topic_word"] = phi[:, :-int(rng.integers(1, 5))]
    elif how == "method_array":
        z["method"] = np.asarray(["same", "same"])
    else:
        del z[str(rng.choice(sorted(z)))]
    return z, how


def edit_corpus(raw_path: Path, rng) -> tuple[dict, str]:
    z = load_arrays(raw_path)
    if rng.random() < 0.2:
        how = str(rng.choice(["meta_not_json", "topics_wrong_width", "topics_nan"]))
        if how == "meta_not_json":
            z["meta"] = np.asarray("{not json")
        elif how == "topics_wrong_width":
            z["topic_word"] = z["topic_word"][:, :-1]
        else:
            z["topic_word"][0, 0] = np.nan
        return z, how
    return z, break_csr(z, "", rng)


def edit_trace(run: Path, rng) -> str:
    """Edit trace.csv so that no finished run could have written it, and record its new
    SHA-256 in meta.json, sealed again (so only the structural checks can refuse it)."""
    from same.experiments.rundir import seal_meta

    rows = list(csv.reader(io.StringIO((run / "trace.csv").read_text())))
    header, body = rows[0], rows[1:]
    ll = header.index("ll")
    how = str(rng.choice(["row_dropped", "ll_nan", "ll_inf", "ll_text", "header_renamed",
                          "row_duplicated", "rows_swapped", "pass_changed", "column_dropped",
                          "empty"]))
    r = int(rng.integers(len(body)))
    if how == "row_dropped":
        del body[r]
    elif how in ("ll_nan", "ll_inf", "ll_text"):
        body[r][ll] = {"ll_nan": "nan", "ll_inf": "-inf", "ll_text": "n/a"}[how]
    elif how == "header_renamed":
        header = [*header[:ll], "loglik", *header[ll + 1:]]
    elif how == "row_duplicated":
        body.insert(r, list(body[r]))
    elif how == "rows_swapped":
        body[0], body[-1] = body[-1], body[0]
    elif how == "pass_changed":
        body[r][header.index("pass")] = str(int(body[r][header.index("pass")]) + 100)
    elif how == "column_dropped":
        header, body = header[:-1], [b[:-1] for b in body]
    else:
        body = []
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *body])
    (run / "trace.csv").write_text(buf.getvalue())
    meta = json.loads((run / "meta.json").read_text())
    meta["trace_sha256"] = hashlib.sha256((run / "trace.csv").read_bytes()).hexdigest()
    (run / "meta.json").write_text(json.dumps(seal_meta(meta)))
    return how


def call(argv: list[str]) -> tuple[int, str, str]:
    from same.experiments.cli import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(argv, prog="same-lda")
    return rc, err.getvalue(), out.getvalue()


def main(kind: str, work: Path, n: int, seed: int) -> list[dict]:
    from same.data.artefact import save_npz

    rng = np.random.default_rng([seed, ["split", "model", "corpus", "trace", "cache"].index(kind)])
    cases = work / "cases"
    cases.mkdir()
    source = {"split": work / "split.npz", "model": work / "run" / "model.npz",
              "corpus": work / "corpus.npz", "trace": work / "run" / "trace.csv",
              "cache": work / "cache" / "docword.toy.npz"}[kind]
    raw = source.read_bytes()
    results = []
    for i in range(n):
        mode = MODES[i % len(MODES)]
        case = cases / str(i)
        case.mkdir()
        how = mode
        if kind == "trace":
            run = case / "run"
            shutil.copytree(work / "run", run)
            bad = run / "trace.csv"
            if mode == "edit":
                how = edit_trace(run, rng)
            else:
                bad.write_bytes(byte_damage(raw, mode, rng))
        else:
            bad = case / source.name
            if mode == "edit" and kind != "cache":
                z, how = {"split": edit_split, "model": edit_model,
                          "corpus": edit_corpus}[kind](source, rng)
                save_npz(bad, z, compress=kind == "model")
            else:
                bad.write_bytes(byte_damage(raw, "flip" if mode == "edit" else mode, rng))
        out = case / "out"
        if kind == "split":
            rc, err, _ = call(["fit", "--spec", SPEC, "--split", str(bad), "--out", str(out),
                               "--no-progress"])
        elif kind == "model":
            rc, err, _ = call(["score", "--model", str(bad), "--split", str(work / "split.npz")])
        elif kind == "corpus":
            rc, err, _ = call(["split", "--corpus", str(bad), "--out", str(out)])
        elif kind == "trace":
            rc, err, _ = call(["check", str(bad.parent)])
        else:  # a derived cache: never trusted, rebuilt from the verified source
            from same.data import corpus

            shutil.copy(bad, source)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = corpus.load("toy", docword=work / "docword.toy.txt.gz",
                                  vocab=work / "vocab.toy.txt")
            ref = np.load(work / "counts_ref.npz")
            same = (got.counts.shape == tuple(ref["shape"])
                    and np.array_equal(got.counts.indptr, ref["indptr"])
                    and np.array_equal(got.counts.indices, ref["indices"])
                    and np.array_equal(got.counts.data, ref["data"]))
            err = "\n".join(str(w.message) for w in caught
                            if type(w.message).__name__ == "CacheWarning") + "\n"
            rc = 0 if same else 1
            source.write_bytes(raw)
        wrote = out.exists() or any(p.name.startswith(".out") for p in case.iterdir())
        results.append({"i": i, "mode": mode, "how": how, "rc": rc,
                        "lines": err.count("\n"), "message": err.strip(), "wrote": wrote})
    return results


if __name__ == "__main__":
    kind, work, n, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(main(kind, work, n, seed)))
