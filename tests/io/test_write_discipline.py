"""Issue 36, root cause 1: one write discipline for every command and function that writes
(:mod:`same.io.outputs`).  Each reproduction of the issue is a test named for it, with the real
command line in a subprocess or the library writer, showing exit 2 (or the exception), the
exact one line, and every byte of the user's files unchanged.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_outputs import SPEC, error, same_lda

from same.io import outputs
from same.io.outputs import OutputError

REPO = Path(__file__).resolve().parents[2]
SYN_SPEC = json.dumps({"like": "kos", "fraction": 0.02, "n_topics": 4})
OUTPUTS = ["meta.json", "model.npz", "trace.csv"]


def tree(root: Path) -> dict:
    """Every entry under root (links not followed): a file's bytes and mode, a folder's mode,
    a link's target; so a test shows that nothing at all changed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            key = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[key] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[key] = ("dir", st.st_mode)
            else:
                out[key] = ("file", st.st_mode, p.read_bytes())
    return out


@pytest.fixture(scope="module")
def corpus_bytes(tmp_path_factory) -> bytes:
    """A small synthetic corpus file written by ``same-lda synthesize``."""
    d = tmp_path_factory.mktemp("corpus")
    res = same_lda("synthesize", "--name", "toy", "--spec", SYN_SPEC, "--out", "c.npz", cwd=d)
    assert res.returncode == 0, res.stderr
    return (d / "c.npz").read_bytes()


@pytest.fixture(scope="module")
def run_files(split_path, tmp_path_factory) -> dict:
    """The three files of a completed fit (library), to make earlier outputs from."""
    from same.experiments.runner import RunSpec, run

    out = run(RunSpec(**json.loads(SPEC)), split_path,
              tmp_path_factory.mktemp("run") / "out", progress=False)
    return {name: (out / name).read_bytes() for name in OUTPUTS}


def fit(split, out, cwd, **kw):
    return same_lda("fit", "--spec", SPEC, "--split", str(split), f"--out={out}",
                    "--no-progress", cwd=cwd, **kw)


def earlier_output(path: Path, files: dict) -> None:
    path.mkdir(parents=True)
    for name, data in files.items():
        (path / name).write_bytes(data)


# --------------------------------------------------------------------------- the issue's cases

@pytest.mark.parametrize("command", ["split", "synthesize"])
def test_split_or_synthesize_out_over_a_users_file_is_refused(corpus_bytes, tmp_path, command):
    """``same-lda split --corpus toy.npz --out thesis.tex`` (and ``synthesize --out``) exited
    0 and thesis.tex was a zip.  Now exit 2, one line, thesis.tex unchanged, nothing else
    written (checked before the corpus is loaded or drawn)."""
    (tmp_path / "c.npz").write_bytes(corpus_bytes)
    (tmp_path / "thesis.tex").write_text("\\chapter{One}\n")
    before = tree(tmp_path)
    args = (["split", "--corpus", "c.npz"] if command == "split"
            else ["synthesize", "--name", "toy", "--spec", SYN_SPEC])
    res = same_lda(*args, "--out", "thesis.tex", cwd=tmp_path)
    kind = "split" if command == "split" else "synthetic corpus"
    assert res.returncode == 2
    assert error(res) == (f"--out thesis.tex: exists and is not a {kind} written by same-lda; "
                          "give a new path or remove it\n")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("how", ["same path", "symbolic link", "hard link"])
def test_split_out_equal_to_its_input_corpus_is_refused(corpus_bytes, tmp_path, how):
    """``same-lda split --corpus c.npz --out c.npz`` replaced the input corpus with the split,
    exit 0.  Now the output is compared with its input by device and inode (a symbolic or a
    hard link to the input too): exit 2, one line naming the input, nothing changed."""
    (tmp_path / "c.npz").write_bytes(corpus_bytes)
    corpus, out = "c.npz", "c.npz"
    if how == "symbolic link":
        (tmp_path / "link.npz").symlink_to("c.npz")
        corpus = "link.npz"
    elif how == "hard link":
        os.link(tmp_path / "c.npz", tmp_path / "h.npz")
        out = "h.npz"
    before = tree(tmp_path)
    res = same_lda("split", "--corpus", corpus, "--out", out, cwd=tmp_path)
    assert res.returncode == 2
    assert error(res) == f"--out {out}: is the input {corpus}; give a new path\n"
    assert tree(tmp_path) == before


def test_split_into_the_folder_holding_its_input_is_refused(corpus_bytes, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "c.npz").write_bytes(corpus_bytes)
    before = tree(tmp_path)
    res = same_lda("split", "--corpus", "d/c.npz", "--out", "d", cwd=tmp_path)
    assert res.returncode == 2
    assert error(res) == "--out d: holds the input d/c.npz; give a new path\n"
    assert tree(tmp_path) == before


def test_users_folders_named_like_our_temporaries_are_kept(split_path, run_files, tmp_path):
    """A user folder ``.myrun.tmp_bak`` or ``.myrun.tmp-notes`` beside ``--out myrun``,
    holding only file names we also use, was deleted as a "dead temporary" (the writer
    globbed ``.myrun.tmp*``).  Now only our exact temporary names are ever cleaned: the fit
    succeeds and both folders keep every byte."""
    for name in (".myrun.tmp_bak", ".myrun.tmp-notes", ".myrun.same-tmp-notes"):
        earlier_output(tmp_path / name, {f: b"mine\n" for f in OUTPUTS})
    before = tree(tmp_path)
    res = fit(split_path, "myrun", tmp_path)
    assert res.returncode == 0, res.stderr
    after = tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("myrun")} == before
    assert sorted(p.name for p in (tmp_path / "myrun").iterdir()) == OUTPUTS


def test_glob_characters_in_out_reach_no_other_folder(split_path, tmp_path):
    """``--out 'g/*'`` used the name unescaped as a glob and deleted ``g/.seed0.tmpkeep``.
    Now the name is never a pattern: the fit writes the folder named ``*`` and nothing else."""
    earlier_output(tmp_path / "g" / ".seed0.tmpkeep", {"trace.csv": b"keep\n"})
    earlier_output(tmp_path / "g" / ".seed0.tmp-0123456789abcdef", {"trace.csv": b"keep\n"})
    before = tree(tmp_path)
    res = fit(split_path, "g/*", tmp_path)
    assert res.returncode == 0, res.stderr
    after = tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("g/*")} == before
    assert sorted(p.name for p in (tmp_path / "g" / "*").iterdir()) == OUTPUTS


def test_earlier_output_with_model_npz_replaced_by_a_folder_is_kept(split_path, run_files,
                                                                      tmp_path):
    """An earlier output whose model.npz was replaced by a folder: the fit trained, unlinked
    the old trace, then failed, so the old result was gone and no new one written.  Now such
    a folder is not taken for our output: exit 2 before training, one line, every byte kept."""
    earlier_output(tmp_path / "out", {k: v for k, v in run_files.items() if k != "model.npz"})
    (tmp_path / "out" / "model.npz").mkdir()
    (tmp_path / "out" / "model.npz" / "notes.txt").write_text("mine\n")
    before = tree(tmp_path)
    res = fit(split_path, "out", tmp_path)
    assert res.returncode == 2
    assert error(res) == ("--out out: holds model.npz, not a file as same-lda writes it (a "
                          "folder or a link); give a new or empty folder\n")
    assert tree(tmp_path) == before


def _modes(root: Path) -> dict:
    return {str(p.relative_to(root)): stat.S_IMODE(os.lstat(p).st_mode)
            for p in [root, *root.rglob("*")]}


def _created_under(umask: int, folder: Path) -> tuple[int, int]:
    """The modes the kernel gives a new folder and a new file in ``folder`` under ``umask``."""
    old = os.umask(umask)
    try:
        os.mkdir(folder / "ref_dir", 0o777)
        os.close(os.open(folder / "ref_file", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    finally:
        os.umask(old)
    modes = (stat.S_IMODE(os.stat(folder / "ref_dir").st_mode),
             stat.S_IMODE(os.stat(folder / "ref_file").st_mode))
    os.rmdir(folder / "ref_dir")
    os.unlink(folder / "ref_file")
    return modes


@pytest.mark.parametrize("umask, setgid", [(0o077, False), (0o022, True), (0o077, True)])
def test_outputs_are_created_under_the_users_umask_without_chmod(split_path, corpus_bytes,
                                                                 tmp_path, umask, setgid):
    """Outputs were chmod-ed (0644 files, a 0755 run folder): under ``umask 077``, or in a
    setgid 2700 folder, they became world-readable and lost the setgid bit.  Now every file
    and folder we create has the mode the kernel gives under the user's umask and the
    parent's setgid, like any program's."""
    work = tmp_path / "work"
    work.mkdir()
    if setgid:
        work.chmod(0o2700)
    (work / "c.npz").write_bytes(corpus_bytes)
    want_dir, want_file = _created_under(umask, work)
    kw = {"preexec_fn": lambda: os.umask(umask)}
    for args in (["split", "--corpus", "c.npz", "--out", "s.npz"],
                 ["synthesize", "--name", "toy", "--spec", SYN_SPEC, "--out", "syn.npz"]):
        assert same_lda(*args, cwd=work, **kw).returncode == 0
    assert fit(split_path, "run", work, **kw).returncode == 0
    modes = _modes(work)
    assert modes["run"] == want_dir
    assert {modes[k] for k in ("s.npz", "syn.npz", *(f"run/{f}" for f in OUTPUTS))} == {
        want_file}


# --------------------------------------------------------------------------- the rename

def test_a_replace_is_one_exchange_of_complete_outputs(split_path, run_files, tmp_path,
                                                       monkeypatch):
    """Replacing an earlier output is one rename: up to the exchange the old output is
    complete at the path, right after it the new one is, and no file of the old one was
    removed before (the old code unlinked the old files one by one, then renamed)."""
    from same.experiments.runner import RunSpec, run

    out = tmp_path / "out"
    earlier_output(out, run_files)
    seen, real = [], outputs._exchange

    def watched(a, b):
        seen.append(("before", tree(b)))
        real(a, b)
        seen.append(("after", sorted(p.name for p in Path(b).iterdir())))

    monkeypatch.setattr(outputs, "_exchange", watched)
    run(RunSpec(**json.loads(SPEC)), split_path, out, progress=False)
    assert seen[0] == ("before", tree_of(run_files))
    assert seen[1] == ("after", OUTPUTS)
    assert (out / "trace.csv").read_bytes() != b"" and sorted(os.listdir(tmp_path)) == ["out"]


def tree_of(files: dict) -> dict:
    """tree() of a folder holding ``files`` as written by this test (mode under the umask)."""
    mode = stat.S_IFREG | (0o666 & ~_umask())
    return {name: ("file", mode, data) for name, data in files.items()}


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


@pytest.mark.parametrize("fails", ["rename in", "exchange"])
def test_a_failed_replace_leaves_the_earlier_output_complete(split_path, run_files, tmp_path,
                                                             monkeypatch, fails):
    """Where names cannot be exchanged (ENOSYS, EINVAL: the old output is renamed aside, the
    new one in) and the rename in fails, or the exchange itself fails: the earlier output is
    back, complete, every byte, and no temporary is left."""
    from same.experiments.runner import RunSpec, run

    out = tmp_path / "out"
    earlier_output(out, run_files)
    before = tree(tmp_path)
    real_replace = os.replace

    def no_exchange(a, b):
        raise OSError(errno.EINVAL if fails == "rename in" else errno.EIO, "refused", str(b))

    def failing_replace(src, dst):
        if Path(dst) == out:
            raise OSError(errno.EIO, "Input/output error", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(outputs, "_exchange", no_exchange)
    monkeypatch.setattr(outputs.os, "replace", failing_replace)
    with pytest.raises(OSError, match=re.escape(f"{tmp_path}: cannot write there: "
                                                "Input/output error (EIO)")):  # the disk's
        run(RunSpec(**json.loads(SPEC)), split_path, out, progress=False)
    assert tree(tmp_path) == before


def test_temporary_names_are_created_exclusively(tmp_path, monkeypatch):
    """A temporary's random name that exists already (another writer's live temporary, its
    ``flock`` held) is never opened: the writer draws another, and the file keeps its
    bytes.  (A regular file of that exact name whose lock is free is a killed writer's
    leftover, removed: tests/io/test_temporaries.py.)"""
    import fcntl

    names = iter(["0123456789abcdef", "fedcba9876543210"])
    monkeypatch.setattr(outputs.secrets, "token_hex", lambda n: next(names))
    taken = tmp_path / ".out.txt.tmp-0123456789abcdef"
    taken.write_text("mine\n")
    with open(taken, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        outputs.write_text(tmp_path / "out.txt", "new\n", outputs.text_kind("note", "new\n"))
    assert taken.read_text() == "mine\n" and (tmp_path / "out.txt").read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == [".out.txt.tmp-0123456789abcdef", "out.txt"]


def test_out_as_a_symbolic_link_is_refused(corpus_bytes, tmp_path):
    """A link at ``--out`` (to a user's file, or dangling) would itself be replaced: refused."""
    (tmp_path / "c.npz").write_bytes(corpus_bytes)
    (tmp_path / "thesis.tex").write_text("x\n")
    (tmp_path / "to_thesis").symlink_to("thesis.tex")
    (tmp_path / "dangling").symlink_to("nowhere")
    before = tree(tmp_path)
    for out in ("to_thesis", "dangling"):
        res = same_lda("split", "--corpus", "c.npz", "--out", out, cwd=tmp_path)
        assert res.returncode == 2
        assert error(res) == f"--out {out}: is a symbolic link; give a new path\n"
    assert tree(tmp_path) == before


def test_our_earlier_output_of_another_kind_is_refused(corpus_bytes, split_path, tmp_path):
    """``synthesize --out`` over a split (ours, but another kind) is refused; over an earlier
    synthetic corpus it is replaced."""
    (tmp_path / "s.npz").write_bytes(split_path.read_bytes())
    (tmp_path / "c.npz").write_bytes(corpus_bytes)
    before = tree(tmp_path)
    res = same_lda("synthesize", "--name", "toy", "--spec", SYN_SPEC, "--out", "s.npz",
                   cwd=tmp_path)
    assert res.returncode == 2
    assert error(res) == ("--out s.npz: exists and is not a synthetic corpus written by "
                          "same-lda; give a new path or remove it\n")
    assert tree(tmp_path) == before
    spec = json.dumps({"like": "kos", "fraction": 0.02, "n_topics": 4, "seed": 1})
    res = same_lda("synthesize", "--name", "toy", "--spec", spec, "--out", "c.npz",
                   cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "c.npz").read_bytes() != corpus_bytes
    assert sorted(os.listdir(tmp_path)) == ["c.npz", "s.npz"]


# --------------------------------------------------------------------------- library writers

def test_library_writers_refuse_a_users_file_and_their_input(split_path, tmp_path):
    """save_npz, a split's save and write_json refuse a user's file (naming the path), and
    never replace one of their inputs even when it is ours of the same kind."""
    from same.data.artefact import save_npz
    from same.data.split import load_split
    from same.experiments.provenance import write_json

    user = tmp_path / "notes.npz"
    user.write_text("mine\n")
    own = tmp_path / "s.npz"
    own.write_bytes(split_path.read_bytes())
    before = tree(tmp_path)
    split = load_split(own)
    with pytest.raises(OutputError, match=rf"^{user}: exists and is not a split written by "
                                          r"same-lda; give a new path or remove it$"):
        split.save(user)
    with pytest.raises(OutputError, match=rf"^{own}: is the input {own}; give a new path$"):
        split.save(own, inputs=[own])
    with pytest.raises(OutputError, match="is not a model written by same-lda"):
        save_npz(own, {"split_sha256": b"x"})
    with pytest.raises(OutputError, match=rf"^{user}: exists and is not a result of this "
                                          "benchmark written by same-lda"):
        write_json(user, {"benchmark": "b"})
    assert tree(tmp_path) == before
    split.save(own)  # an earlier split: replaced
    write_json(tmp_path / "b.json", {"benchmark": "b", "n": 1})
    write_json(tmp_path / "b.json", {"benchmark": "b", "n": 2})
    with pytest.raises(OutputError, match="is not a result of this benchmark"):
        write_json(tmp_path / "b.json", {"benchmark": "other"})
    assert json.loads((tmp_path / "b.json").read_text()) == {"benchmark": "b", "n": 2}


def _rows():
    return [{"method": "same", "label": f"tune_same_{x}", "validation_ll": ll,
             "validation_ll_bidmach": ll, "split_sha256": "0" * 64, "validation_fraction": 0.1,
             "validation_docs_sha256": "1" * 64} for x, ll in (("a", -7.4), ("b", -7.5))]


def test_report_and_tuning_writers_refuse_a_users_file(tmp_path):
    """Tables, figures, tuning.{csv,md,json} and claims.md: a user's file at a target is
    refused with one line naming it, before any of the writer's targets is written; an
    earlier output of ours is replaced."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from same.experiments.tuning import write_tuning
    from same.report.figures import _save
    from same.report.tables import write_table

    user_csv, user_png = tmp_path / "user.csv", tmp_path / "user.png"
    user_csv.write_text("a,b\n1,2\n")
    Image.new("RGB", (2, 2)).save(user_png)  # a PNG, not made by Matplotlib
    before = tree(tmp_path)
    rows = [{"x": 1, "y": 2.5}]
    with pytest.raises(OutputError, match=rf"^{user_csv}: exists and is not a table written "
                                          "by same-lda; give a new path or remove it$"):
        write_table(rows, user_csv, tmp_path / "t.md", "T", [])
    fig = plt.figure()
    with pytest.raises(OutputError, match=rf"^{user_png}: exists and is not a PNG figure "
                                          "written by same-lda"):
        _save(fig, [tmp_path / "f.pdf", user_png])
    points = {r["label"]: {"learning_power": 0.5} for r in _rows()}
    with pytest.raises(OutputError, match=rf"^{user_csv}: exists and is not a tuning choice "
                                          "written by same-lda"):
        write_tuning(_rows(), points, tmp_path / "t.csv", tmp_path / "t.md", user_csv)
    with pytest.raises(OutputError, match=rf"^{user_csv}: exists and is not a tuning table"):
        write_tuning(_rows(), points, user_csv, tmp_path / "t.md", tmp_path / "t.json")
    assert tree(tmp_path) == before  # no target of any refused writer was written
    for _ in range(2):  # earlier outputs of ours: replaced
        write_table(rows, tmp_path / "t.csv", tmp_path / "t.md", "T", [])
        _save(fig, [tmp_path / "f.png", tmp_path / "f.pdf"])
        write_tuning(_rows(), points, tmp_path / "tu.csv", tmp_path / "tu.md",
                     tmp_path / "tu.json")
    plt.close(fig)
    assert sorted(os.listdir(tmp_path)) == ["f.pdf", "f.png", "t.csv", "t.md", "tu.csv",
                                            "tu.json", "tu.md", "user.csv", "user.png"]


def test_report_writers_never_replace_their_input(tmp_path):
    """claims.md at the path of its tuning.json or recovery table, a table over a run's
    trace.csv: refused, the input unchanged."""
    from same.report import claims
    from same.report.tables import write_table

    rec = tmp_path / "topic_recovery.csv"
    rec.write_text("method,final ll\nx,-7\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "trace.csv").write_text("method,label,pass\n")
    before = tree(tmp_path)
    with pytest.raises(OutputError, match=rf"^{rec}: is the input {rec}; give a new path$"):
        claims({}, rec, "setting", scaling=rec)
    with pytest.raises(OutputError, match=rf"^{run / 'trace.csv'}: is the input"):
        write_table([{"x": 1}], run / "trace.csv", tmp_path / "t.md", "T", [],
                    inputs=[run / "trace.csv"])
    with pytest.raises(OutputError, match="exists and is not a table written by same-lda"):
        write_table([{"x": 1}], run / "trace.csv", tmp_path / "t.md", "T", [])
    assert tree(tmp_path) == before


def test_committed_outputs_are_recognised_as_ours():
    """The rules need no change to the committed outputs: each committed figure, benchmark
    result and tuning choice is recognised as ours of its kind, so a rerun replaces it."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import gpu_model
        import parse_speed
        import same_cpu
        import scale
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    from same.experiments.size_cost import BENCHMARK
    from same.experiments.tuning import TUNING_KIND

    results = REPO / "results"
    for fmt in ("png", "pdf"):
        assert outputs.figure_kind(fmt).ours(results / f"verdict_overview.{fmt}")
    assert not outputs.figure_kind("png").ours(results / "verdict_overview.pdf")
    for path, obj in [("bench/same_cpu.json", {"benchmark": same_cpu.BENCHMARK}),
                      ("bench/scale.json", {"benchmark": scale.BENCHMARK}),
                      ("bench/parse.json", {"benchmark": parse_speed.BENCHMARK}),
                      ("gpu/model.json", {"model": gpu_model.MODEL}),
                      ("scaling/same_cpu.json", {"benchmark": BENCHMARK}),
                      ("kos/tuning.json", {"artefact": TUNING_KIND})]:
        assert outputs.json_kind(obj).ours(results / path), path
    md = (results / "kos" / "table1.md").read_text()
    assert outputs.text_kind("table", md).ours(results / "kos" / "table1.md")
    assert not outputs.text_kind("table", "# Table 2\n").ours(results / "kos" / "table1.md")


#: Every option of a script (benchmarks/*.py, the ``python -m`` modules of same/) that names a
#: file it writes: (source, option) → (the command before the option, what follows it).  The
#: same-lda commands' own --out: the tests above and tests/io/test_out_paths_properties.py.
SCRIPT_OUTPUTS = {
    ("same/experiments/size_cost.py", "--out"): (["-m", "same.experiments.size_cost",
                                                  "--factors", "1"], []),
    ("same/experiments/estimate.py", "--out"): (["-m", "same.experiments.estimate", "--plan",
                                                 "plan.json", "--table", "new.txt"], []),
    ("same/experiments/estimate.py", "--table"): (["-m", "same.experiments.estimate", "--plan",
                                                   "plan.json", "--out", "new.json"], []),
    ("same/experiments/timing.py", "--out"): (["-m", "same.experiments.timing", "--split",
                                               "s.npz", "--entries", "[]", "--seeds", "0"], []),
    ("same/model/kernels/ptx.py", "--out"): (["-m", "same.model.kernels.ptx"], []),
    ("benchmarks/crash_repeat.py", "--out"): (["benchmarks/crash_repeat.py", "--runs", "1"], []),
    ("benchmarks/gpu_model.py", "--out"): (["benchmarks/gpu_model.py"], []),
    ("benchmarks/gpu_same.py", "--out"): (["benchmarks/gpu_same.py"], []),
    ("benchmarks/parse_speed.py", "--out"): (["benchmarks/parse_speed.py"], []),
    ("benchmarks/same_cpu.py", "--out"): (["benchmarks/same_cpu.py"], []),
    ("benchmarks/scale.py", "--out"): (["benchmarks/scale.py"], []),
    ("benchmarks/time_workflow.py", "--out"): (["benchmarks/time_workflow.py", "--profile", "p",
                                                "--what", "w"], ["--", "touch", "ran"]),
    ("benchmarks/time_workflow.py", "--log"): (["benchmarks/time_workflow.py", "--profile", "p",
                                                "--what", "w", "--out", "new.json"],
                                               ["--", "touch", "ran"]),
    ("benchmarks/perf_gate.py", "--regex-out"): (["benchmarks/perf_gate.py", "compare.txt"], []),
    ("benchmarks/readme_gpu.py", "--readme"): (["benchmarks/readme_gpu.py"], []),
    ("benchmarks/readme_numbers.py", "--readme"): (["benchmarks/readme_numbers.py"], []),
    ("benchmarks/readme_results.py", "--readme"): (["benchmarks/readme_results.py"], []),
    # a positional output: the page the workflow's page rules write ("" stands for no option)
    ("same/report/html.py", "html"): (["-m", "same.report.html", "compare.txt"], []),
}
_OUTPUT_OPTION = re.compile(
    r"""add_argument\(\s*["'](--out|--log|--table|--regex-out|--readme|html)["']""")


def test_every_script_output_option_is_listed():
    """A script given a new option that names a file it writes must be listed above, so the
    test below tries it: the sources are read for --out, --log, --table, --regex-out,
    --readme and the page argument of same.report.html."""
    found = {(p.relative_to(REPO).as_posix(), m.group(1))
             for p in [*REPO.glob("benchmarks/*.py"), *REPO.glob("same/**/*.py")]
             if p.name != "cli.py" or p.parent.name != "experiments"
             for m in _OUTPUT_OPTION.finditer(p.read_text())}
    assert found == set(SCRIPT_OUTPUTS)


@pytest.mark.parametrize("source, option", sorted(SCRIPT_OUTPUTS),
                         ids=[f"{s.rsplit('/', 1)[1]} {o}" for s, o in sorted(SCRIPT_OUTPUTS)])
def test_scripts_refuse_a_users_file_before_their_work(tmp_path, source, option):
    """Each script checks every file option before its work (a measurement, a run, a compile):
    a user's file there is refused in one line naming the option and the file, exit 2, and
    nothing in the folder changes (the file, the other targets, a command's marker).  For the
    PTX folder, a user's file named like one of its kernels' files."""
    before, after = SCRIPT_OUTPUTS[source, option]
    before = [str(REPO / a) if a.startswith("benchmarks/") else a for a in before]
    (tmp_path / "compare.txt").write_text("# A table\n")
    if source.endswith("ptx.py"):
        (tmp_path / "ptx").mkdir()
        (tmp_path / "ptx/sddmm_0.ptx").write_text("x\n")
        value, target = "ptx", "ptx/sddmm_0.ptx"
    else:
        (tmp_path / "thesis.tex").write_text("x\n")
        value = target = "thesis.tex"
    was = tree(tmp_path)
    named = [] if not option.startswith("--") else [option]
    res = subprocess.run([sys.executable, *before, *named, value, *after], capture_output=True,
                         text=True, cwd=tmp_path, timeout=120)
    if option == "--readme":  # it rewrites marked blocks: a file without them, status 1
        assert res.returncode == 1, res.stderr
        assert res.stderr.startswith(f"{target}: README needs one <!-- bench:"), res.stderr
        assert res.stderr.count("\n") == 1, res.stderr
    else:
        assert res.returncode == 2, res.stderr
        line = error(res)
        assert line.startswith(f"{' '.join([*named, target])}: exists and is not a"), line
        assert line.endswith(" written by same-lda; give a new path or remove it\n"), line
    assert tree(tmp_path) == was


#: Bad arguments of every script with an option that takes a number or a name from a set:
#: (script, arguments) → the option and its refusal.  Each was a traceback after (or during)
#: the work it began: `unknown corpus 'bogus'`, InvalidParameterError, ZeroDivisionError,
#: CalledProcessError; now argparse's one line, exit 2, before any work.
_WHOLE, _ABOVE_0 = "must be a whole number of at least", "must be a finite number above 0"
_BELOW_2_30 = "must be a finite number in (0, 1.07374e+09)"
SCRIPT_BAD_ARGUMENTS = {
    ("benchmarks/same_cpu.py", "--dataset bogus --quick"):
        "--dataset: invalid choice: 'bogus' (choose from 'enron', 'kos', 'nips', 'nytimes', "
        "'pubmed')",
    ("benchmarks/same_cpu.py", "--n-topics 0"): f"--n-topics: {_WHOLE} 1, not '0'",
    ("benchmarks/same_cpu.py", "--passes 0"): f"--passes: {_WHOLE} 2, not '0'",
    ("benchmarks/same_cpu.py", "--n-samples nan"): f"--n-samples: {_BELOW_2_30}, not 'nan'",
    ("benchmarks/same_cpu.py", "--n-samples -5"): f"--n-samples: {_BELOW_2_30}, not '-5'",
    ("benchmarks/same_cpu.py", "--n-inner -1"): f"--n-inner: {_WHOLE} 1, not '-1'",
    ("benchmarks/same_cpu.py", "--quality-passes 0"): f"--quality-passes: {_WHOLE} 1, not '0'",
    ("benchmarks/same_cpu.py", "--cgs-iterations 1.5"):
        f"--cgs-iterations: {_WHOLE} 1, not '1.5'",
    ("benchmarks/scale.py", "--fractions 0 --n-topics 4"):
        "--fractions: must be a whole number from 1 to 150000, not '0'",
    ("benchmarks/scale.py", "--n-topics 0"): f"--n-topics: {_WHOLE} 1, not '0'",
    ("benchmarks/parse_speed.py", "--lines 0"):
        "--lines: must be a whole number from 5 to 69679427, not '0'",
    ("benchmarks/gpu_same.py", "--scale 0"): "--scale: must be a finite number in (0, 1], not '0'",
    ("benchmarks/gpu_same.py", "--backend tpu"):
        "--backend: invalid choice: 'tpu' (choose from 'numpy', 'cupy')",
    ("benchmarks/gpu_same.py", "--n-topics 0"):
        "--n-topics: must be a whole number from 1 to 1024, not '0'",
    ("benchmarks/gpu_same.py", "--n-inner 0"): f"--n-inner: {_WHOLE} 1, not '0'",
    ("benchmarks/gpu_same.py", "--m-values 1 -5"): f"--m-values: {_BELOW_2_30}, not '-5'",
    ("benchmarks/gpu_same.py", "--summed-m-values inf"):
        f"--summed-m-values: {_BELOW_2_30}, not 'inf'",
    ("benchmarks/gpu_same.py", "--samplers fast"):
        "--samplers: invalid choice: 'fast' (choose from 'nonzero', 'summed')",
    ("benchmarks/gpu_same.py", "--passes 1"): f"--passes: {_WHOLE} 2, not '1'",
    ("benchmarks/gpu_model.py", "--positive 0.5"):
        "--positive: must be a finite number in [1, 256], not '0.5'",
    # too large: an OverflowError traceback (1e308), int32 counts or a huge temporary file
    ("benchmarks/gpu_model.py", "--positive 1e308"):
        "--positive: must be a finite number in [1, 256], not '1e308'",
    ("benchmarks/gpu_same.py", "--n-topics 1025"):
        "--n-topics: must be a whole number from 1 to 1024, not '1025'",
    ("benchmarks/gpu_same.py", "--m-values 1 1e300"): f"--m-values: {_BELOW_2_30}, not '1e300'",
    ("benchmarks/same_cpu.py", "--n-samples 1073741824"):
        f"--n-samples: {_BELOW_2_30}, not '1073741824'",
    ("benchmarks/parse_speed.py", "--lines 1000000000000"):
        "--lines: must be a whole number from 5 to 69679427, not '1000000000000'",
    ("benchmarks/history.py", "--commits 1"): f"--commits: {_WHOLE} 2, not '1'",
    ("benchmarks/history.py", "--rounds 0"): f"--rounds: {_WHOLE} 1, not '0'",
    ("benchmarks/crash_repeat.py", "--runs 0"): f"--runs: {_WHOLE} 1, not '0'",
    ("same/experiments/size_cost.py", "--factors 1 0"): f"--factors: {_ABOVE_0}, not '0'",
    ("same/experiments/size_cost.py", "--factors 1 --passes 3"): f"--passes: {_WHOLE} 4, not '3'",
    ("same/experiments/size_cost.py", "--factors 1 --n-components 0"):
        f"--n-components: {_WHOLE} 1, not '0'",
    ("same/experiments/size_cost.py", "--factors 1 --n-copies nan"):
        f"--n-copies: {_ABOVE_0}, not 'nan'",
    ("same/experiments/size_cost.py", "--factors 1 --threads 0"): f"--threads: {_WHOLE} 1, not '0'",
    ("same/experiments/timing.py", "--split s --entries {} --seeds -1"):
        f"--seeds: {_WHOLE} 0, not '-1'",
    ("same/experiments/timing.py", "--split s --entries {} --seeds 0 --repeats 0"):
        f"--repeats: {_WHOLE} 1, not '0'",
    ("same/experiments/timing.py", "--split s --entries {} --seeds 0 --cap-seconds -1"):
        f"--cap-seconds: {_ABOVE_0}, not '-1'",
}


@pytest.mark.parametrize("source, arguments", sorted(SCRIPT_BAD_ARGUMENTS),
                         ids=[f"{s.rsplit('/', 1)[1]} {a}" for s, a in sorted(SCRIPT_BAD_ARGUMENTS)])
def test_scripts_refuse_a_bad_argument_in_one_line_naming_it(tmp_path, source, arguments):
    """From a folder that is not the repository's: the option named, exit 2, nothing done."""
    prog = source.rsplit("/", 1)[1]
    if source.startswith("same/"):
        module = source[:-3].replace("/", ".")
        command, prog = ["-m", module], f"python -m {module}"
    else:
        command = [str(REPO / source)]
    res = subprocess.run([sys.executable, *command, *arguments.split(), "--out", "new.json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"{prog}: error: argument {SCRIPT_BAD_ARGUMENTS[source, arguments]}\n"
    assert not list(tmp_path.iterdir())


_NUMBER_TYPE = re.compile(r"add_argument\([^)]*type=(int|float)\b")


def test_every_number_option_is_parsed_with_its_range():
    """Options of the scripts and commands that take a number use same.io.cli's whole_number
    or real_number (a range, one line naming the option at parse time), never a bare int or
    float, which admits 0, -5 or nan and fails after work began."""
    bare = [p.relative_to(REPO).as_posix()
            for p in [*REPO.glob("benchmarks/*.py"), *REPO.glob("same/**/*.py")]
            if _NUMBER_TYPE.search(p.read_text())]
    assert bare == []


def test_scale_benchmarks_children_import_it_from_any_folder(tmp_path, monkeypatch):
    """Its child processes did ``sys.path.insert(0, 'benchmarks')``: from any folder but the
    repository's, every run failed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("scale_bench", REPO / "benchmarks/scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    monkeypatch.chdir(tmp_path)
    assert scale._baseline_rss() > 0


def test_parsed_cache_is_rebuilt_but_a_link_there_is_kept(tmp_path, cache_path):
    """The parsed-corpus cache lives in our cache folder: a damaged one is rebuilt (any
    regular file there is ours), but a symbolic link or a folder at its name is left as it is
    (one CacheWarning) and the corpus still loads."""
    from test_corpus import GOOD, load_bad

    from same.data.corpus import CacheWarning

    first = load_bad(tmp_path, cache_path, [3, 4, 5], GOOD)
    cached = cache_path / "docword.toy.npz"
    cached.write_bytes(b"")  # damaged: rebuilt
    with pytest.warns(CacheWarning, match="unreadable parsed-corpus cache"):
        load_bad(tmp_path, cache_path, [3, 4, 5], GOOD)
    assert outputs.npz_kind("parsed-corpus cache").ours(cached) and cached.stat().st_size > 0
    cached.unlink()
    (tmp_path / "mine.npz").write_text("mine\n")
    cached.symlink_to(tmp_path / "mine.npz")
    with pytest.warns(CacheWarning) as caught:
        again = load_bad(tmp_path, cache_path, [3, 4, 5], GOOD)
    assert [str(w.message) for w in caught][-1] == (
        f"{cached}: cannot write the parsed cache ({cached}: is a symbolic link; give a new "
        "path)")
    assert (again.counts != first.counts).nnz == 0
    assert (tmp_path / "mine.npz").read_text() == "mine\n" and cached.is_symlink()


# ------------------------------------------------------------- further cases of the same classes

def test_out_under_a_file_is_refused_before_any_work(corpus_bytes, split_path, tmp_path):
    """``fit --out afile/r`` (``afile`` a file) trained the whole run, then failed with
    ``[Errno 17] File exists: 'afile'``.  Now every command refuses it before any work: the
    fit below has a budget it could not finish within the helper's 300 s timeout."""
    (tmp_path / "c.npz").write_bytes(corpus_bytes)
    (tmp_path / "afile").write_text("mine\n")
    before = tree(tmp_path)
    spec = json.dumps({**json.loads(SPEC), "budget": 100000})
    res = same_lda("fit", "--spec", spec, "--split", str(split_path), "--out", "afile/r",
                   "--no-progress", cwd=tmp_path)
    assert error(res) == (f"--out afile/r: {tmp_path / 'afile'} is a file, not a folder; give a "
                          "new folder for this run's outputs\n")
    res = same_lda("synthesize", "--name", "toy", "--spec", SYN_SPEC, "--out", "afile/x.npz",
                   cwd=tmp_path)
    assert error(res) == (f"--out afile/x.npz: {tmp_path / 'afile'} is a file, not a folder; "
                          "give a new path\n")
    assert tree(tmp_path) == before


def test_out_ending_in_a_slash_is_refused_for_a_file(corpus_bytes, tmp_path):
    """``synthesize --out newdir/`` wrote a file named ``newdir`` (pathlib drops the slash)."""
    (tmp_path / "c.npz").write_bytes(corpus_bytes)
    before = tree(tmp_path)
    for command in (["synthesize", "--name", "toy", "--spec", SYN_SPEC],
                    ["split", "--corpus", "c.npz"]):
        res = same_lda(*command, "--out", "newdir/", cwd=tmp_path)
        what = "synthetic corpus" if command[0] == "synthesize" else "split"
        assert error(res) == (f"--out newdir/: ends in /, which names a folder; give the path "
                              f"of a {what} file\n")
    assert tree(tmp_path) == before


def test_inputs_that_are_not_regular_files_are_named_as_such(tmp_path):
    """``check /dev/null`` and ``split --corpus /dev/zero`` (or a fifo) said "no such file":
    the path exists, it is not a regular file."""
    os.mkfifo(tmp_path / "fifo")
    assert error(same_lda("check", "/dev/null")) == (
        "/dev/null: is neither a regular file nor a folder, so no artefact of same-lda\n")
    for corpus in ("/dev/zero", str(tmp_path / "fifo")):
        res = same_lda("split", "--corpus", corpus, "--out", str(tmp_path / "s.npz"))
        assert error(res) == (f"{corpus}: is not a regular file, so not a synthetic corpus file; "
                              "rerun `same-lda synthesize` to rewrite it\n")
    assert not (tmp_path / "s.npz").exists()
