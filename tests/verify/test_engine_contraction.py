"""Side constraints in the branch-and-bound: HC4 contraction of each box (never losing a
feasible point), and bounds that are finite only under a condition (003 Lemma 7)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.verify import Domain, get_claim, load_claim_modules
from dpaudit.verify.contraction import _contract
from dpaudit.verify.domain import decide
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.prove import verify_claim
from dpaudit.verify.search import _Search

x, y, z = sympy.symbols("x y z")
F = Fraction


def _c(rel: sympy.Basic) -> tuple[sympy.Basic, sympy.Expr, str]:
    return rel, rel.lhs - rel.rhs, rel.rel_op


def test_contraction_examples() -> None:
    # x + y <= 2 with y >= 1: x <= 1 and y <= 2
    assert _contract([_c(x + y <= 2)], {"x": (F(0), F(4)), "y": (F(1), F(4))}) == {
        "x": (F(0), F(1)),
        "y": (F(1), F(2)),
    }
    # x y <= 1 cannot hold with x >= 2, y >= 1: the box is discarded
    assert _contract([_c(x * y <= 1)], {"x": (F(2), F(4)), "y": (F(1), F(4))}) is None
    # e^x >= y >= 3: x >= log 3 (rounded outwards)
    box = _contract([_c(sympy.exp(x) >= y)], {"x": (F(0), F(4)), "y": (F(3), F(4))})
    assert F(10986, 10000) < box["x"][0] <= F(109862288, 10**8)  # log 3 = 1.0986122886...
    # 003 Lemma 7's n' <= gamma n: n >= n'/gamma, integers rounded inwards, oo kept
    box = _contract(
        [_c(sympy.Symbol("m") <= sympy.Symbol("g") * sympy.Symbol("n"))],
        {"m": (F(64), F(128)), "g": (F(1, 32), F(1, 16)), "n": (F(2), mpmath.inf)},
        frozenset({"m", "n"}),
    )
    assert box["n"] == (F(1024), mpmath.inf) and box["m"] == (F(64), F(128))


@pytest.mark.slow  # about 5 s
def test_contraction_saves_boxes(monkeypatch: pytest.MonkeyPatch) -> None:
    # x y <= 11/10 where x + y <= 2 (at most 1 there): the constraint cuts the box
    d = Domain({"x": "[0, 4]", "y": "[0, 4]"}, constraints=[x + y <= 2])
    rel = x * y <= sympy.Rational(11, 10)
    with_hc4 = verify_inequality(rel, d, max_boxes=400)
    monkeypatch.setattr(_Search, "contract", lambda self, u, xb: (u, xb))
    without = verify_inequality(rel, d, max_boxes=400)
    assert with_hc4.proved and without.proved
    assert with_hc4.boxes < without.boxes


_CONSTRAINTS = [
    lambda a, b: x + a * y <= b,
    lambda a, b: a * x * y >= b,
    lambda a, b: sympy.exp(a * x) - y <= b,
    lambda a, b: x / (1 + y**2) + a * z >= b,
    lambda a, b: sympy.log(1 + x**2) + a * y * z <= b,
    lambda a, b: z <= a * x * y + b,
]
_fractions = st.fractions(min_value=-3, max_value=3, max_denominator=50)


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    which=st.lists(st.integers(0, len(_CONSTRAINTS) - 1), min_size=1, max_size=3),
    coeffs=st.lists(st.tuples(_fractions, _fractions), min_size=3, max_size=3),
    corners=st.lists(st.tuples(_fractions, _fractions), min_size=3, max_size=3),
    ints=st.sets(st.sampled_from(["x", "y", "z"]), max_size=2),
    samples=st.lists(st.tuples(*[st.integers(0, 1000)] * 3), min_size=30, max_size=30),
)
def test_contraction_never_discards_a_feasible_point(which, coeffs, corners, ints, samples) -> None:
    rels = [
        _CONSTRAINTS[w](sympy.Rational(a), sympy.Rational(b))
        for w, (a, b) in zip(which, coeffs, strict=False)
    ]
    rels = [r for r in rels if isinstance(r, sympy.core.relational.Relational)]
    box = {n: (min(p, q), max(p, q)) for n, (p, q) in zip("xyz", corners, strict=True)}
    for n in ints:  # an integer parameter: box ends at integers
        lo, hi = box[n]
        box[n] = (F(int(lo) - 1), F(int(hi) + 1))
    shrunk = _contract([_c(r) for r in rels], box, frozenset(ints))
    for s in samples:
        point = {}
        for n, t in zip("xyz", s, strict=True):
            lo, hi = box[n]
            v = lo + (hi - lo) * F(t, 1000)
            point[n] = sympy.Integer(round(v)) if n in ints else sympy.Rational(v)
        if not all(decide(r, point) is True for r in rels):
            continue
        assert shrunk is not None, (rels, box, point)
        for n, v in point.items():
            lo, hi = shrunk[n]
            assert lo <= F(int(v.p), int(v.q)) <= hi, (rels, box, shrunk, point)


@pytest.mark.slow
def test_finite_branch_bound() -> None:
    # a bound finite (0) exactly where its condition holds is <= 0 iff the condition holds
    d = Domain({"x": "(0, 1)", "y": "[1, oo)"}, constraints=[x <= y])
    true = sympy.Piecewise((0, x**2 <= y), (sympy.oo, True))
    v = verify_inequality(sympy.Le(true, 0), d)
    assert v.proved and "condition" in v.method, v.summary()
    false = sympy.Piecewise((0, 2 * x**2 <= y), (sympy.oo, True))
    assert not verify_inequality(sympy.Le(false, 0), d, max_boxes=200).proved


@pytest.mark.slow
def test_lemma_7_proved() -> None:
    load_claim_modules()
    v = verify_claim(get_claim("003/lemma-7"), check_steps=False, max_boxes=1200)
    assert v.status == "proved", v.detail
    assert "n_prime = gamma*n" in v.detail
