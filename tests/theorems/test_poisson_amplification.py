"""Amplification by Poisson subsampling (Balle, Barthe, Gaboardi 2018, Theorem 8) as an
accountant rule on any child: pure children give a *pure* guarantee (no privacy loss
distribution can: they need a delta), approximate children an (eps, q delta) one.

Oracles: the closed form; the exact pure epsilon of a Poisson-sampled Laplace mechanism under
add/remove, log(1 - q + q e^(1/b)) (the likelihood ratio of the mixture (1-q)P + qQ against P
tends to it in the tail, so the theorem is attained); the PLD's certified lower bound, which
must stay below the pure bound at every delta.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy

from dpaudit.accountant import Accountant
from dpaudit.events import ApproxDP, Laplace, PoissonSampled, PureDP, SelfComposed
from dpaudit.theorems import amplification as amp

Q = sympy.Rational


@pytest.mark.parametrize("rate", [Q(1, 100), Q(1, 2), 1])
@pytest.mark.parametrize("epsilon", [Q(1, 10), 1, 5])
def test_pure_child_gives_the_closed_form(rate, epsilon) -> None:
    g = Accountant().guarantee(PoissonSampled(PureDP(epsilon), rate))
    expected = sympy.log(1 + rate * (sympy.exp(epsilon) - 1))
    assert g.delta == 0
    assert sympy.N(g.epsilon - expected, 50) == 0
    assert g.epsilon_upper >= float(sympy.N(expected, 30))


def test_the_bound_is_the_exact_epsilon_of_a_sampled_laplace() -> None:
    """In the tail x -> +oo, ((1-q) p(x) + q p(x-1)) / p(x) = 1 - q + q e for Laplace(1), so the
    Poisson-sampled mechanism is no better than log(1 - q + q e)-DP: the rule is tight."""
    q = mpmath.mpf(1) / 20

    def ratio(x):
        p = lambda t: mpmath.exp(-abs(t)) / 2  # noqa: E731
        return ((1 - q) * p(x) + q * p(x - 1)) / p(x)

    with mpmath.workdps(40):
        exact = mpmath.log(1 - q + q * mpmath.e)
        assert mpmath.log(ratio(mpmath.mpf(5))) == pytest.approx(exact, rel=1e-30)
    g = Accountant().guarantee(PoissonSampled(Laplace(1), Q(1, 20)))
    assert g.delta == 0
    assert g.epsilon_upper >= float(exact)
    assert g.epsilon_upper <= float(exact) * (1 + 1e-9)


@pytest.mark.parametrize("delta", [Q(1, 10**3), Q(1, 10**9)])
def test_the_pld_lower_bound_stays_below_the_pure_bound(delta) -> None:
    """Soundness cross-check of two routes: the PLD's certified lower bound on the true epsilon
    at delta can never exceed a valid pure bound."""
    event = PoissonSampled(Laplace(1), Q(1, 20))
    pure = Accountant().guarantee(event)
    at_delta = Accountant().guarantee(event, delta=delta)
    assert at_delta.epsilon_lower is not None
    assert at_delta.epsilon_lower <= pure.epsilon_upper
    assert at_delta.epsilon_upper <= pure.epsilon_upper


def test_approximate_child_spends_q_delta() -> None:
    """(1, 1e-6)-DP sampled at q = 1/10: the theorem gives (log(1 + (e - 1)/10), 1e-7); at a
    budget of 1e-6 the rule applies it to the child's profile at 1e-5 (a little below 1), and
    the accountant returns that or something tighter (the PLD of the generic pair)."""
    event = PoissonSampled(ApproxDP(1, Q(1, 10**6)), Q(1, 10))
    g = Accountant().guarantee(event, delta=Q(1, 10**6))
    bbg = sympy.log(1 + (sympy.E - 1) / 10)
    ours = [c for c in g.candidates if c.step.theorem.key == "amplification_poisson"]
    assert ours, [c.label for c in g.candidates]
    assert all(sympy.N(c.epsilon - bbg, 40) <= 0 and c.delta <= Q(1, 10**6) for c in ours)
    assert amp.poisson_amplification(1, Q(1, 10**6), Q(1, 10)) == (bbg, Q(1, 10**7))
    assert g.epsilon_upper <= float(bbg) * (1 + 1e-12)


def test_symbolic_rate_and_composition() -> None:
    q = sympy.Symbol("q", positive=True)
    g = Accountant().guarantee(PoissonSampled(PureDP(1), q))
    assert g.epsilon.free_symbols == {q}
    at = {q: Q(1, 3)}
    assert sympy.N((g.epsilon - sympy.log(1 + q * (sympy.E - 1))).xreplace(at), 40) == 0
    composed = Accountant().guarantee(SelfComposed(PoissonSampled(PureDP(1), Q(1, 100)), 10))
    assert composed.epsilon_upper == pytest.approx(10 * float(sympy.log(1 + (sympy.E - 1) / 100)))
