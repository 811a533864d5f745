"""The event-expression parser and the ``dpaudit`` command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import sympy

from dpaudit.cli import main
from dpaudit.events import Composed, Gaussian, Laplace, PoissonSampled, SelfComposed
from dpaudit.parse import ExpressionError, parse_event, parse_number


def test_parses_nested_expressions_exactly():
    e = parse_event("SelfComposed(Laplace(scale=10), 100)")
    assert e == SelfComposed(Laplace(10), 100)
    e = parse_event("Composed([Laplace(0.1), Gaussian(1.1, sensitivity=2)])")
    assert e == Composed([Laplace("0.1"), Gaussian("1.1", sensitivity=2)])
    assert parse_event("PoissonSampled(Gaussian(1.1), 256/60000)").rate == sympy.Rational(
        256, 60000
    )
    assert parse_number("1e-6") == sympy.Rational(1, 10**6)
    assert PoissonSampled


@pytest.mark.parametrize(
    "text,pattern",
    [
        ("__import__('os').system('true')", "starts with '_'"),
        ("__import__('os')", "starts with '_'"),
        ("Laplace(1).scale", "character '.' at column 11 is not allowed"),
        ("Laplace(1", "syntax error"),
        ("Laplace(-1)", r"scale must be in \(0, inf\), got -1"),
        ("Laplace(b)", "unknown name 'b'"),
        ("lambda: 1", "character ':' at column 7 is not allowed"),
        ("Laplace(**{'scale': 1})", "syntax error"),
        ("", "empty"),
        ("3", "must be an event"),
    ],
)
def test_rejects_malformed_and_unsafe_expressions(text, pattern):
    with pytest.raises(ExpressionError, match=pattern):
        parse_event(text)


def test_symbols_only_when_allowed():
    e = parse_event("SelfComposed(Laplace(b), k)", symbols=["b", "k"])
    assert {s.name for s in e.free_symbols} == {"b", "k"}


def test_account_json(capsys):
    code = main(["account", "SelfComposed(Laplace(scale=10), 100)", "--delta", "1e-6", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    # the tight value is 4.69267 (privacy loss distribution; 4.6927 rounded): an upper bound
    # at or just above it
    assert 4.69267 <= out["epsilon"] <= 4.6927 * 1.0005
    assert out["epsilon_lower"] is not None and out["epsilon_lower"] <= out["epsilon"]
    assert out["delta"] >= 1e-6 and out["theorem"]
    assert out["kind"].startswith("upper bound")


def test_account_text_and_latex(capsys):
    assert main(["account", "Laplace(2)"]) == 0
    assert "is (0.5, 0)-DP" in capsys.readouterr().out
    assert main(["account", "Laplace(2)", "--latex"]) == 0
    assert r"\begin{itemize}" in capsys.readouterr().out


def test_malformed_expression_is_one_line_exit_2(capsys):
    assert main(["account", "Laplace(1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpaudit account: error: syntax error") and err.count("\n") == 1


def test_console_script_help_lists_commands():
    out = subprocess.run(
        [sys.executable, "-m", "dpaudit", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("demo", "account"):
        assert command in out


def test_demo_quick_runs(capsys):
    assert main(["demo", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "derivation:" in out and "within plan" in out
