"""topic_recovery.csv, the one report input the claims read without a check before: its one
reader (same.report.recovery.load_recovery) refuses a hand-edited, truncated or foreign file in
one line naming it, before a number reaches the claims' text, and reads what the table writer
wrote back exactly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from same.report.recovery import RECOVERY_COLUMNS, RecoveryError, load_recovery
from same.report.tables import write_table

REPO = Path(__file__).resolve().parents[2]
FIX = "rerun the topic_recovery rule"
ROWS = [{"method": "true topics (oracle)", "final ll": -7.125, "mean matched TV": 0.0,
         "median matched TV": 0.0, "max matched TV": 0.0, "true topics' mutual TV": 0.8125},
        {"method": "SAME m=100", "final ll": -7.5, "mean matched TV": 0.1 / 3,
         "median matched TV": 0.03125, "max matched TV": 0.25,
         "true topics' mutual TV": 0.8125}]


def test_what_the_table_writer_wrote_is_read_back_exactly(tmp_path):
    """Rows in :data:`RECOVERY_COLUMNS`' order through write_table's CSV: the same values (a
    float's shortest repr survives the CSV), the method names as text."""
    csv = tmp_path / "topic_recovery.csv"
    write_table(ROWS, csv, tmp_path / "topic_recovery.md", "Topic recovery", [])
    assert list(ROWS[0]) == list(RECOVERY_COLUMNS)
    assert load_recovery(csv) == ROWS


def test_the_committed_tables_pass_and_equal_pandas_reading():
    """Every committed topic_recovery.csv passes the checks and reads as pandas reads it (the
    claims' numbers did not move with the reader)."""
    paths = sorted(REPO.glob("results/**/topic_recovery.csv"))
    assert paths
    for path in paths:
        assert load_recovery(path) == pd.read_csv(path).to_dict("records"), path


def _header(cols=RECOVERY_COLUMNS) -> str:
    return ",".join(f'"{c}"' if "'" in c else c for c in cols) + "\n"


GOOD_ROW = "SAME m=100,-7.5,0.03,0.02,0.25,0.81\n"


@pytest.mark.parametrize("text, message", [
    (b"", "empty, not a topic-recovery table"),
    (b"\xff\xfe" + b"method\n", "unreadable topic-recovery table (UnicodeDecodeError: 'utf-8' "
     "codec can't decode byte 0xff in position 0: invalid start byte)"),
    ("label,final ll\nsame,-7.5\n", "columns ['label', 'final ll'], not a topic-recovery "
     "table's " + str(list(RECOVERY_COLUMNS))),
    (_header(), "no rows"),
    (_header() + ",-7.5,0.03,0.02,0.25,0.81\n", "row 1: no method name"),
    (_header() + "x," + GOOD_ROW, "row 1: 7 fields, not 6"),
    (_header() + GOOD_ROW.replace("\n", ",\n"), "row 1: 7 fields, not 6"),
    (_header() + '"SAME\nm=100",-7.5,0.03,0.02,0.25,x\n',
     "row 1 ('SAME\\nm=100'): \"true topics' mutual TV\" is 'x', not a distance in [0, 1]"),
    (_header() + GOOD_ROW + "CGS,nan,0.03,0.02,0.25,0.81\n",
     "row 2 ('CGS'): 'final ll' is 'nan', not a finite number"),
    (_header() + "CGS,-7.5,,0.02,0.25,0.81\n",
     "row 1 ('CGS'): 'mean matched TV' is '', not a distance in [0, 1]"),
    (_header() + "CGS,-7.5,0.03,0.02,1.5,0.81\n",
     "row 1 ('CGS'): 'max matched TV' is '1.5', not a distance in [0, 1]"),
    (_header() + "CGS,-7.5,0.03,0.02,0.25,-0.1\n",
     "row 1 ('CGS'): \"true topics' mutual TV\" is '-0.1', not a distance in [0, 1]"),
    (_header() + "CGS,-7.5,0.03,abc,0.25,0.8\n",
     "row 1 ('CGS'): 'median matched TV' is 'abc', not a distance in [0, 1]"),
])
def test_a_malformed_table_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "topic_recovery.csv"
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    with pytest.raises(RecoveryError) as err:
        load_recovery(path)
    assert str(err.value) == f"{path}: {message}; {FIX}"
    assert "\n" not in str(err.value)


def test_a_missing_table_is_one_line_naming_it(tmp_path):
    path = tmp_path / "topic_recovery.csv"
    with pytest.raises(RecoveryError) as err:
        load_recovery(path)
    assert str(err.value) == (f"{path}: unreadable topic-recovery table (FileNotFoundError: "
                              f"[Errno 2] No such file or directory: '{path}'); {FIX}")
