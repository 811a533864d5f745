"""dp_accounting DpEvent trees read into dpaudit and written back; epsilons compared in-run.

dp_accounting (a test dependency) is Google's accountant.  Its PLD accountant at value
discretisation 1e-4 is a pessimistic estimate; dpaudit's certified band must agree with it:
lower <= dp_accounting's epsilon (up to its discretisation) and dpaudit's upper bound within
0.5% of it.
"""

from __future__ import annotations

import pytest
from dp_accounting import dp_event as d
from dp_accounting.pld import pld_privacy_accountant
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accountant import Accountant
from dpaudit.events import ZCDP, Composed, Gaussian, Laplace, PoissonSampled, SelfComposed
from dpaudit.integrations.dp_accounting import from_dp_event, to_dp_event
from dpaudit.parse import parse_event

TREES = [
    d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.1)), 200),
    d.ComposedDpEvent([d.GaussianDpEvent(3.0), d.LaplaceDpEvent(10.0)]),
    d.SelfComposedDpEvent(d.LaplaceDpEvent(10.0), 100),
]


@pytest.mark.parametrize("tree", TREES, ids=["dpsgd", "gauss+laplace", "laplace100"])
def test_epsilon_agrees_with_dp_accounting_pld(tree):
    delta = 1e-6
    peer = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    peer.compose(tree)
    theirs = peer.get_epsilon(delta)
    g = Accountant().guarantee(from_dp_event(tree), delta)
    lower = g.epsilon_lower_float or 0.0
    assert lower <= theirs * (1 + 1e-3)
    assert g.epsilon_upper <= theirs * 1.005


EVENTS = st.recursive(
    st.one_of(
        st.builds(Gaussian, st.floats(0.1, 50)),
        st.builds(Laplace, st.floats(0.1, 50)),
        st.builds(ZCDP, st.floats(0.001, 5)),
    ),
    lambda inner: st.one_of(
        st.builds(PoissonSampled, inner, st.floats(1e-4, 1.0)),
        st.builds(SelfComposed, inner, st.integers(1, 10_000)),
        st.builds(Composed, st.lists(inner, min_size=2, max_size=3)),
    ),
    max_leaves=5,
)


@settings(max_examples=40, deadline=None)
@given(event=EVENTS)
def test_round_trip_of_float_parameters_is_exact(event):
    dp = to_dp_event(event)
    assert from_dp_event(dp) == event
    assert to_dp_event(from_dp_event(dp)) == dp


def test_writing_rounds_towards_less_privacy():
    dp = to_dp_event(parse_event("PoissonSampled(Gaussian(sigma=1/3), 1/3)"))
    assert dp.event.noise_multiplier <= 1 / 3 <= dp.sampling_probability  # floats of 1/3
    assert (
        float(dp.event.noise_multiplier).as_integer_ratio()[0] * 3
        < float(dp.event.noise_multiplier).as_integer_ratio()[1]
    )


@pytest.mark.parametrize(
    ("tree", "match"),
    [
        (
            d.ComposedDpEvent([d.GaussianDpEvent(1.0), d.NonPrivateDpEvent()]),
            r"event.events\[1\]: NonPrivateDpEvent is not supported",
        ),
        (
            d.PoissonSampledDpEvent(1.5, d.GaussianDpEvent(1.0)),
            r"dp_event event \(PoissonSampledDpEvent\): .*rate",
        ),
        (d.GaussianDpEvent(-1.0), r"dp_event event \(GaussianDpEvent\): .*sigma"),
        (d.ZCDpEvent(0.5, 0.1), r"xi = 0.1"),
    ],
)
def test_unsupported_or_invalid_events_are_refused_with_their_position(tree, match):
    with pytest.raises(ValueError, match=match):
        from_dp_event(tree)


def test_writing_refuses_what_dp_accounting_cannot_express():
    with pytest.raises(ValueError, match="assumes sensitivity 1 under add_remove, got 2"):
        to_dp_event(Gaussian(1, sensitivity=2))
    with pytest.raises(ValueError, match="a numeric event is needed"):
        to_dp_event(parse_event("Laplace(b)", symbols=["b"]))
