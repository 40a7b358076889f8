"""Issue 36: property-based tests (Hypothesis, fixed seed) over ``--out`` paths of ``split``,
``synthesize`` and ``fit``, and over a library writer's path (:meth:`HeldOutSplit.save`).

Each example builds a folder holding the command's input, a target in one of many states
(absent; a user's file or folder, empty, with user files, with our file names but not ours;
our earlier output of the same kind or of another; a symbolic link to a file, a folder or
nowhere; the input itself, through a symbolic or a hard link; a folder holding the input)
under a drawn name (glob characters ``*?[]``, a leading ``.`` or ``-``, spaces), beside user
entries named like our temporaries (``.NAME.tmp_bak``, ``.NAME.tmpkeep``,
``.NAME.same-tmp-notes``).  Property: the command either succeeds and changes nothing but the
target, which is then a complete output of its kind, or exits 2 with one line and changes
nothing at all; which of the two is fixed by the target's state.  Never a signal, never a
traceback.

The examples run in-process (``same.experiments.cli.main``) in ONE child process, so a crash of the
interpreter is reported as such; ``python tests/io/test_out_paths_properties.py`` runs them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Examples per property (500 in all), each ~0.01-0.1 s in-process.
EXAMPLES = {"split": 150, "synthesize": 100, "fit": 100, "library": 150}
SYN_SPEC = {"like": "kos", "fraction": 0.01, "n_topics": 3}
FIT_SPEC = json.dumps({"method": "same", "n_components": 2, "doc_topic_prior": 0.1,
                       "topic_word_prior": 0.1, "seed": 0, "budget": 1,
                       "params": {"n_copies": 2.0}})
STATES = ["absent", "user file", "empty folder", "folder with user files",
          "folder with our names", "same kind", "other kind", "link to user file",
          "link to user folder", "dangling link", "input", "input via symbolic link",
          "hard link to input", "folder holding input"]
OURS = ("trace.csv", "model.npz", "meta.json")


def test_out_paths_never_change_what_is_not_ours():
    """The properties below, in one child process: it must exit 0 (every property held over
    its examples) and report at least 500 examples, over every state and kind of name."""
    res = subprocess.run([sys.executable, __file__], capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-6000:]
    counts = json.loads(res.stdout.strip().splitlines()[-1])
    assert sum(counts["examples"].values()) >= 500, counts
    # both outcomes, over many states, were exercised
    assert counts["outcomes"]["written"] >= 30 and counts["outcomes"]["refused"] >= 150, counts
    assert len(counts["states"]) == len(STATES), counts
    assert counts["name_features"] == sorted(["*", "?", "[", "]", " ", "leading .",
                                              "leading -"]), counts


# --------------------------------------------------------------------------- the child's part

def snapshot(root: Path) -> dict:
    """Every entry under ``root``, links not followed: bytes and mode, a link's target."""
    from test_write_discipline import tree

    return tree(root)


def make_template(root: Path) -> Path:
    """Our artefacts of each kind, made once: corpus, split, run folder."""
    from same.data.planted import load_synthetic, save_synthetic, synthetic_corpus
    from same.data.split import make_split
    from same.experiments.runner import RunSpec, run

    t = root / "template"
    t.mkdir()
    save_synthetic(t / "corpus.npz", synthetic_corpus("toy", SYN_SPEC), "toy", SYN_SPEC)
    make_split(load_synthetic(t / "corpus.npz")[0], 0.2, 0).save(t / "split.npz")
    make_split(load_synthetic(t / "corpus.npz")[0], 0.2, 1).save(t / "split1.npz")
    run(RunSpec(**json.loads(FIT_SPEC)), t / "split.npz", t / "run", progress=False)
    return t


def build(work: Path, t: Path, command: str, state: str, name: str) -> dict:
    """Lay out one example in the empty folder ``work``; returns the argument values."""
    input_name = {"split": "c.npz", "fit": "s.npz", "library": "s.npz"}.get(command)
    input_file = t / ("corpus.npz" if command == "split" else "split.npz")
    if input_name:
        shutil.copy(input_file, work / input_name)
    (work / "notes.txt").write_text("a user's notes\n")
    (work / "user_folder").mkdir()
    (work / "user_folder" / "thesis.tex").write_text("x\n")
    (work / f".{name}.tmp_bak").mkdir()
    for f in OURS:
        (work / f".{name}.tmp_bak" / f).write_bytes(b"mine\n")
    (work / f".{name}.tmpkeep").write_text("mine\n")
    (work / f".{name}.same-tmp-notes").write_text("mine\n")
    target, inp = work / name, input_name
    same_kind = {"split": t / "split1.npz", "library": t / "split1.npz",
                 "synthesize": t / "corpus.npz", "fit": t / "run"}[command]
    other_kind = {"split": t / "run", "library": t / "corpus.npz",
                  "synthesize": t / "split.npz", "fit": t / "split1.npz"}[command]
    if state == "user file":
        target.write_text("mine\n")
    elif state == "empty folder":
        target.mkdir()
    elif state == "folder with user files":
        target.mkdir()
        (target / "paper.pdf").write_bytes(b"%PDF-1.4 mine")
    elif state == "folder with our names":
        target.mkdir()
        for f in OURS:
            (target / f).write_bytes(b"mine\n")
    elif state in ("same kind", "other kind"):
        src = same_kind if state == "same kind" else other_kind
        (shutil.copytree if src.is_dir() else shutil.copy)(src, target)
    elif state == "link to user file":
        target.symlink_to("notes.txt")
    elif state == "link to user folder":
        target.symlink_to("user_folder")
    elif state == "dangling link":
        target.symlink_to("nowhere")
    elif not input_name:
        pass
    elif state == "input":
        os.rename(work / input_name, target)
        inp = name
    elif state == "input via symbolic link":
        os.rename(work / input_name, target)
        (work / input_name).symlink_to(name)
    elif state == "hard link to input":
        os.link(work / input_name, target)
    elif state == "folder holding input":
        target.mkdir()
        os.rename(work / input_name, target / input_name)
        inp = f"{name}/{input_name}"
    return {"input": inp}


def expected_to_write(command: str, state: str) -> bool:
    return state in ("absent", "same kind") or (command == "fit" and state == "empty folder")


def call(command: str, name: str, inp: str | None) -> tuple[int, str]:
    """The command in this process (cwd: the example's folder); (exit status, stderr)."""
    if command == "library":
        from same.data.split import load_split
        from same.io.outputs import OutputError

        split = load_split(inp)
        try:
            split.save(name, inputs=[inp])
        except OutputError as exc:
            return 2, f"same-lda: error: {exc}\n"
        return 0, ""
    from same.experiments.cli import main

    argv = {"split": ["split", f"--corpus={inp}"],
            "synthesize": ["synthesize", "--name", "toy", "--spec", json.dumps(SYN_SPEC)],
            "fit": ["fit", "--spec", FIT_SPEC, f"--split={inp}", "--no-progress"]}[command]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main([*argv, f"--out={name}"], prog="same-lda")
    return rc, err.getvalue()


def check_example(t: Path, base: Path, command: str, state: str, name: str, tally: dict):
    from same.experiments.verify_artefacts import check_artefact

    work = base / "w"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    args = build(work, t, command, state, name)
    before = snapshot(base)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        rc, err = call(command, name, args["input"])
    finally:
        os.chdir(cwd)
    after = snapshot(base)
    where = f"{command} --out {name!r} over {state}"
    if expected_to_write(command, state):
        assert rc == 0, f"{where}: exit {rc}: {err}"
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        target = f"w/{name}"
        assert all(k == target or k.startswith(target + "/") for k in changed), (where, changed)
        kind = {"split": "split", "library": "split", "synthesize": "synthetic corpus",
                "fit": "run"}[command]
        assert check_artefact(work / name) == kind, where
        tally["written"] += 1
    else:
        assert rc == 2, f"{where}: exit {rc}: {err}"
        assert err.count("\n") == 1 and err.startswith("same-lda: error: "), (where, err)
        assert after == before, (where, set(before) ^ set(after))
        tally["refused"] += 1


def run_properties() -> dict:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    names = st.builds(lambda lead, core, ext: lead + core + ext,
                      st.sampled_from(["", ".", "-"]),
                      st.text(alphabet="ab*?[] ", min_size=1, max_size=6),
                      st.sampled_from(["", ".npz", ".tmp"])).filter(
        lambda n: n not in (".", "..") and n.strip() == n)
    tally = {"written": 0, "refused": 0}
    seen_states: set[str] = set()
    features: set[str] = set()
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as d:
        t = make_template(Path(d))
        base = Path(d) / "base"
        base.mkdir()
        for command, n in EXAMPLES.items():
            states = [s for s in STATES if command != "synthesize" or "input" not in s]

            @settings(derandomize=True, max_examples=n, deadline=None, database=None)
            @given(st.just(command), st.sampled_from(states), names)
            def prop(command, state, name):
                counts[command] = counts.get(command, 0) + 1
                seen_states.add(state)
                features.update(c for c in "*?[] " if c in name)
                features.update(f"leading {c}" for c in ".-" if name.startswith(c))
                check_example(t, base, command, state, name, tally)

            prop()
    return {"examples": counts, "outcomes": tally, "states": sorted(seen_states),
            "name_features": sorted(features)}


if __name__ == "__main__":
    os.environ.setdefault("SAME_CACHE_DIR", tempfile.mkdtemp(prefix="same-cache-"))
    print(json.dumps(run_properties()))
