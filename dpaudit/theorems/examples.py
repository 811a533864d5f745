"""Documented example parameters of the theorem cards, for worked examples.

``dpaudit explain THEOREM`` evaluates a card's ``bound`` at :data:`EXAMPLES` ``[key]`` (by the
card's symbol names; a list fills the parts of an indexed symbol such as ``epsilon[i]``) and
rounds the result up.  Every card with a symbolic bound has an example here, inside its
domain (tests/theorems/test_card_examples.py checks both); the values are chosen to be
typical of the card's use (a Laplace mechanism of scale 1, delta = 1e-6, k = 100, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpaudit.deferred_imports import sympy
from dpaudit.theorems.base import lazy_constants

__all__ = ["EXAMPLES"]


def _examples() -> dict[str, dict[str, Any]]:
    """The table of :data:`EXAMPLES` (sympy Rationals), built on its first read."""
    R = sympy.Rational
    _DELTA = R(1, 10**6)
    return {
        "basic_composition": {"epsilon": [R(1, 10), R(1, 2), 1], "delta": [0, _DELTA, 0]},
        "parallel_composition": {"epsilon": [R(1, 3), R(1, 2)]},
        "group_privacy": {"epsilon": R(1, 2), "delta": _DELTA, "rho": R(1, 8), "k": 2},
        "gdp_composition": {"mu": [R(1, 2), R(1, 2), 1]},
        "gdp_group": {"mu": R(1, 2), "k": 3},
        "laplace": {"b": 1, "Delta": 1},
        "discrete_laplace": {"b": 2, "Delta": 1},
        "gaussian_analytic": {"sigma": 1, "Delta": 1, "epsilon": 1},
        "gaussian_gdp": {"sigma": 2, "Delta": 1},
        "gaussian_zcdp": {"sigma": 2, "Delta": 1},
        "discrete_gaussian_zcdp": {"sigma": 2, "Delta": 1},
        "exponential_mechanism": {"epsilon": R(1, 2)},
        "randomized_response": {"epsilon": 1},
        "report_noisy_max": {"epsilon": R(1, 2)},
        "above_threshold": {"epsilon": R(1, 2)},
        "pure_to_zcdp": {"epsilon": 1},
        "zcdp_composition": {"rho": [R(1, 8)] * 10},
        "zcdp_to_approx": {"rho": R(1, 2), "delta": _DELTA},
        "zcdp_to_approx_cks20": {"rho": R(1, 2), "delta": _DELTA, "alpha": 8},
        "advanced_composition": {"epsilon": R(1, 10), "delta": 0, "k": 100, "delta'": _DELTA},
        "kov_heterogeneous": {
            "epsilon": [R(1, 10)] * 10 + [R(1, 2)] * 2,
            "delta": [0] * 12,
            "delta'": _DELTA,
        },
        "amplification_poisson": {"epsilon": 1, "delta": _DELTA, "q": R(1, 100)},
        "amplification_without_replacement": {"epsilon": 1, "delta": _DELTA, "m": 100, "n": 10000},
        "amplification_with_replacement": {"epsilon": 1, "m": 100, "n": 10000},
        "bounded_range_zcdp": {"epsilon": 1},
        "bounded_range_profile": {"epsilon": 1, "x": R(1, 2)},
        "coin_lemma": {"y": 3},
        "em_cover": {"c": 2, "delta": _DELTA, "lambda": R(1, 10)},
        "em_cover_stated": {"delta": _DELTA, "lambda": R(1, 10)},
        "optimal_composition": {"epsilon": R(1, 10), "delta": 0, "k": 20, "epsilon_g": 1},
        "rdp_gaussian": {"sigma": 2, "Delta": 1, "alpha": 8},
        "rdp_laplace": {"b": 1, "alpha": 8},
        "rdp_randomized_response": {"p": R(3, 4), "alpha": 8},
        "rdp_pure": {"epsilon": 1, "alpha": 8},
        "rdp_subsampled_gaussian": {"q": R(1, 100), "sigma": 1, "alpha": 8},
        "rdp_composition": {"tau": R(1, 10), "k": 100},
        "rdp_to_approx_bbgg20": {"tau": 2, "alpha": 8, "delta": _DELTA},
        "sparse_vector_lsl17": {"Delta": 1, "b_T": 2, "b_Q": 4, "c": 1},
        "uniform_stability_is_prediction_dp": {"gamma": R(1, 100)},
        "binary_dp_to_stability": {"epsilon": 1, "delta": _DELTA},
        "subsampled_candidates_stability": {"n": 1000, "n'": 100, "s": R(1, 100)},
        "label_flip": {"a": R(1, 10), "epsilon": 1, "delta": _DELTA},
        "randomized_flip": {"a": R(1, 10)},
        "prediction_subsampling_df": {"epsilon": R(1, 2), "m": 100, "n": 10000},
    }


#: card key -> example values of the card's symbols (built on first read: a module
#: ``__getattr__``).
__getattr__ = lazy_constants(globals(), EXAMPLES=_examples)
if TYPE_CHECKING:
    EXAMPLES: dict[str, dict[str, Any]]
