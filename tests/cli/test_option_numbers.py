"""One rule for every command's numbers: an option's value is finite and in its range.

``dpaudit audit ... --epsilon 1e999`` read the text as a float (infinity) and audited an
infinite claim (exit 0) while ``dpaudit learn`` refused the same text; every command now goes
through :mod:`dpaudit.cli.numbers` and refuses it (exit 2) with the same message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.cli import main
from dpaudit.cli.numbers import exact_option, float_option, range_text

#: Every command-line option that takes a privacy parameter or another real number, with
#: the rest of a command line that would run.
_LEARN = ["learn", "net-margin", "--train", "a.csv", "--test", "b.csv", "--label", "y"]
OPTIONS = [
    (["audit", "mechanisms.catalogue:LaplaceCount", "--samples", "1000"], "--epsilon"),
    (["audit", "mechanisms.catalogue:LaplaceCount", "--samples", "1000"], "--delta"),
    (["audit", "mechanisms.catalogue:LaplaceCount", "--samples", "1000"], "--confidence"),
    (["account", "Laplace(1)"], "--epsilon"),
    (["account", "Laplace(1)"], "--delta"),
    (["explain", "Laplace(1)"], "--delta"),
    (["compare", "Laplace(1)", "--k", "1,2"], "--delta"),
    (_LEARN, "--epsilon"),
    ([*_LEARN, "--epsilon", "1"], "--delta"),
    (["verify", "x <= 2*x", "--domain", "x > 0"], "--time-limit"),
]


@pytest.mark.parametrize("text", ["1e999", "inf", "-inf", "nan", "Infinity"])
@pytest.mark.parametrize(("argv", "flag"), OPTIONS, ids=[f"{a[0]} {f}" for a, f in OPTIONS])
def test_an_infinite_or_overflowing_number_is_refused_by_every_command(
    argv: list[str], flag: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, f"{flag}={text}", "--json"]) == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert error["message"].startswith(f"{flag} must be a finite number in "), error
    assert error["message"].endswith(f"got {text!r}") or f"got {text!r} (" in error["message"]


def test_audit_no_longer_takes_an_infinite_claim(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["audit", "mechanisms.catalogue:LaplaceCount", "--samples", "1000", "--seed", "0"]
    assert main([*argv, "--epsilon", "1e999"]) == 2
    assert "--epsilon must be a finite number in [0, inf), got '1e999'" in capsys.readouterr().err
    assert main([*argv, "--epsilon", "1e3"]) == 0  # a large finite claim is a claim


def test_the_rule_reads_exact_values_exactly() -> None:
    assert float_option("--x", None, 0.0) is None and exact_option("--x", None, 0.0) is None
    assert float_option("--epsilon", "1e308", 0.0) == 1e308
    with pytest.raises(ValueError, match=r"--epsilon must be a finite number in \[0, inf\)"):
        float_option("--epsilon", "2e308", 0.0)
    # below 1 exactly, though its nearest double is 1.0
    assert exact_option("--delta", "0.99999999999999999999", 0.0, 1.0) < 1
    with pytest.raises(ValueError, match=r"--delta must be a finite number in \[0, 1\), got '1'"):
        exact_option("--delta", "1", 0.0, 1.0)
    assert str(exact_option("--delta", "log(2)/2", 0.0, 1.0)) == "log(2)/2"
    with pytest.raises(ValueError, match=r"got 'exp\(1000\)'"):
        exact_option("--epsilon", "exp(1000)", 0.0)  # beyond a double: refused like 1e999
    with pytest.raises(ValueError, match=r"got 'Laplace\(\(' \(syntax error"):
        exact_option("--delta", "Laplace((", 0.0, 1.0)
    assert range_text(0.0, 1.0, True, False) == "(0, 1]"
    assert range_text(0.0, float("inf"), False, True) == "[0, inf)"


def test_learn_keeps_its_ranges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["learn", "net-margin", "--train", "a.csv", "--test", "b.csv", "--label", "y"]
    assert main([*argv, "--epsilon", "0"]) == 2
    assert "--epsilon must be a finite number in (0, inf), got '0'" in capsys.readouterr().err
