"""m_t and ρ_t schedules (SPEC §2)."""

import math

import numpy as np
import pytest

from same.model.schedules import M_SCHEDULES, learning_rate_at, n_samples_at


@pytest.mark.parametrize("schedule", M_SCHEDULES)
@pytest.mark.parametrize("t_max", [1, 7, 400])
def test_every_schedule_averages_m(schedule, t_max):
    ms = [n_samples_at(schedule, 100.0, t, t_max) for t in range(1, t_max + 1)]
    assert np.mean(ms) == pytest.approx(100.0, rel=1e-12)
    assert min(ms) > 0  # every step samples, including t = 1 of the log schedule


def test_schedule_shapes():
    t_max = 10
    lin = [n_samples_at("linear", 50, t, t_max) for t in range(1, t_max + 1)]
    inv = [n_samples_at("invlinear", 50, t, t_max) for t in range(1, t_max + 1)]
    log = [n_samples_at("log", 50, t, t_max) for t in range(1, t_max + 1)]
    assert lin == pytest.approx(inv[::-1])
    assert lin[0] == pytest.approx(2 * 50 / 11)
    assert np.all(np.diff(lin) > 0) and np.all(np.diff(log) > 0)
    assert log[0] == pytest.approx(50 * 10 * math.log(2) / math.log(math.factorial(11)))


def test_schedule_errors():
    with pytest.raises(ValueError, match=r"m_schedule must be one of"):
        n_samples_at("step", 1, 1, 2)
    with pytest.raises(ValueError, match=r"step t=3 outside 1..2"):
        n_samples_at("linear", 1, 3, 2)
    with pytest.raises(ValueError, match=r"n_samples must be > 0"):
        n_samples_at("constant", 0, 1, 2)


def test_learning_rates():
    assert learning_rate_at("bidmach", 0, 100, 100) == 0.99
    assert learning_rate_at("bidmach", 3, 400, 100) == pytest.approx(0.25 ** 0.3)
    assert learning_rate_at("paper", 0, 100, 100, offset=10, decay=0.7) == pytest.approx(10 ** -0.7)
    assert learning_rate_at("paper", 5, 100, 100, offset=10, decay=0.7) == pytest.approx(15 ** -0.7)
    with pytest.raises(ValueError, match=r"learning_rate must be one of"):
        learning_rate_at("sgd", 0, 1, 1)
