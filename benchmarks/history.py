"""Kernel benchmark history: asv over main's commits in one interleaved run, and its figure.

    python benchmarks/history.py --commits 32        # run asv, then plot (the refresh)
    python benchmarks/history.py plot                # the figure and README from the results

``run`` measures COMMITS commits of main's first-parent line from SUITE_FIRST (the oldest commit
the current suite's kernel benchmarks run on) to HEAD: every commit that changed same/kernels,
the first and HEAD, the rest evenly spread. One ``asv run --interleave-rounds`` over all of
them (asv.history.json: results in benchmarks/history/results, committed; env in the ignored
.asv/env-history), the perf gate's benchmarks and settings (numpy backend, one numba thread,
spawned processes), under a fixed machine name with the machine's facts. ``plot`` writes
history/kernels.png (one panel per benchmark, asv's median and interquartile range against
commit, the commits that changed same/kernels marked) and history/README.md.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from same.io.cli import ArgumentParser, whole_number

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONFIG = HERE / "asv.history.json"
OUT = HERE / "history"
RESULTS = OUT / "results"
RUN_INFO = OUT / "run.json"
FIGURE = OUT / "kernels.png"
BENCH = r"^bench_kernels\.\w+\.time_\w+\('numpy'"
#: where the kernels are and were (same/kernels until the layers, issue 41)
KERNELS = ("same/model/kernels", "same/kernels")
# the oldest commit the current suite's kernel benchmarks run on (bench_kernels.py and
# common.py as they are since then; StepSettings, shaped_corpus and the kernels' signatures too)
SUITE_FIRST = "10a5373"
MACHINE = "epyc-2core"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def first_parent(first: str = SUITE_FIRST, head: str = "HEAD") -> list[str]:
    """main's first-parent commits from FIRST to HEAD, oldest first (full hashes)."""
    return git("rev-list", "--first-parent", "--reverse", f"{first}^..{head}").split()


def kernel_commits() -> set[str]:
    """Every commit that changed the kernels (git log -- same/model/kernels same/kernels)."""
    return set(git("log", "--format=%H", "--", *KERNELS).split())


def pick_commits(line: list[str], kernel: set[str], n: int) -> list[str]:
    """N commits of LINE (oldest first) in its order: its first and last, every kernel commit,
    the rest evenly spread over the others (all kernel commits even where they alone pass N)."""
    keep = {line[0], line[-1]} | (kernel & set(line))
    rest = [c for c in line if c not in keep]
    k = min(max(n - len(keep), 0), len(rest))
    keep |= {rest[int((j + 0.5) * len(rest) / k)] for j in range(k)}
    return [c for c in line if c in keep]


def marked(measured: list[str], kernel: set[str]) -> list[str]:
    """The measured commits that changed same/kernels, in measured order."""
    return [c for c in measured if c in kernel]


def machine_facts() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        info = dict(line.split(":", 1) for line in
                    subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
                    if ":" in line)
        info = {k.strip(): v.strip() for k, v in info.items()}
        cpu = (f"{info['Model name']} family {info.get('CPU family', '?')} model "
               f"{info.get('Model', '?')}" + (" (KVM guest)" if "Hypervisor vendor" in info
                                                else ""))
    except (OSError, KeyError, ValueError):
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"arch": platform.machine(), "cpu": cpu, "num_cpu": str(os.cpu_count()),
            "ram": str(ram), "os": f"{platform.system()} {platform.release()}"}


def asv(*args: str, env=None) -> None:
    subprocess.run([sys.executable, "-m", "asv", *args, "--config", str(CONFIG)], cwd=HERE,
                   check=True, env=env)


def run(n: int, rounds: int, machine: str) -> None:
    commits = pick_commits(first_parent(), kernel_commits(), n)
    facts = machine_facts()
    print(f"history: {len(commits)} commits, {rounds} interleaved rounds on {machine}: {facts}")
    shutil.rmtree(RESULTS, ignore_errors=True)  # one run: no results of an earlier one
    asv("machine", "--yes", "--machine", machine, *[a for k, v in facts.items()
                                                    for a in (f"--{k}", v)])
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    loads, stop = [], threading.Event()

    def sample():
        while not stop.wait(20):
            loads.append(os.getloadavg()[0])

    threading.Thread(target=sample, daemon=True).start()
    start = time.time()
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as hashes:
        hashes.write("\n".join(commits) + "\n")
        hashes.flush()
        # status ignored: a benchmark that fails at one commit is recorded as failed there
        subprocess.run([sys.executable, "-m", "asv", "run", "--config", str(CONFIG),
                        "--interleave-rounds", "-a", f"rounds={rounds}", "--bench", BENCH,
                        "--launch-method", "spawn", "--machine", machine, "--show-stderr",
                        f"HASHFILE:{hashes.name}"], cwd=HERE, env=env)
    stop.set()
    _write_own(RUN_INFO, json.dumps({
        "machine": machine, **facts, "rounds": rounds, "numba_threads": 1, "bench": BENCH,
        "commits": commits, "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(start)),
        "wall_s": round(time.time() - start),
        "load_1min": [round(min(loads, default=0), 2), round(max(loads, default=0), 2),
                      round(sum(loads) / max(len(loads), 1), 2)],
        "command": f"python benchmarks/history.py --commits {n} --rounds {rounds}"},
        indent=1) + "\n")


def load(machine: str | None = None) -> tuple[dict, dict]:
    """The committed results: ({benchmark: {commit: (median, q25, q75) in s}}, run info).

    A benchmark is its asv name less the module, with its parameters less the backend."""
    from asv.results import iter_results_for_machine

    info = json.loads(RUN_INFO.read_text())
    names = {k: v["param_names"] for k, v in
             json.loads((RESULTS / "benchmarks.json").read_text()).items() if k != "version"}
    series: dict = {}
    for res in iter_results_for_machine(str(RESULTS), machine or info["machine"]):
        for key in sorted(res.get_all_result_keys()):
            if not re.match(r"bench_kernels\.\w+\.time_", key):
                continue
            params = res.get_result_params(key)
            for combo, value, stats in zip(itertools.product(*params),
                                           res.get_result_value(key, params),
                                           res.get_result_stats(key, params)):
                if combo[0] != "'numpy'" or value is None or math.isnan(value):
                    continue
                label = key.split(".", 1)[1] + "".join(
                    f", {n}={v.strip(chr(39))}" for n, v in zip(names[key][1:], combo[1:]))
                q = stats or {}
                series.setdefault(label, {})[res.commit_hash] = (
                    value, q.get("q_25", value), q.get("q_75", value))
    return series, info


def plot(figure: Path = FIGURE, machine: str | None = None) -> list[str]:
    """history/kernels.png (and history/README.md beside the default figure) from the results;
    returns the measured commits it marks as changing same/kernels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series, info = load(machine)
    have = {c for s in series.values() for c in s}
    measured = [c for c in git("rev-list", "--first-parent", "--reverse", "HEAD").split()
                if c in have]
    marks = marked(measured, kernel_commits())
    x = {c: i for i, c in enumerate(measured)}
    dates = [git("log", "-1", "--format=%cs", c).strip() for c in (measured[0], measured[-1])]
    order = ["Kernels.time_sddmm", "Kernels.time_sample_accumulate", "MinibatchStep.time_step"]
    labels = sorted(series, key=lambda s: (  # rows: benchmark (and sampler); columns: K
        order.index(s.split(",")[0]) if s.split(",")[0] in order else 9,
        re.sub(r"n_topics=\d+", "", s), int(re.search(r"n_topics=(\d+)", s + "n_topics=0")[1])))
    rows = (len(labels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, sharex=True, figsize=(14, 2.5 * rows + 2.2),
                             squeeze=False)
    for ax, label in zip(axes.flat, labels):
        pts = sorted(series[label].items(), key=lambda kv: x[kv[0]])
        ms = [(x[c], v[0] * 1e3, (v[0] - v[1]) * 1e3, (v[2] - v[0]) * 1e3) for c, v in pts]
        for c in marks:
            ax.axvline(x[c], color="tab:orange", alpha=0.3, lw=2)
        ax.errorbar([m[0] for m in ms], [m[1] for m in ms], yerr=[[m[2] for m in ms],
                    [m[3] for m in ms]], fmt="o-", ms=3.5, lw=1, capsize=2, color="tab:blue",
                    label="asv median (bar: interquartile range)")
        ax.plot([x[c] for c, _ in pts if c in marks], [v[0] * 1e3 for c, v in pts if c in marks],
                "o", ms=6, color="tab:orange", label="commit that changed same/kernels")
        ax.set_title(label, fontsize=10)
        ax.set_ylabel("time (ms)")
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.flat[len(labels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xticks(range(len(measured)), [c[:7] for c in measured], rotation=90, fontsize=8,
                      family="monospace")
        ax.set_xlabel("commit of main, first-parent order")
        for tick, c in zip(ax.get_xticklabels(), measured):
            tick.set_color("tab:orange" if c in marks else "black")
    axes.flat[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(
        f"Kernel benchmarks (asv, numpy backend) over {len(measured)} commits of main, "
        f"{dates[0]} to {dates[1]}\nmachine {info['machine']}: {info['cpu']}, {info['num_cpu']}"
        f" cores, {int(info['ram']) / 2**30:.0f} GiB; NUMBA_NUM_THREADS={info['numba_threads']};"
        f"\none asv run {info['started']}, {info['rounds']} interleaved rounds, shared machine"
        f" (1-min load {info['load_1min'][0]}-{info['load_1min'][1]}); orange: the commit "
        f"changed same/kernels", fontsize=10)
    fig.tight_layout()
    from same.io.outputs import figure_kind, write_file

    write_file(figure, lambda f: fig.savefig(f, format="png", dpi=90), figure_kind("png"))
    plt.close(fig)
    if figure == FIGURE:
        write_readme(info, measured, marks, labels, series)
    return marks


def _write_own(path: Path, text: str) -> None:
    """Replace one of this script's own files in benchmarks/history/ (run.json, README.md) by
    one rename (:mod:`same.io.outputs`): a reader never sees half of one."""
    from same.io.outputs import Kind, write_text

    write_text(path, text, Kind(f"history file {path.name}", ours=lambda p: True))


def write_readme(info, measured, marks, labels, series) -> None:
    rows = [f"| `{c[:7]}` | {git('log', '-1', '--format=%cs', c).strip()} | "
            f"{'yes' if c in marks else ''} | {sum(c in s for s in series.values())}/"
            f"{len(labels)} | {git('log', '-1', '--format=%s', c).strip()[:70].replace('|', '/')} |"
            for c in measured]
    load = info["load_1min"]
    _write_own(OUT / "README.md", f"""# Kernel benchmark history

Generated by `benchmarks/history.py`. Refresh (run and figure, about {info['wall_s'] / 60:.0f}
minutes here): `{info['command']}`; redraw from the committed results:
`python benchmarks/history.py plot`.

![kernel benchmark history](kernels.png)

- **Run**: one `asv run --interleave-rounds -a rounds={info['rounds']}` over all
  {len(measured)} commits, started {info['started']}, {info['wall_s']} s wall; config
  `benchmarks/asv.history.json`, results (asv's JSON) in `results/`, so
  `asv publish --config benchmarks/asv.history.json` makes the HTML; benchmarks
  `{info['bench']}`, `--launch-method spawn`, `NUMBA_NUM_THREADS={info['numba_threads']}`.
- **Machine** `{info['machine']}`: {info['cpu']}, {info['num_cpu']} cores,
  {int(info['ram']) / 2**30:.1f} GiB RAM, {info['os']}. It was shared with other jobs during the
  run (1-minute load average {load[0]} to {load[1]}, mean {load[2]}); the interleaved rounds
  spread that drift over all commits rather than biasing some.
- **Panels**, one per benchmark and parameters (numpy backend, K = n_topics):
  `Kernels.time_sddmm` (SDDMM: μ on the nonzeros of a KOS-sized minibatch),
  `Kernels.time_sample_accumulate` (the Poisson sample-and-accumulate kernel) and
  `MinibatchStep.time_step` (one Algorithm 3 minibatch, 5 sweeps, per sampler). Each point is
  asv's median, its bar the interquartile range of asv's samples; x is the commit in main's
  first-parent order. Orange: a commit that changed `same/kernels` (`git log -- same/kernels`).
- **Commits**: every commit that changed `same/kernels` from `{SUITE_FIRST}` (the oldest the
  current suite runs on) to HEAD, both ends, the rest evenly spread between.

| commit | date | changed same/kernels | benchmarks measured | subject |
|---|---|---|---|---|
""" + "\n".join(rows) + "\n")


def main(argv=None) -> None:
    p = ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", nargs="?", choices=["all", "run", "plot"], default="all")
    p.add_argument("--commits", type=whole_number(2), default=32,
                   help="commits measured, both ends included")
    p.add_argument("--rounds", type=whole_number(1), default=2)
    p.add_argument("--machine", default=MACHINE)
    a = p.parse_args(argv)
    if a.mode in ("all", "plot"):  # before the asv run: a figure it may not replace
        from same.io.outputs import check_option, figure_kind

        check_option(FIGURE, figure_kind("png"), p.prog, "the figure")
    if a.mode in ("all", "run"):
        run(a.commits, a.rounds, a.machine)
    if a.mode in ("all", "plot"):
        plot()


if __name__ == "__main__":
    main()
