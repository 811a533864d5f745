"""Every theorem card's ``bound`` is the formula the code applies (one formula, checked here).

A :class:`~dpaudit.theorems.base.Theorem` card carries its bound as a sympy expression (for
reading, teaching views and the verifier), while the accountant computes with the function of
the card's family module.  For every card with a non-empty ``bound`` this test evaluates the
card's expression at several parameter points (40 significant digits) and compares it with
the function that applies the theorem, so that the two cannot drift apart.  A card added with
a bound and no row here fails :func:`test_every_card_with_a_bound_is_checked`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
import sympy

from dpaudit import events as ev
from dpaudit import numeric
from dpaudit.accountant import Accountant
from dpaudit.accountant.tight import _leaf_renyi
from dpaudit.accountant.tight_builders import _renyi_power
from dpaudit.events.base import Relation
from dpaudit.events.stability import UniformlyStable
from dpaudit.theorems import (
    advanced,
    amplification,
    bounded_range,
    composition,
    cover,
    optimal,
    primitives,
    rdp,
    sparse_vector,
    stability,
    zcdp,
)
from dpaudit.theorems.base import THEOREMS, Theorem

R = sympy.Rational

#: Agreement required between the card's value and the function's (relative, 40 digits).
TOLERANCE = sympy.Rational(1, 10**25)


def card_value(card: Theorem, name: str, point: Mapping[str, Any]) -> sympy.Expr:
    """The card's ``bound[name]`` at ``point``: symbols by name; a list value fills the
    indexed parameter of that name (``epsilon[i]``) and ``k`` is its length."""
    expr = card.bound[name]
    scalars = {
        s: sympy.nsimplify(point[s.name])
        for s in expr.free_symbols
        if s.name in point and not isinstance(point[s.name], list)
    }
    out = _substitute(expr, scalars).doit()

    def fill(x: sympy.Indexed) -> sympy.Expr:
        return sympy.nsimplify(point[str(x.base)][int(x.indices[0]) - 1])

    return out.replace(lambda x: isinstance(x, sympy.Indexed), fill)


def _substitute(expr: sympy.Basic, values: Mapping[sympy.Basic, sympy.Expr]) -> sympy.Basic:
    """``expr.xreplace(values)``, but a ``Min``/``Max`` over the substituted numbers is ordered by
    rigorous intervals (:func:`numeric.exact_min`): rebuilding ``sympy.Min(3, <RDP of RR at order
    64>)`` compares the two exactly and ran past the test time limit."""
    if expr in values:
        return values[expr]
    if not expr.args:
        return expr
    args = [_substitute(a, values) for a in expr.args]
    if isinstance(expr, sympy.Min):
        return numeric.exact_min(*args)
    if isinstance(expr, sympy.Max):
        return numeric.exact_max(*args)
    return expr.func(*args)


def close(a: sympy.Expr, b: sympy.Expr) -> bool:
    x, y = sympy.N(a, 40), sympy.N(b, 40)
    return bool(abs(x - y) <= TOLERANCE * max(1, abs(y)))


def _pure_epsilon(event: ev.Event) -> sympy.Expr:
    return Accountant().guarantee(event).epsilon


def _composed_rdp(p: Mapping[str, Any]) -> sympy.Expr:
    """The accountant's k-fold RDP composition (tight rules) of a Gaussian leaf's curve, at
    the order alpha; the card's ``tau`` is the leaf's own value there."""
    event = ev.SelfComposed(ev.Gaussian(p["sigma"]), p["k"])
    (curve,) = _leaf_renyi(event.event, (), None)
    power = _renyi_power(event, curve, p["k"])
    assert power is not None
    return power.exact_tau(p["alpha"])


def _leaf_tau(p: Mapping[str, Any]) -> sympy.Expr:
    (curve,) = _leaf_renyi(ev.Gaussian(p["sigma"]), (), None)
    return curve.exact_tau(p["alpha"])


def _stable(p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    g = Accountant().guarantee(UniformlyStable(p["gamma"]))
    return g.epsilon, g.delta


def _with_leaf_tau(p: dict[str, Any]) -> dict[str, Any]:
    return dict(p, tau=_leaf_tau(p))


#: card key -> (points by the card's symbol names, {bound name: the code's value at a point}).
Row = tuple[Sequence[Mapping[str, Any]], Mapping[str, Callable[[Mapping[str, Any]], Any]]]

HETEROGENEOUS = [
    {"epsilon": [R(1, 10), R(1, 2), 1], "delta": [R(1, 10**6), 0, R(1, 100)], "k": 3},
    {"epsilon": [R(3, 2)], "delta": [R(1, 5)], "k": 1},
    {"epsilon": [R(1, 7), R(2, 7)], "delta": [0, 0], "k": 2},
]

ROWS: dict[str, Row] = {
    "basic_composition": (
        HETEROGENEOUS,
        {
            "epsilon": lambda p: composition.basic_composition(p["epsilon"], p["delta"])[0],
            "delta": lambda p: composition.basic_composition(p["epsilon"], p["delta"])[1],
        },
    ),
    "parallel_composition": (
        [{"epsilon": [R(1, 3), R(1, 2)]}, {"epsilon": [2, R(1, 5)]}, {"epsilon": [1, 1]}],
        {
            "epsilon": lambda p: composition.parallel_composition(
                p["epsilon"], [0, 0], Relation.ADD_REMOVE
            )[0]
        },
    ),
    "group_privacy": (
        [
            {"epsilon": R(1, 2), "delta": R(1, 10**5), "rho": R(1, 4), "k": 2},
            {"epsilon": 1, "delta": R(1, 100), "rho": 3, "k": 5},
            {"epsilon": R(1, 10), "delta": 0, "rho": R(1, 100), "k": 1},
        ],
        {
            "epsilon": lambda p: composition.group_approx(p["epsilon"], p["delta"], p["k"])[0],
            "delta": lambda p: composition.group_approx(p["epsilon"], p["delta"], p["k"])[1],
            "rho": lambda p: composition.group_zcdp(p["rho"], p["k"]),
        },
    ),
    "gdp_composition": (
        [{"mu": [R(1, 2), 1, 2], "k": 3}, {"mu": [3], "k": 1}, {"mu": [R(1, 10)] * 4, "k": 4}],
        {"mu": lambda p: composition.gdp_composition(p["mu"])},
    ),
    "gdp_group": (
        [{"mu": R(1, 2), "k": 3}, {"mu": 2, "k": 1}, {"mu": R(7, 10), "k": 10}],
        {"mu": lambda p: composition.gdp_group(p["mu"], p["k"])},
    ),
    "laplace": (
        [{"b": 1, "Delta": 1}, {"b": R(1, 3), "Delta": 2}, {"b": 10, "Delta": R(1, 2)}],
        {"epsilon": lambda p: primitives.laplace_epsilon(p["b"], p["Delta"])},
    ),
    "discrete_laplace": (
        [{"b": 1, "Delta": 1}, {"b": R(5, 2), "Delta": 3}, {"b": 7, "Delta": 1}],
        {"epsilon": lambda p: primitives.laplace_epsilon(p["b"], p["Delta"])},
    ),
    "gaussian_analytic": (
        [
            {"sigma": 1, "Delta": 1, "epsilon": R(1, 2)},
            {"sigma": 3, "Delta": 2, "epsilon": 1},
            {"sigma": R(1, 2), "Delta": 1, "epsilon": 0},
        ],
        {
            "delta": lambda p: primitives.gdp_delta(
                primitives.gaussian_mu(p["sigma"], p["Delta"]), p["epsilon"]
            )
        },
    ),
    "gaussian_gdp": (
        [{"sigma": 1, "Delta": 1}, {"sigma": R(5, 2), "Delta": 2}, {"sigma": 10, "Delta": 3}],
        {"mu": lambda p: primitives.gaussian_mu(p["sigma"], p["Delta"])},
    ),
    "gaussian_zcdp": (
        [{"sigma": 1, "Delta": 1}, {"sigma": R(5, 2), "Delta": 2}, {"sigma": 10, "Delta": 3}],
        {"rho": lambda p: primitives.gaussian_rho(p["sigma"], p["Delta"])},
    ),
    "discrete_gaussian_zcdp": (
        [{"sigma": 1, "Delta": 1}, {"sigma": R(3, 2), "Delta": 4}, {"sigma": 8, "Delta": 1}],
        {"rho": lambda p: primitives.gaussian_rho(p["sigma"], p["Delta"])},
    ),
    "exponential_mechanism": (
        [{"epsilon": R(1, 2)}, {"epsilon": 2}, {"epsilon": R(1, 100)}],
        {"epsilon": lambda p: _pure_epsilon(ev.Exponential(p["epsilon"]))},
    ),
    "randomized_response": (
        [{"epsilon": R(1, 2)}, {"epsilon": 2}, {"epsilon": R(1, 100)}],
        {"epsilon": lambda p: _pure_epsilon(ev.RandomizedResponse(p["epsilon"], 3))},
    ),
    "report_noisy_max": (
        [{"epsilon": R(1, 2)}, {"epsilon": 2}, {"epsilon": R(1, 100)}],
        {"epsilon": lambda p: _pure_epsilon(ev.ReportNoisyMax(p["epsilon"]))},
    ),
    "above_threshold": (
        [{"epsilon": R(1, 2)}, {"epsilon": 2}, {"epsilon": R(1, 100)}],
        {"epsilon": lambda p: _pure_epsilon(ev.AboveThreshold(p["epsilon"]))},
    ),
    "pure_to_zcdp": (
        [{"epsilon": R(1, 2)}, {"epsilon": 3}, {"epsilon": R(1, 100)}],
        {"rho": lambda p: zcdp.pure_to_zcdp(p["epsilon"])},
    ),
    "zcdp_composition": (
        [{"rho": [R(1, 2), 1, 2], "k": 3}, {"rho": [3], "k": 1}, {"rho": [R(1, 10)] * 4, "k": 4}],
        {"rho": lambda p: zcdp.zcdp_composition(p["rho"])},
    ),
    "zcdp_to_approx": (
        [
            {"rho": R(1, 2), "delta": R(1, 10**5)},
            {"rho": 3, "delta": R(1, 2)},
            {"rho": R(1, 100), "delta": R(1, 10**9)},
        ],
        {"epsilon": lambda p: zcdp.zcdp_to_approx(p["rho"], p["delta"])},
    ),
    "advanced_composition": (
        [
            {"epsilon": R(1, 10), "delta": R(1, 10**6), "k": 10, "delta'": R(1, 10**5)},
            {"epsilon": 1, "delta": 0, "k": 3, "delta'": R(1, 2)},
            {"epsilon": R(1, 100), "delta": R(1, 10**9), "k": 1000, "delta'": R(1, 10**6)},
        ],
        {
            "epsilon": lambda p: advanced.advanced_composition(
                p["epsilon"], p["delta"], p["k"], p["delta'"]
            )[0],
            "delta": lambda p: advanced.advanced_composition(
                p["epsilon"], p["delta"], p["k"], p["delta'"]
            )[1],
        },
    ),
    "kov_heterogeneous": (
        [
            dict(h, **{"delta'": d})
            for h, d in zip(HETEROGENEOUS, (R(1, 10**5), R(1, 2), R(1, 3)), strict=True)
        ],
        {
            "epsilon": lambda p: advanced.heterogeneous_advanced_composition(
                p["epsilon"], p["delta"], p["delta'"]
            )[0],
            "delta": lambda p: advanced.heterogeneous_advanced_composition(
                p["epsilon"], p["delta"], p["delta'"]
            )[1],
        },
    ),
    "amplification_poisson": (
        [
            {"epsilon": 1, "delta": R(1, 10**5), "q": R(1, 100)},
            {"epsilon": R(1, 2), "delta": 0, "q": 1},
            {"epsilon": 3, "delta": R(1, 10), "q": R(1, 2)},
        ],
        {
            "epsilon": lambda p: amplification.poisson_amplification(
                p["epsilon"], p["delta"], p["q"]
            )[0],
            "delta": lambda p: amplification.poisson_amplification(
                p["epsilon"], p["delta"], p["q"]
            )[1],
        },
    ),
    "amplification_without_replacement": (
        [
            {"epsilon": 1, "delta": R(1, 10**5), "m": 10, "n": 1000},
            {"epsilon": R(1, 2), "delta": 0, "m": 5, "n": 5},
            {"epsilon": 3, "delta": R(1, 10), "m": 1, "n": 2},
        ],
        {
            "epsilon": lambda p: amplification.without_replacement_amplification(
                p["epsilon"], p["delta"], p["m"], p["n"]
            )[0],
            "delta": lambda p: amplification.without_replacement_amplification(
                p["epsilon"], p["delta"], p["m"], p["n"]
            )[1],
        },
    ),
    "amplification_with_replacement": (
        [
            {"epsilon": 1, "m": 3, "n": 10},
            {"epsilon": R(1, 2), "m": 1, "n": 1},
            {"epsilon": 2, "m": 5, "n": 100},
        ],
        {
            "epsilon": lambda p: amplification.with_replacement_amplification(
                p["epsilon"], 1, 0, p["m"], p["n"]
            )[0]
        },
    ),
    "bounded_range_zcdp": (
        [{"epsilon": R(1, 2)}, {"epsilon": 3}, {"epsilon": R(1, 100)}],
        {"rho": lambda p: bounded_range.bounded_range_zcdp(p["epsilon"])},
    ),
    "bounded_range_profile": (
        [
            {"epsilon": 1, "x": R(1, 2)},
            {"epsilon": 3, "x": 0},
            {"epsilon": R(1, 10), "x": R(1, 10)},
        ],
        {"delta": lambda p: bounded_range.bounded_range_profile(p["epsilon"], p["x"])},
    ),
    "coin_lemma": (
        [{"y": R(1, 2)}, {"y": 3}, {"y": 40}],
        {"probability": lambda p: cover.coin_tail(p["y"])},
    ),
    "em_cover": (
        [
            {"lambda": R(1, 2), "delta": R(1, 10**6), "c": 1},
            {"lambda": 2, "delta": R(1, 2), "c": R(1, 3)},
            {"lambda": R(1, 100), "delta": R(1, 10**9), "c": 3},
        ],
        {
            "epsilon": lambda p: cover.cover_epsilon(p["lambda"], p["delta"], p["c"]),
            "delta": lambda p: p["delta"],  # the rule states the guarantee at the given delta
        },
    ),
    "em_cover_stated": (
        [
            {"lambda": R(1, 2), "delta": R(1, 10**6)},
            {"lambda": R(5, 4), "delta": R(1, 2)},
            {"lambda": R(1, 100), "delta": R(1, 10**9)},
        ],
        {
            "epsilon": lambda p: cover.stated_cover_epsilon(p["lambda"], p["delta"]),
            "delta": lambda p: p["delta"],
        },
    ),
    "optimal_composition": (
        [
            {"epsilon": R(1, 2), "delta": R(1, 10**5), "k": 5, "epsilon_g": 1},
            {"epsilon": 1, "delta": 0, "k": 3, "epsilon_g": R(1, 2)},
            {"epsilon": R(1, 10), "delta": R(1, 100), "k": 8, "epsilon_g": R(3, 10)},
        ],
        {
            "delta": lambda p: optimal.optimal_delta(
                p["epsilon"], p["delta"], p["k"], p["epsilon_g"]
            )
        },
    ),
    "rdp_gaussian": (
        [
            {"alpha": 2, "sigma": 1, "Delta": 1},
            {"alpha": R(5, 2), "sigma": 3, "Delta": 2},
            {"alpha": 64, "sigma": R(1, 2), "Delta": 1},
        ],
        {"tau": lambda p: rdp.gaussian_rdp(p["alpha"], p["sigma"], p["Delta"])},
    ),
    "rdp_laplace": (
        [{"alpha": 2, "b": 1}, {"alpha": R(5, 2), "b": 3}, {"alpha": 64, "b": R(1, 2)}],
        {"tau": lambda p: rdp.laplace_rdp(p["alpha"], p["b"])},
    ),
    "rdp_randomized_response": (
        [
            {"alpha": 2, "p": R(3, 4)},
            {"alpha": R(5, 2), "p": R(1, 2)},
            {"alpha": 64, "p": R(9, 10)},
        ],
        {"tau": lambda p: rdp.randomized_response_rdp(p["alpha"], p["p"])},
    ),
    "rdp_pure": (
        [
            {"alpha": 2, "epsilon": 1},
            {"alpha": R(5, 2), "epsilon": R(1, 10)},
            {"alpha": 64, "epsilon": 3},
        ],
        {"tau": lambda p: rdp.pure_rdp(p["alpha"], p["epsilon"])},
    ),
    "rdp_subsampled_gaussian": (
        [
            {"alpha": 2, "sigma": 1, "q": R(1, 100)},
            {"alpha": 5, "sigma": 3, "q": R(1, 2)},
            {"alpha": 16, "sigma": 2, "q": 1},
        ],
        {"tau": lambda p: rdp.subsampled_gaussian_rdp(p["alpha"], p["sigma"], p["q"])},
    ),
    "rdp_to_approx_bbgg20": (
        [
            {"alpha": 2, "tau": 1, "delta": R(1, 10**5)},
            {"alpha": 32, "tau": R(1, 10), "delta": R(1, 10**9)},
            {"alpha": R(3, 2), "tau": 3, "delta": R(1, 2)},
        ],
        {"epsilon": lambda p: _bbgg20(p["alpha"], p["tau"], p["delta"])},
    ),
    "sparse_vector_lsl17": (
        [
            {"b_T": 2, "b_Q": 4, "c": 1, "Delta": 1},
            {"b_T": R(1, 2), "b_Q": 3, "c": 5, "Delta": 2},
            {"b_T": 10, "b_Q": 10, "c": 2, "Delta": R(1, 2)},
        ],
        {
            "epsilon": lambda p: sparse_vector.sparse_vector_epsilon(
                p["b_T"], p["b_Q"], p["c"], p["Delta"]
            )
        },
    ),
    "rdp_composition": (
        [
            _with_leaf_tau(dict(alpha=2, sigma=1, k=10)),
            _with_leaf_tau(dict(alpha=5, sigma=3, k=1)),
            _with_leaf_tau(dict(alpha=32, sigma=R(5, 2), k=100)),
        ],
        {"tau": _composed_rdp},
    ),
    "uniform_stability_is_prediction_dp": (
        [{"gamma": R(1, 10)}, {"gamma": R(1, 10**6)}, {"gamma": R(1, 2)}],
        {"epsilon": lambda p: _stable(p)[0], "delta": lambda p: _stable(p)[1]},
    ),
    "binary_dp_to_stability": (
        [
            {"epsilon": 1, "delta": R(1, 10**5)},
            {"epsilon": R(1, 2), "delta": 0},
            {"epsilon": 3, "delta": R(1, 10)},
        ],
        {"delta": lambda p: stability.dp_to_stability(p["epsilon"], p["delta"])},
    ),
    "subsampled_candidates_stability": (
        [
            {"n'": 10, "n": 100, "s": R(1, 10)},
            {"n'": 1, "n": 1, "s": R(1, 2)},
            {"n'": 3, "n": 7, "s": 0},
        ],
        {"delta": lambda p: stability.subsampled_candidates_stability(p["n'"], p["n"], p["s"])},
    ),
    "label_flip": (
        [
            {"epsilon": 1, "delta": R(1, 10**5), "a": R(1, 4)},
            {"epsilon": R(1, 2), "delta": 0, "a": R(1, 10)},
            {"epsilon": 3, "delta": R(1, 10), "a": R(49, 100)},
        ],
        {"epsilon": lambda p: stability.flipped_epsilon(p["epsilon"], p["delta"], p["a"])},
    ),
    "randomized_flip": (
        [{"a": R(1, 4)}, {"a": R(1, 10)}, {"a": R(49, 100)}],
        {"epsilon": lambda p: stability.randomized_flip_epsilon(p["a"])},
    ),
    "prediction_subsampling_df": (
        [
            {"epsilon": 1, "m": 10, "n": 100},
            {"epsilon": R(1, 2), "m": 1, "n": 1},
            {"epsilon": R(1, 10), "m": 3, "n": 7},
        ],
        {
            "epsilon": lambda p: stability.prediction_subsampling_epsilon(
                p["epsilon"], p["m"], p["n"]
            )
        },
    ),
}


def _bbgg20(alpha: Any, tau: Any, delta: Any) -> sympy.Expr:
    """rdp_to_approx at a single order; it keeps Mironov's tau + log(1/delta)/(alpha - 1) when
    smaller, so the card's value is compared where BBGG20's is the smaller one."""
    eps, order = rdp.rdp_to_approx([alpha], [tau], delta)
    assert order == alpha
    return eps


#: Cards whose bound has a parameter the code chooses (the order alpha of CKS20): checked by
#: their defining property in their own test below.
BY_PROPERTY = {"zcdp_to_approx_cks20"}


def test_every_card_with_a_bound_is_checked() -> None:
    with_bound = {key for key, card in THEOREMS.items() if card.bound} - BY_PROPERTY
    assert with_bound == set(ROWS), (
        f"cards with a bound but no row: {sorted(with_bound - set(ROWS))}; "
        f"rows without a card bound: {sorted(set(ROWS) - with_bound)}"
    )


@pytest.mark.parametrize("key", sorted(ROWS))
def test_card_bound_is_the_code(key: str) -> None:
    card = THEOREMS[key]
    points, code = ROWS[key]
    assert set(code) == set(card.bound), f"{key}: bound names {sorted(card.bound)}"
    for point in points:
        for name, value_of in code.items():
            expected = sympy.nsimplify(value_of(point))
            got = card_value(card, name, point)
            assert not got.free_symbols, f"{key}.{name} at {point}: unbound symbols in {got}"
            assert close(got, expected), f"{key}.{name} at {point}: card {got}, code {expected}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rho", "delta"), [(R(1, 2), R(1, 10**5)), (R(1, 100), R(1, 10**9)), (3, R(1, 2))]
)
def test_cks20_card_is_the_conversion_at_its_best_order(rho: Any, delta: Any) -> None:
    """The conversion evaluates the card's formula at a near-optimal order: every order tried
    gives at least its value (to 1e-9), and the best order found is within 1e-4 of it.  Orders:
    ``alpha - 1`` on a log grid over [1e-3, 1e5] (the optimum moves from near 1 for large
    rho*delta to ~sqrt(log(1/delta)/rho) for small rho), then a fine grid between the best
    point's neighbours."""
    card = THEOREMS["zcdp_to_approx_cks20"]
    value = sympy.N(zcdp.zcdp_to_approx_optimal(rho, delta), 30)

    def at(order: sympy.Expr) -> sympy.Expr:
        point = {"alpha": order, "rho": rho, "delta": delta}
        return sympy.N(card_value(card, "epsilon", point), 30)

    coarse = [1 + sympy.Rational(10) ** sympy.Rational(j - 15, 5) for j in range(41)]
    values = [at(o) for o in coarse]
    best = min(range(len(coarse)), key=values.__getitem__)
    lo, hi = coarse[max(best - 1, 0)], coarse[min(best + 1, len(coarse) - 1)]
    fine = [lo + (hi - lo) * sympy.Rational(j, 40) for j in range(41)]
    tried = values + [at(o) for o in fine]
    assert min(tried) >= value - sympy.Rational(1, 10**9)
    assert min(tried) <= value + sympy.Rational(1, 10**4) * max(1, value)


def test_a_drifted_card_is_caught() -> None:
    """The comparison can fail: a card whose formula differs by a factor is reported."""
    card = THEOREMS["laplace"]
    drifted = Theorem(
        key="drifted",
        name="",
        citation="",
        assumptions="",
        statement="",
        bound={"epsilon": 2 * card.bound["epsilon"]},
    )
    point = {"b": 1, "Delta": 1}
    assert not close(card_value(drifted, "epsilon", point), primitives.laplace_epsilon(1, 1))
