"""Issue 51: Ctrl-C in the first half second of a command, while its modules import (NumPy,
SciPy, numba, scikit-learn), ends like Ctrl-C during a run: one line, exit 130, nothing written.
It printed a 15–42-line KeyboardInterrupt traceback: the handler was installed only after the
command line's first heavy import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SPEC = json.dumps({"method": "same", "n_components": 3, "doc_topic_prior": 0.1,
                   "topic_word_prior": 0.1, "seed": 0, "budget": 1,
                   "params": {"n_copies": 2.0}})

# The process sends itself SIGINT at the moment Python starts importing MODULE: exactly "Ctrl-C
# during that import", wherever in the command it falls.
_INTERRUPT_AT_IMPORT = """
import os, signal, sys

MODULE = sys.argv[1]


class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == MODULE:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


assert MODULE not in sys.modules
sys.meta_path.insert(0, Interrupt())
from same.experiments.cli import main
sys.exit(main(sys.argv[2:], prog="same-lda"))
"""


@pytest.mark.parametrize("module", ["numpy", "scipy.sparse", "same.model.backend", "sklearn",
                                    "numba"])
def test_ctrl_c_while_the_command_imports_is_one_line_and_exit_130(module, split_path, tmp_path):
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-c", _INTERRUPT_AT_IMPORT, module, "fit", "--spec",
                          SPEC, "--split", str(split_path), "--out", str(out), "--no-progress"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert (res.returncode, res.stderr) == (130, "same-lda: stopped by SIGINT\n"), res.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_usage_error_and_help_still_exit_as_argparse_does(capsys):
    """argparse's own exits pass through main unchanged, and main gives the caller's SIGINT and
    SIGTERM handlers back."""
    import signal

    from same.experiments.cli import main

    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as exc:
        main(["fit", "--spec", SPEC])
    assert exc.value.code == 2
    assert "the following arguments are required: --split, --out" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
