"""Property tests (hypothesis) of dpcore.pld: any input gives a valid answer or a ValueError naming the parameter.

Each property states what a valid answer is (a probability in [0, 1], an epsilon >= 0, a bracket with lower <=
upper, cdf + sf = 1); everything else must be refused with a ValueError, never an exception of another kind,
a NaN or a hang. Examples are bounded (max_examples) so the file runs in seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _hypothesis_helpers import FAST, any_value
from _hypothesis_helpers import answer_or_value_error as _valid_or_value_error
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.pld import gaussian_privacy_loss, laplace_privacy_loss_law, subsampled_gaussian_privacy_losses

ANY = any_value(
    int_bound=10**400, text_size=5, complex_magnitude=10, extra=(st.floats(min_value=1e-320, max_value=1e-300),)
)


@FAST
@given(mu=ANY)
def test_the_gaussian_loss_is_a_law_or_refused(mu):
    loss = _valid_or_value_error(lambda: gaussian_privacy_loss(mu))
    if loss is not None:
        x = np.linspace(-50, 50, 11)
        total = loss.cdf(x) + loss.sf(x)
        assert np.all(np.isfinite(total)) and np.allclose(total, 1.0)


@FAST
@given(e0=ANY)
def test_the_laplace_loss_is_a_law_or_refused(e0):
    loss = _valid_or_value_error(lambda: laplace_privacy_loss_law(e0))
    if loss is not None:
        x = loss.upper * np.linspace(-1.0, 1.0, 13)  # the support (3x the support overflows for e0 near 1e308)
        assert np.allclose(loss.cdf(x) + loss.sf(x), 1.0) and np.allclose(loss.q_cdf(x) + loss.q_sf(x), 1.0)


@FAST
@given(s=ANY, q=ANY)
def test_the_subsampled_gaussian_losses_are_laws_or_refused(s, q):
    losses = _valid_or_value_error(lambda: subsampled_gaussian_privacy_losses(s, q))
    if losses is not None:
        x = np.linspace(-5, 5, 11)
        for loss in losses:
            for f in (loss.cdf, loss.sf, loss.q_cdf, loss.q_sf):
                v = f(x)
                assert np.all((v >= 0) & (v <= 1))


@FAST
@given(width=ANY, step=ANY, eta=ANY, closed=ANY)
def test_the_accountant_takes_its_parameters_or_refuses_them(width, step, eta, closed):
    def build():
        return dpcore.PldAccountant(
            relative_width=width, value_discretization=step, eta_fraction=eta, closed_form=closed
        )

    acc = _valid_or_value_error(build)
    if acc is not None:
        assert acc.relative_width > 0 and 0 < acc.eta_fraction < 1 and isinstance(acc.closed_form, bool)


@FAST
@given(delta=ANY, count=ANY)
def test_epsilon_is_a_nonnegative_number_or_refused(delta, count):
    acc = _valid_or_value_error(lambda: dpcore.PldAccountant().compose(dpcore.GaussianMechanism(2.0), count))
    if acc is None:
        return
    eps = _valid_or_value_error(lambda: acc.epsilon(delta))
    if eps is not None:
        assert math.isfinite(eps) and eps >= 0.0


@settings(max_examples=15, deadline=None)
@given(
    delta=st.floats(min_value=1e-8, max_value=0.5),
    b=st.floats(min_value=0.5, max_value=50.0),
    k=st.integers(min_value=1, max_value=100),
)
def test_laplace_brackets_are_ordered_and_below_basic_composition(delta, b, k):
    acc = dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(b), k)
    lo, hi = acc.epsilon_bracket(delta)
    assert 0.0 <= lo <= hi <= k / b * (1 + 1e-9) + 1e-12  # never above basic composition (pure k/b-DP)
    assert acc.epsilon(delta) >= lo


@pytest.mark.parametrize("eps", [float("nan"), float("inf"), -1.0, "1", None, 1 + 1j])
def test_delta_bracket_refuses_a_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        dpcore.PldAccountant().compose(dpcore.LaplaceMechanism(1.0)).delta_bracket(eps)
