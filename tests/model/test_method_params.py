"""Issue 51 items 3 and 4: a method's own parameters go through scikit-learn's constraint
machinery as the estimator's do, and SameLDA is the scikit-learn transformer it says it is
(``set_output`` honoured)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from same.model.sampler import SameLDA

X = np.array([[1, 2, 0, 0, 1], [0, 1, 3, 0, 0], [2, 0, 0, 1, 1]])


def stream_model():
    return SameLDA(2, n_copies=1, max_iter=1, prior_scale="paper", random_state=0)


@pytest.mark.parametrize("value", [-5, float("nan"), float("inf"), 0, "many", True, [10]],
                         ids=repr)
def test_partial_fit_refuses_a_bad_corpus_tokens_naming_it(value):
    """``partial_fit(X, corpus_tokens=-5)`` (NaN, inf, 0, text, True) trained φ with negative or
    NaN entries (or read True as one token) without a word, until a later transform failed;
    refused now before anything is trained, in scikit-learn's words."""
    model = stream_model()
    with pytest.raises(ValueError) as e:
        model.partial_fit(X, corpus_tokens=value)
    assert str(e.value) == ("The 'corpus_tokens' parameter of SameLDA.partial_fit must be a float "
                            f"in the range (0.0, inf) or None. Got {value!r} instead.")
    assert not hasattr(model, "topic_word_")


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**6),
                 st.booleans(), st.text(max_size=3), st.none()))
@example(value=2.2250738585072014e-308)  # found by Hypothesis: φ was NaN (β's scale overflowed)
@example(value=1.0)  # fewer tokens than the minibatch holds
def test_partial_fit_trains_a_distribution_or_names_corpus_tokens(value):
    """Whatever corpus_tokens is given: a φ whose rows are distributions, or the one line
    naming the parameter (None with prior_scale='paper' and no total_samples: the line asking
    for total_samples)."""
    model = stream_model()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # corpus_tokens is deprecated
            model.partial_fit(X, corpus_tokens=value)
    except ValueError as exc:
        if value is None:
            assert str(exc).startswith("prior_scale='paper' scales β by the minibatch's share")
        else:
            assert str(exc).startswith("The 'corpus_tokens' parameter of SameLDA.partial_fit "
                                       "must be a float in the range (0.0, inf) or None."), exc
        return
    phi = model.components_
    assert np.isfinite(phi).all() and (phi >= 0).all()
    np.testing.assert_allclose(phi.sum(axis=1), 1)


def test_iter_fit_refuses_a_bad_every_naming_it():
    """iter_fit's own parameter goes through the same machinery."""
    with pytest.raises(ValueError) as e:
        next(SameLDA(2, max_iter=1).iter_fit(X, every="epoch"))
    assert str(e.value).startswith("The 'every' parameter of SameLDA.iter_fit must be a str "
                                   "among {")
    assert str(e.value).endswith("}. Got 'epoch' instead.")


def test_set_output_pandas_is_honoured_by_transform_and_fit_transform():
    """``set_output(transform="pandas")`` was ignored by transform (scikit-learn's
    LatentDirichletAllocation returns a DataFrame): its columns are get_feature_names_out's,
    its index the input's; the default stays an ndarray."""
    frame = pd.DataFrame(X, columns=list("abcde"), index=[5, 6, 7])
    model = SameLDA(2, n_copies=1, max_iter=1, random_state=0).fit(frame)
    plain = model.transform(frame)
    assert type(plain) is np.ndarray
    model.set_output(transform="pandas")
    got = model.transform(frame)
    assert isinstance(got, pd.DataFrame)
    assert list(got.columns) == ["samelda0", "samelda1"] == list(model.get_feature_names_out())
    assert list(got.index) == [5, 6, 7]
    np.testing.assert_allclose(got.to_numpy(), plain)
    refit = SameLDA(2, n_copies=1, max_iter=1, random_state=0).set_output(transform="pandas")
    both = refit.fit_transform(frame)
    assert isinstance(both, pd.DataFrame) and list(both.index) == [5, 6, 7]
    np.testing.assert_allclose(both.to_numpy(), plain)
    assert type(model.set_output(transform="default").transform(frame)) is np.ndarray
