"""Floats become sympy numbers only through ``from_float``: sympy maps ``Rational(inf)`` to 0,
which once turned an infinite RDP divergence into a zero one and an unsound epsilon."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accountant import account
from dpaudit.events import Laplace, SelfComposed
from dpaudit.numeric import from_float

ROOT = Path(__file__).resolve().parents[2]
FLOAT_MAKERS = {"float", "float_up", "float_down", "mpf_to_float", "to_float"}


@settings(max_examples=200, derandomize=True)
@given(st.floats(allow_nan=False))
def test_exact_value_or_signed_infinity(x: float) -> None:
    value = from_float(x)
    if math.isinf(x):
        assert value == (sympy.oo if x > 0 else -sympy.oo)
    else:
        assert value == sympy.Rational(x) and float(value) == x


def test_nan_is_refused() -> None:
    with pytest.raises(ValueError, match="nan"):
        from_float(math.nan)


@pytest.mark.parametrize("scale", ["1e-400", "1e-320"])
def test_a_vanishing_laplace_scale_has_an_infinite_upper_bound(scale: str) -> None:
    # was 12.43 at delta 1e-6 (RDP conversion of a divergence rounded to 0)
    g = account(SelfComposed(Laplace(sympy.Rational(1, 10 ** int(scale[3:]))), 5), "1e-6")
    assert g.epsilon_upper == math.inf


def _rational_of_a_float(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "Rational" or len(node.args) != 1 or not isinstance(node.args[0], ast.Call):
        return False
    inner = node.args[0].func
    inner_name = inner.attr if isinstance(inner, ast.Attribute) else getattr(inner, "id", "")
    return inner_name in FLOAT_MAKERS


@pytest.mark.slow
def test_no_rational_of_a_computed_float_in_the_package() -> None:
    found = []
    for path in sorted((ROOT / "dpaudit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _rational_of_a_float(node):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"use dpaudit.numeric.from_float: {found}"


def test_the_scan_finds_the_pattern() -> None:
    call = ast.parse("sympy.Rational(float_up(x))").body[0].value  # type: ignore[attr-defined]
    assert _rational_of_a_float(call)
