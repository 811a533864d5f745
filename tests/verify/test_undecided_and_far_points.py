"""An undecided verification is not a pass, and counterexamples at extreme magnitudes are found.

``dpaudit verify "x <= 1e300" --domain "x > 0"`` answered *unknown* and exited 0, so CI read an
open question as a pass; undecided now exits 4 (:data:`dpaudit.cli.exit_codes.ExitCode`), and
the verifier tries points beyond the box search's reach (:mod:`dpaudit.verify.far`) before it
gives up, so that claim is refuted as ``x <= 1e10`` always was.
"""

from __future__ import annotations

import json
import time

import pytest
import sympy

from dpaudit.cli import main
from dpaudit.cli.exit_codes import EPILOG, ExitCode
from dpaudit.verify import Domain
from dpaudit.verify.engine import verify_inequality
from dpaudit.verify.far import GROWTH_LIMIT, cheap_at, extreme_points
from dpaudit.verify.verdict import _integer_text


def test_undecided_has_its_own_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert int(ExitCode.UNDECIDED) == 4 and "4 verify could neither prove nor refute" in EPILOG
    # the time safety net fires before any box is examined: unknown on any machine
    argv = ["verify", "x*exp(-x) <= exp(-1)", "--domain", "x > 0", "--time-limit", "0.000001"]
    assert main(argv) == 4
    assert "unknown" in capsys.readouterr().out
    assert main([*argv, "--json"]) == 4
    assert json.loads(capsys.readouterr().out)["status"] == "unknown"
    assert main(["verify", "x <= 2*x", "--domain", "x > 0"]) == 0
    assert main(["verify", "x <= 1e10", "--domain", "x > 0"]) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("relation", "domain", "where"),
    [
        ("x <= 1e300", "x > 0", {"x": sympy.Integer(10) ** 512}),
        ("-x <= 1e300", "x < 0", {"x": -(sympy.Integer(10) ** 512)}),
        ("k <= 10**400", "k >= 1 integer", {"k": sympy.Integer(10) ** 512 + 1}),
        ("x >= 1e-300", "x > 0", {"x": sympy.Rational(1, 10**512)}),
        ("log(x) <= 100", "x > 0", None),  # 10^64 is the first extreme point above e^100
        ("x*y <= 1e300", "x > 0, y > 0", None),
    ],
)
def test_counterexamples_at_extreme_magnitudes(
    relation: str, domain: str, where: dict[str, sympy.Expr] | None
) -> None:
    v = verify_inequality(relation, Domain.parse(domain), time_limit=60)
    assert v.status == "refuted", v.summary()
    if where is not None:
        assert v.counterexample == where


def test_the_box_search_alone_still_refutes_what_it_reaches() -> None:
    v = verify_inequality("x <= 1e10", Domain.parse("x > 0"))
    assert v.refuted and v.counterexample["x"] < 10**11  # not a far point


def test_true_inequalities_stay_proved_or_undecided_never_refuted() -> None:
    for relation, domain in [
        ("x <= x**2 + 1", "x > 0"),
        ("log(x) <= x", "x > 0"),
        ("x/(1 + x) < 1", "x > 0"),
    ]:
        v = verify_inequality(relation, Domain.parse(domain), time_limit=60)
        assert v.status in ("proved", "unknown"), v.summary()


def test_extreme_points_cover_every_end() -> None:
    d = Domain.parse("x > 0, y < 1, k >= 2 integer")
    points = list(extreme_points(d, ["x", "y", "k"]))
    xs = {p["x"] for p in points}
    assert sympy.Integer(10) ** 1000 + 0 in xs and sympy.Rational(1, 10**1000) in xs
    assert 1 - sympy.Rational(1, 10**16) in {p["y"] for p in points}
    assert -(sympy.Integer(10) ** 1000) + 1 in {p["y"] for p in points}
    ks = {p["k"] for p in points}
    assert all(k.is_Integer and k >= 2 for k in ks) and 2 + sympy.Integer(10) ** 4 in ks
    assert all(d.contains(p) is True for p in points)


def test_fast_growing_functions_are_not_evaluated_at_extreme_points() -> None:
    x = sympy.Symbol("x")
    huge = {"x": sympy.Integer(10) ** 300}
    assert cheap_at(x**3 + sympy.log(x), huge)
    assert not cheap_at(sympy.exp(sympy.exp(x)), huge)  # would never finish
    assert not cheap_at(2**x, huge) and not cheap_at(sympy.gamma(x), huge)
    assert cheap_at(sympy.exp(x), {"x": sympy.Integer(GROWTH_LIMIT)})
    start = time.process_time()
    assert not cheap_at(sympy.exp(sympy.exp(sympy.exp(x))), {"x": sympy.Integer(10) ** 8})
    assert time.process_time() - start < 5


def test_points_at_extreme_magnitudes_print_as_powers_of_ten() -> None:
    assert _integer_text(10**512) == "10**512"
    assert _integer_text(10**512 + 1) == "10**512 + 1"
    assert _integer_text(-(10**40) + 3) == "-10**40 + 3"
    assert _integer_text(123) == "123"
    n = 3 * 10**40 + 7
    assert _integer_text(n) == str(n)
