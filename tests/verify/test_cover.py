"""EMCover: event, cover conditions, the corrected Lemma A.1, and the verified claims."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy

from dpaudit.accountant import Accountant
from dpaudit.accountant.cover import compare_with_composition
from dpaudit.events.cover import EMCover, check_cover_conditions
from dpaudit.numeric import float_up
from dpaudit.theorems.cover import (
    cover_epsilon,
    cover_lower_bound,
    stated_cover_epsilon,
)
from dpaudit.verify.cover_claims import LEMMA_A1, LEMMA_A1_SMALL
from dpaudit.verify.prove import verify_claim


def test_event_validation() -> None:
    with pytest.raises(ValueError, match="rounds must be an integer in"):
        EMCover("0.1", 0)
    with pytest.raises(ValueError, match="inverse_temperature"):
        EMCover(-1, 3)
    assert EMCover("0.1", 5).round_event().epsilon == sympy.Rational(1, 5)


def test_cover_conditions_checked() -> None:
    # set cover: q(S, h) = number of points of S that h covers
    sets = {0: {"a", "b"}, 1: {"c"}}

    def good(s, h):
        return sum(1 for z in s if z in sets[h])

    def bad(s, h):
        return len(s)  # moves for candidates that do not cover the point

    args = ([0, 1], lambda h, z: z in sets[h], ["a", "c"], [(), ("a",), ("b", "c")])
    assert check_cover_conditions([good], *args) == []
    violations = check_cover_conditions([bad], *args)
    assert violations and violations[0].condition == 2
    assert "condition 2" in str(violations[0])
    assert check_cover_conditions([lambda s, h: Fraction(3, 2) * good(s, h)], *args)


def test_accountant_uses_cover_bound_independent_of_rounds() -> None:
    small, large = EMCover("0.05", 10), EMCover("0.05", 10_000)
    g_small = Accountant().guarantee(small, "1e-6")
    g_large = Accountant().guarantee(large, "1e-6")
    assert g_large.epsilon == cover_epsilon("0.05", "1e-6")
    assert float_up(g_large.epsilon) <= float_up(stated_cover_epsilon("0.05", "1e-6"))
    assert float_up(g_small.epsilon) <= float_up(g_large.epsilon)


def test_comparison_with_composition() -> None:
    table = compare_with_composition(EMCover("0.05", 100), "1e-6")
    values = {k: float_up(v) for k, v in table.items()}
    assert values["basic composition"] == pytest.approx(10.0)
    # advanced composition of the 100 rounds (each 0.1-DP), slack delta' = 1e-6: closed form
    eps0 = 0.1
    assert values["advanced composition"] == pytest.approx(
        math.sqrt(2 * 100 * math.log(1e6)) * eps0 + 100 * eps0 * math.expm1(eps0), rel=1e-12
    )
    assert {"optimal composition", "privacy loss distribution"} <= set(values)
    assert values["cover (corrected Lemma A.1)"] < min(
        v for k, v in values.items() if k != "cover (corrected Lemma A.1)"
    )


def test_lower_bound_construction_is_a_lower_bound() -> None:
    # the construction never beats the corrected upper bound it must respect
    for lam, d, t in [(3, "1e-3", 1000), ("0.5", "1e-6", 50), (1, "0.1", 3)]:
        lower = float_up(cover_lower_bound(lam, d, t))
        upper = float_up(sympy.Min(cover_epsilon(lam, d), 2 * sympy.sympify(lam) * t))
        assert lower <= upper


#: CPU seconds of the verifier's safety net: the box budgets decide the verdicts; the net is
#: set far above their cost (about 3 s here) so that a slower or loaded machine gives the same.
SAFETY_NET = 60.0


@pytest.mark.slow  # about 4 s
def test_lemma_a1_refuted_and_small_lambda_proved() -> None:
    v = verify_claim(LEMMA_A1, time_limit=SAFETY_NET, max_boxes=400)
    assert v.status == "refuted" and "correct statement" in v.detail
    assert any(s.refuted for _, s in v.steps)
    w = verify_claim(LEMMA_A1_SMALL, time_limit=SAFETY_NET, max_boxes=800)
    assert w.status == "proved", w.detail
