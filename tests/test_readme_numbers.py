"""README.md's speed and memory blocks are the render of the committed results/bench/*.json, and
every figure in that render comes from (or is computed from) a field of those files."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "readme_numbers.py"
BENCH = REPO / "results" / "bench"

spec = importlib.util.spec_from_file_location("readme_numbers", SCRIPT)
rn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rn)

# A figure: digits with separators, a decimal part, or a "1/N" fraction; not inside a word
# (float32), an inline code span (`draw_scaling_2_threads`) or one of the labels below.
NUMBER = re.compile(r"(?<![\w.])[−-]?\d[\d,]*(?:\.\d+)?(?:/\d+)?")
# Not figures: thread counts name the file's keys ("1_threads", "2t_same_pass20"), and the
# paper's algorithm number.
LABELS = re.compile(r"`[^`]*`|\d+[-\s]threads?\b|Algorithm 3")


def figures(text: str) -> list[str]:
    return NUMBER.findall(LABELS.sub(" ", text))


def bench(name: str) -> dict:
    return json.loads((BENCH / f"{name}.json").read_text())


def numeric_leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from numeric_leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from numeric_leaves(v, path + (i,))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and obj:
        yield path


def scaled(data: dict, path: tuple, factor: float) -> dict:
    out = copy.deepcopy(data)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = node[path[-1]] * factor
    return out


def test_readme_blocks_equal_the_render_of_the_committed_json():
    readme = (REPO / "README.md").read_text()
    assert rn.stale_blocks(readme, rn.render_blocks(BENCH)) == []
    res = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                         text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("name", sorted(rn.BLOCKS))
def test_every_figure_in_a_block_comes_from_the_json(name):
    """Scaling one field at a time by 1.7 must change each figure of the render (aligned as a
    diff, since a figure may switch a clause): a figure no field changes was typed."""
    data = bench(name)
    render = rn.BLOCKS[name]
    base = figures(render(data))
    assert len(base) > 40
    moved = set()
    for path in numeric_leaves(data):
        other = figures(render(scaled(data, path, 1.7)))
        for op, i1, i2, _, _ in SequenceMatcher(None, base, other, autojunk=False).get_opcodes():
            moved |= set(range(i1, i2)) if op != "equal" else set()
    typed = [f for i, f in enumerate(base) if i not in moved]
    assert typed == []


def test_check_fails_on_a_typed_edit_or_a_new_measurement(tmp_path):
    readme = tmp_path / "README.md"
    text = (REPO / "README.md").read_text()
    readme.write_text(text.replace("0.110 s per pass", "0.100 s per pass", 1))
    run = [sys.executable, str(SCRIPT), "--readme", str(readme)]
    res = subprocess.run(run + ["--check"], capture_output=True, text=True)
    assert res.returncode == 1 and "same_cpu" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1

    measured = tmp_path / "bench"
    measured.mkdir()
    cpu = bench("same_cpu")
    cpu["speed"]["2_threads"]["summed"]["median_seconds_per_pass_after_first"] = 0.0987
    (measured / "same_cpu.json").write_text(json.dumps(cpu))
    (measured / "scale.json").write_text((BENCH / "scale.json").read_text())
    readme.write_text(text)
    res = subprocess.run(run + ["--bench", str(measured), "--check"], capture_output=True,
                         text=True)
    assert res.returncode == 1 and "same_cpu" in res.stderr and "scale" not in res.stderr.split(
        "differ")[0]
    assert subprocess.run(run + ["--bench", str(measured)]).returncode == 0
    new = readme.read_text()
    assert "0.099 s per pass" in new and "0.110 s per pass" not in new


def test_rewrite_touches_nothing_outside_the_markers(tmp_path):
    readme = tmp_path / "README.md"
    text = (REPO / "README.md").read_text()
    stale = re.sub(r"(<!-- bench:scale:begin -->\n).*?(<!-- bench:scale:end -->)",
                   r"\1typed by hand\n\2", text, flags=re.S)
    readme.write_text("# a heading someone else added\n" + stale)
    readme.chmod(0o644)
    assert rn.main(["--readme", str(readme)]) == 0
    assert readme.read_text() == "# a heading someone else added\n" + text
    assert readme.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]


def test_missing_markers_are_refused(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    assert rn.main(["--readme", str(readme), "--check"]) == 1
    assert rn.main(["--readme", str(readme)]) == 1
    assert readme.read_text() == "no markers here\n"
    assert "bench:same_cpu" in capsys.readouterr().err
