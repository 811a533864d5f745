"""Sparse vector / AboveThreshold with c positive answers (Lyu, Su, Li 2017).

The guarantee is proved for the algorithm as a whole, not as a composition of its internal
noise draws (which would charge every query).
"""

from __future__ import annotations

from dpaudit.deferred_imports import sympy
from dpaudit.numeric import exact
from dpaudit.theorems.base import Bound, Theorem, register

__all__ = ["SPARSE_VECTOR", "sparse_vector_epsilon", "sparse_vector_split"]

SPARSE_VECTOR = register(
    Theorem(
        key="sparse_vector_lsl17",
        name="sparse vector with c positives",
        citation="Lyu, Su, Li 2017 (VLDB), Theorem 2 (Algorithm 1; monotonic queries: Section 3.3)",
        assumptions=(
            "queries of sensitivity Delta, threshold noise Lap(b_T) drawn once, query noise "
            "Lap(b_Q) per query, stop after c positive answers; adaptively chosen queries; "
            "for monotonic queries (all move in the same direction) the factor 2 drops"
        ),
        statement=(
            "the algorithm is (Delta/b_T + 2 c Delta/b_Q)-DP ((Delta/b_T + c Delta/b_Q) if "
            "monotonic)"
        ),
        bound=Bound.over_positive(
            "b_T b_Q c Delta",
            lambda b_t, b_q, c, Delta: {"epsilon": Delta / b_t + 2 * c * Delta / b_q},
        ),
        domain=("b_T > 0", "b_Q > 0", "c >= 1", "Delta > 0"),
        latex=r"\varepsilon = \frac{\Delta}{b_T} + \frac{2c\Delta}{b_Q}",
    )
)


def sparse_vector_epsilon(
    threshold_scale: sympy.Expr,
    query_scale: sympy.Expr,
    positives: sympy.Expr,
    sensitivity: sympy.Expr = 1,
    monotonic: bool = False,
) -> sympy.Expr:
    """The epsilon of sparse vector with c positive answers (Lyu, Su, Li 2017, Theorem 2).

    Privacy: with threshold noise Lap(b_T) and query noise Lap(b_Q), the algorithm that answers
    until c positives is ``(Delta/b_T + 2 c Delta/b_Q)``-DP; ``(Delta/b_T + c Delta/b_Q)``-DP when
    the queries are monotonic (Section 3.3).

    Args:
        threshold_scale: b_T > 0.
        query_scale: b_Q > 0.
        positives: c >= 1.
        sensitivity: Delta > 0.
        monotonic: whether all queries are monotonic.

    Returns:
        epsilon, exact.

    Raises:
        ValueError: on non-positive scales or c < 1.
    """
    bt, bq = exact(threshold_scale, "threshold_scale"), exact(query_scale, "query_scale")
    cc, d = exact(positives, "positives"), exact(sensitivity, "sensitivity")
    for name, v in (("threshold_scale", bt), ("query_scale", bq), ("sensitivity", d)):
        if not v.free_symbols and not v > 0:
            raise ValueError(f"{name} must be > 0, got {v}")
    if not cc.free_symbols and not cc >= 1:
        raise ValueError(f"positives must be >= 1, got {cc}")
    factor = 1 if monotonic else 2
    return d / bt + factor * cc * d / bq


def sparse_vector_split(
    epsilon: sympy.Expr, positives: sympy.Expr, monotonic: bool = False
) -> tuple[sympy.Expr, sympy.Expr]:
    """(eps_1, eps_2) with eps_1 : eps_2 = 1 : (2c)^(2/3), the split Lyu, Su, Li 2017
    (Section 4.2) recommend; b_T = Delta/eps_1, b_Q = 2 c Delta/eps_2 (c Delta/eps_2 if monotonic).
    """
    e, cc = exact(epsilon, "epsilon"), exact(positives, "positives")
    ratio = ((1 if monotonic else 2) * cc) ** sympy.Rational(2, 3)
    return e / (1 + ratio), e * ratio / (1 + ratio)
