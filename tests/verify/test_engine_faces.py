"""The verifier's corner and tail techniques: monotonicity from a face, reciprocal
coordinates, reformulation (exp of a log side, delta = e^-t, monotone elimination).

Each technique is shown to decide the claims it was built for (004 Theorems 3.5 and 4.4,
003 Corollary 1), and never to say "proved" on a false inequality: perturbations of true
inequalities that are tight exactly where the techniques act (a corner where both sides
vanish, delta -> 0, a side constraint's bound) must come out refuted (with a valid
counterexample) or unknown.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from _refutation import assert_refutation_holds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.verify import Domain, get_claim, load_claim_modules
from dpaudit.verify.boxes import _Axis
from dpaudit.verify.budget import _clock
from dpaudit.verify.engine import _eliminate, verify_inequality
from dpaudit.verify.prove import verify_claim
from dpaudit.verify.search import _Search

x, y, eps, dlt, a = sympy.symbols("x y epsilon delta alpha", positive=True)
k, n = sympy.symbols("k n", positive=True, integer=True)

#: The per-inequality box budget ``dpaudit verify --all`` uses.  The budget that decides is
#: the box count; the CPU-time safety net (3 s in the CLI) is raised here so that a verdict
#: does not depend on how loaded the test machine is (xdist workers beside other jobs).
ALL = {"time_limit": 20.0, "max_boxes": 1200}
FAST = {"time_limit": 60.0, "max_boxes": 200}


@pytest.mark.slow  # up to 8 s per claim (branch and bound)
@pytest.mark.parametrize("key", ["004/theorem-3.5", "004/theorem-4.4", "003/corollary-1"])
def test_corner_and_tail_claims_decided(key: str) -> None:
    load_claim_modules()
    v = verify_claim(get_claim(key), check_steps=False, **ALL)
    assert v.status == "proved", v.detail


def test_corner_where_both_sides_vanish() -> None:
    # 004 Theorem 3.5's comparison: both sides -> 0 as eps -> 0, and as delta -> 0 the
    # accountant's bound is 0 * oo in interval arithmetic
    L = sympy.log(1 / dlt)
    e_hat = eps / (2 * L + 3)
    bound = e_hat + (sympy.exp(e_hat) - 1) * (L + 1)
    v = verify_inequality(bound <= eps, Domain.parse("0 < epsilon < 1, 0 < delta < 1"), **ALL)
    assert v.proved and "face" in v.method, v.summary()


def test_ratio_of_logs_at_delta_zero() -> None:
    # sqrt(log(1/delta)/log(2/delta)) -> 1 as delta -> 0: oo/oo unless t = log(1/delta) and
    # the reciprocal 1/t are used
    lhs = eps * sympy.sqrt(sympy.log(1 / dlt) / sympy.log(2 / dlt))
    v = verify_inequality(lhs <= eps, Domain.parse("0 < epsilon < 1, 0 < delta < 1"), **ALL)
    assert v.proved and "exp(-t)" in v.method, v.summary()


def test_side_constraint_bound_substituted() -> None:
    # log(1 + k/n) <= eps whenever k <= eps n: increasing in k, so k = eps n is the worst case
    v = verify_inequality(
        sympy.log(1 + k / n) <= eps,
        Domain(
            {"epsilon": "(0, 1)", "k": "[1, oo)", "n": "[1, oo)"},
            integers=["k", "n"],
            constraints=[k <= eps * n],
        ),
        **ALL,
    )
    assert v.proved and "eliminated by proved monotonicity" in v.method, v.summary()


def _families():
    """(lhs, rhs, domain): true inequalities, tight where the new techniques act."""
    L = sympy.log(1 / dlt)
    return [
        # tight at the corner x = y = 0 (monotonicity from a face, depth 2)
        (sympy.log(1 + x * y), x * y, Domain.parse("0 < x < 1, 0 < y < 1")),
        # tight as delta -> 0 (delta = e^-t, reciprocal coordinate 1/t)
        (
            eps * sympy.sqrt(L / sympy.log(2 / dlt)),
            eps,
            Domain.parse("0 < epsilon < 1, 0 < delta < 1"),
        ),
        # tight as eps -> 0 at the side constraint's bound k = eps n (monotone elimination)
        (
            sympy.log(1 + k / n),
            eps,
            Domain(
                {"epsilon": "(0, 1)", "k": "[1, oo)", "n": "[1, oo)"},
                integers=["k", "n"],
                constraints=[k <= eps * n],
            ),
        ),
        # 003 Corollary 1's flipped-label bound against eps (1 - 2 alpha)/4, tight as alpha,
        # eps -> 0 to second order (so beyond the face rule's depth: left unknown, and only
        # used perturbed)
        (
            sympy.log(
                1
                + (1 - 2 * a)
                * (
                    k / n
                    + (1 - k / n) * (sympy.exp(a * eps / 6) - 1) / (sympy.exp(a * eps / 6) + 1)
                )
                / a
            ),
            eps * (1 - 2 * a) / 4,
            Domain(
                {"epsilon": "(0, 1)", "alpha": "(0, 1/2)", "n": "[2, oo)", "k": "[1, oo)"},
                integers=["n", "k"],
                constraints=[k <= a * eps * n / 6],
            ),
        ),
    ]


@pytest.mark.slow
def test_families_are_true() -> None:
    for lhs, rhs, domain in _families()[:3]:
        v = verify_inequality(lhs <= rhs, domain, **ALL)
        assert v.proved, (lhs, rhs, v.summary())


# Perturbations on a grid of 1/1000 (hypothesis' arbitrary fractions carry huge numerators and
# denominators, on which sympy.factor inside the engine ran for minutes); derandomized so a
# CI run is reproducible.
@pytest.mark.slow  # about 10 s: six verifier runs to their box limit
@settings(
    max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    which=st.integers(0, 3),
    shift=st.integers(1, 1000).map(lambda i: sympy.Rational(i, 1000)),
    scale=st.integers(500, 999).map(lambda i: sympy.Rational(i, 1000)),
)
def test_never_proves_a_perturbed_family(
    which: int, shift: sympy.Rational, scale: sympy.Rational
) -> None:
    # every family is tight (lhs/rhs -> 1 or lhs - rhs -> 0) somewhere, so lowering the rhs
    # by any shift or any factor < 1 makes it false there
    lhs, rhs, domain = _families()[which]
    for false_rhs in (rhs - shift, scale * rhs):
        v = verify_inequality(sympy.Le(lhs, false_rhs), domain, **FAST)
        assert not v.proved, v.summary()
        if v.refuted:
            assert_refutation_holds(v, prec=200)


@pytest.mark.slow
@pytest.mark.parametrize("shift", ["1/1000", "1/100"])
def test_constant_perturbed_past_a_monotone_branch(shift: str) -> None:
    # 1 + (e^eps - 1) x <= e^(2 eps x) holds for eps <= eps* = 1.25643... and is proved by
    # monotonicity in x (d/dx >= 0 iff 2 eps >= e^eps - 1); past eps* it fails near x = 0
    upper = sympy.Rational("1.25643") + sympy.Rational(shift)
    rel = 1 + (sympy.exp(eps) - 1) * x <= sympy.exp(2 * eps * x)
    true = verify_inequality(rel, Domain({"epsilon": "(0, 5/4]", "x": "[0, 1]"}), **ALL)
    assert true.proved and "monotonicity" in true.method
    v = verify_inequality(rel, Domain({"epsilon": f"(0, {upper}]", "x": "[0, 1]"}), **ALL)
    assert not v.proved
    if v.refuted:
        assert_refutation_holds(v, prec=200)


def _search(g: sympy.Expr, domain: Domain) -> _Search:
    names = sorted(s.name for s in g.free_symbols)
    axes = [_Axis(nm, domain.range(nm)) for nm in names]
    return _Search(sympy.Integer(0), g, g, False, domain, axes, _clock(), 100, 5.0)


def test_face_rule_needs_a_proved_derivative_sign() -> None:
    # g = x^2 - x is 0 on the face x = 0 but dg/dx = 2x - 1 changes sign: no proof, and g < 0
    # inside, so the inequality is refuted
    domain = Domain.parse("0 <= x <= 1")
    g = x**2 - x
    s = _search(g, domain)
    box = {"x": (Fraction(0), Fraction(1))}
    assert not s.nonneg(sympy.Symbol("x") ** 2 - sympy.Symbol("x"), box, 3, False)
    v = verify_inequality("x <= x**2", domain, **FAST)
    assert v.refuted
    assert_refutation_holds(v, prec=200)
    # the same face with a proved sign is accepted: x^2 + x >= 0 from x = 0
    assert s.nonneg(sympy.Symbol("x") ** 2 + sympy.Symbol("x"), box, 1, False)


def test_elimination_needs_a_proved_derivative_sign() -> None:
    # k <= eps n bounds k, but d/dk of sin-free (k - 2)^2 changes sign on [1, oo): k is not
    # eliminated; with a signed derivative it is
    kk, nn, ee = sympy.symbols("k n epsilon")
    domain = Domain(
        {"epsilon": "(0, 1)", "k": "[1, oo)", "n": "[1, oo)"},
        integers=["k", "n"],
        constraints=[kk <= ee * nn],
    )
    assert _eliminate((kk - 2) ** 2 * ee / nn, False, domain, 0, _clock() + 5) is None
    step = _eliminate(ee - kk / nn, False, domain, 0, _clock() + 5)
    assert step is not None and "k = epsilon*n" in step.notes[0]


def test_open_end_is_not_an_elimination_end() -> None:
    # increasing in x on (0, 1], but the end x = 0 is not in the domain: no substitution
    # there (the function need not extend continuously to it)
    xx = sympy.Symbol("x")
    domain = Domain.parse("0 < x <= 1")
    assert _eliminate(xx, False, domain, 0, _clock() + 5) is None


@pytest.mark.slow
def test_verify_all_under_a_minute() -> None:
    root = Path(__file__).resolve().parents[2]
    # CPU seconds of the child, not wall time: on a shared machine at load 15 the same run took
    # 164 s of wall time and 38 s of CPU
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-m", "dpaudit", "verify", "--all"],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert "claims in" in out.stdout, out.stderr[-2000:]
    assert cpu < 60, f"verify --all took {cpu:.1f} CPU s"
    for key in ("Theorem 3.5", "Theorem 4.4", "Corollary 1"):
        row = next(line for line in out.stdout.splitlines() if key in line)
        assert " proved " in row, row
