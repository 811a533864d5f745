"""Smoke tests of the verify / explain / compare subcommands."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpaudit.cli import main


def test_verify_inequality_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "exp(x) - 1 <= 2*x", "--domain", "0 < x <= 5/4"]) == 0
    assert "proved" in capsys.readouterr().out
    assert main(["verify", "exp(x) - 1 <= 2*x", "--domain", "0 < x < 3"]) == 1
    assert "refuted at x =" in capsys.readouterr().out


@pytest.mark.slow
def test_verify_one_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--claim", "004/lemma-a1-small-lambda", "--time-limit", "60"]) == 0
    assert "proved" in capsys.readouterr().out


def test_explain_text_and_latex(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "SelfComposed(Laplace(10), 20)"]) == 0
    out = capsys.readouterr().out
    assert "Step 1. Laplace mechanism" in out and "eps = k eps_0" in out
    assert main(["explain", "SelfComposed(Laplace(10), 20)", "--latex"]) == 0
    assert r"\begin{enumerate}" in capsys.readouterr().out


def test_compare_table_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "cmp.png"
    assert main(["compare", "Laplace(10)", "--k", "1,10", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "basic composition" in out and png.stat().st_size > 1000
