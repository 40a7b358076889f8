"""Issue 51 item 2: the input gate reads an object array (or a DataFrame's columns) as counts
only where every entry is a number; anything else is the gate's one line naming X.

An object array holding a ``timedelta``, ``datetime``, ``complex`` or ``dict`` ended in
``TypeError: float() argument must be ...`` from scikit-learn's conversion; a DataFrame column
of Periods, Intervals or Timedeltas beside integers in ``TypeError`` or numpy's
``DTypePromotionError``; ``np.datetime64`` in an object array was read as a count of years.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from same.data.count_matrix import CountsError, validate_counts
from same.model.sampler import SameLDA

BASE = [[1, 2, 0], [0, 1, 3]]


def fit_error(X) -> str:
    """The one line SameLDA.fit refuses X with (a ValueError: the gate's CountsError)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(CountsError) as e:
            SameLDA(2, n_copies=1, max_iter=1, random_state=0).fit(X)
    return str(e.value)


def with_entry(value) -> np.ndarray:
    a = np.array(BASE, dtype=object)
    a[1, 0] = value
    return a


@pytest.mark.parametrize("value, message", [
    (datetime.timedelta(days=1), "X: holds datetime.timedelta(days=1) (timedelta), not a number "
                                 "of tokens"),
    (datetime.datetime(2020, 1, 1), "X: holds datetime.datetime(2020, 1, 1, 0, 0) (datetime), "
                                    "not a number of tokens"),
    (1 + 2j, "X: holds (1+2j) (complex), not a number of tokens"),
    ({}, "X: holds {} (dict), not a number of tokens"),
    (np.datetime64("2020"), "X: holds np.datetime64('2020') (datetime64), not a number of "
                            "tokens"),
    (pd.NA, "X: holds <NA> (NAType), not a number of tokens"),
    (10**400, "X: count 1000...0 (401 digits) of document 1, word 0 exceeds 2^53 = "
              "9007199254740992, the largest whole number held exactly in float64"),
], ids=["timedelta", "datetime", "complex", "dict", "datetime64", "NA", "int beyond float64"])
def test_an_object_array_of_something_else_than_numbers_is_one_line(value, message):
    assert fit_error(with_entry(value)) == message


@pytest.mark.parametrize("column, message", [
    ([pd.Period("2020"), 3], "X: holds Period('2020', 'Y-DEC') (Period), not a number of tokens"),
    ([pd.Interval(0, 1), 3], "X: holds Interval(0, 1, closed='right') (Interval), not a number "
                             "of tokens"),
    ([pd.Timedelta(1), 3], "X: holds Timedelta('0 days 00:00:00.000000001') (Timedelta), not a "
                           "number of tokens"),
    (pd.to_datetime([1, 2]), "X: column 'b' has dtype datetime64[ns], not a number type; "
                             "counts are integers or floats"),
    (pd.to_timedelta([1, 2], unit="s"), "X: column 'b' has dtype timedelta64[us], not a number "
                                        "type; counts are integers or floats"),
    (pd.period_range("2020", periods=2, freq="D"), "X: holds Period('2020-01-01', 'D') (Period), "
                                                   "not a number of tokens"),
])
def test_a_dataframe_column_of_dates_periods_or_intervals_is_one_line(column, message):
    df = pd.DataFrame({"a": [1, 2], "b": column})
    assert fit_error(df) == message


# entries an object array of counts may hold, and their value as a count
NUMBERS = st.one_of(
    st.integers(0, 50), st.booleans(), st.integers(0, 50).map(np.int16),
    st.integers(0, 50).map(float), st.integers(0, 50).map(np.float32),
    st.integers(0, 50).map(fractions.Fraction), st.integers(0, 50).map(decimal.Decimal))
# entries that are no number of tokens
OTHERS = st.one_of(
    st.sampled_from([datetime.timedelta(hours=3), datetime.datetime(2021, 5, 1),
                     datetime.date(2021, 5, 1), 2 + 1j, np.complex128(3), {}, {"a": 1}, [1],
                     (2,), {3}, frozenset(), "3", b"3", object(), np.datetime64("2021-05-01"),
                     np.timedelta64(4, "s"), pd.Timestamp(0), pd.Timedelta(5), pd.Period("2021"),
                     pd.Interval(1, 2), pd.NA, pd.NaT, np.array(3), Ellipsis, int]))


@settings(max_examples=200, deadline=None)
@given(entries=st.lists(st.one_of(NUMBERS, OTHERS), min_size=6, max_size=6),
       frame=st.booleans())
def test_object_contents_are_counts_or_the_gates_one_line(entries, frame):
    """Any mix of numbers and other objects in an object array (or a DataFrame of object
    columns): counts read as their values when every entry is a number, else the gate's one
    line naming an entry of a type that is no number; never a TypeError."""
    a = np.empty((2, 3), dtype=object)
    a.flat[:] = entries
    X = pd.DataFrame(a, columns=["x", "y", "z"]) if frame else a
    is_number = [isinstance(v, (int, float, np.integer, np.floating, fractions.Fraction,
                                decimal.Decimal)) and not isinstance(v, np.timedelta64)
                 for v in a.flat]
    if all(is_number):
        got = validate_counts(X, require_tokens=False)
        np.testing.assert_array_equal(got.toarray(), a.astype(np.float64))
        return
    with pytest.raises(CountsError) as e:
        validate_counts(X, require_tokens=False)
    message = str(e.value)
    held = re.fullmatch(r"X: holds (.*) \((\w+)\), not a number of tokens", message)
    column = re.fullmatch(r"X: column '(\w)' has dtype \S+, not a number type; counts are "
                          r"integers or floats", message)  # pandas typed a column: dates
    assert held or column, message
    if held:
        assert held.group(2) in {type(v).__name__ for v, ok in zip(a.flat, is_number) if not ok}
    else:
        j = "xyz".index(column.group(1))
        assert not any(is_number[j::3]), message


@pytest.mark.parametrize("columns, message", [
    ([0, "a"], "X: column names of more than one type (int, str: 0 beside 'a'); name every "
               "column with text, or none"),
    (["a", "a"], "X: column name 'a' is given twice (columns 0 and 1); give each column its "
                 "own name"),
    ([3, 3], "X: column name 3 is given twice (columns 0 and 1); give each column its own "
             "name"),
])
def test_dataframe_column_names_mixed_or_repeated_are_one_line(columns, message):
    """Mixed name types were scikit-learn's multi-line TypeError, a name given twice its
    "Expected unique column names, got:" cut short; both are the gate's one line, in fit and
    in transform.  Names all text (recorded) or none are taken."""
    X = pd.DataFrame([[1, 2], [3, 4]], columns=columns)
    with pytest.raises(CountsError) as exc:
        SameLDA(n_components=2, max_iter=1).fit(X)
    assert str(exc.value) == message
    model = SameLDA(n_components=2, max_iter=1, random_state=0).fit(X.to_numpy())
    with pytest.raises(CountsError) as exc:
        model.transform(X)
    assert str(exc.value) == message
    named = SameLDA(n_components=2, max_iter=1).fit(pd.DataFrame([[1, 2], [3, 4]],
                                                                 columns=["a", "b"]))
    assert list(named.feature_names_in_) == ["a", "b"]
    assert not hasattr(SameLDA(n_components=2, max_iter=1).fit(
        pd.DataFrame([[1, 2], [3, 4]], columns=[0, 1])), "feature_names_in_")


@pytest.mark.parametrize("columns, message", [
    (["b", "a", "c"], "X: column 0 is 'b', where fit had 'a' (fit had 3 columns, X has 3); "
                      "give the columns fit was given, in its order"),
    (["a", "b", "x"], "X: column 2 is 'x', where fit had 'c' (fit had 3 columns, X has 3); "
                      "give the columns fit was given, in its order"),
    (["a", "b"], "X: column 2 is missing, where fit had 'c' (fit had 3 columns, X has 2); "
                 "give the columns fit was given, in its order"),
    (["a", "b", "c", "d"], "X: column 3 is 'd', where fit had none (fit had 3 columns, X has "
                           "4); give the columns fit was given, in its order"),
])
def test_dataframe_columns_reordered_or_renamed_after_fit_are_one_line(columns, message):
    """transform (score, partial_fit) of a DataFrame whose columns fit saw in another order or
    under other names: scikit-learn's 3–5 line "The feature names should match those that
    were passed during fit"; now the gate's one line naming the first column that differs."""
    fitted = pd.DataFrame([[1, 2, 3], [3, 4, 5]], columns=["a", "b", "c"])
    model = SameLDA(n_components=2, max_iter=1, random_state=0).fit(fitted)
    X = pd.DataFrame([[1] * len(columns), [2] * len(columns)], columns=columns)
    for method in (model.transform, model.score, model.partial_fit):
        with pytest.raises(CountsError) as exc:
            method(X)
        assert str(exc.value) == message
    model.transform(fitted)  # the names fit saw, in its order: taken
