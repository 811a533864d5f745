"""``dpaudit audit --certification``: the joint exact test from the command line (and from
``audit_records``), the default ``auto`` (joint at delta > 0, Clopper-Pearson at delta = 0),
a bad value refused as bad input.

Audits certify at confidence 0.95 (alpha = 0.05), 20,000 samples per dataset, seed 0, on a
Laplace count with half the noise its claim needs (true epsilon 2 against the claimed 1).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpaudit.audit import audit_records
from dpaudit.cli import main

BROKEN = "mechanisms.broken:BrokenLaplaceTooLittleNoise"
ARGS = ("--samples", "20000", "--seed", "0", "--arithmetic", "real", "--json", "--no-progress")


def test_joint_certification_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", BROKEN, *ARGS, "--certification", "joint"]) == 1
    joint = json.loads(capsys.readouterr().out)
    assert joint["violation"] and "joint exact test" in joint["correction"]
    assert main(["audit", BROKEN, *ARGS]) == 1  # delta = 0: auto is the rectangle
    default = json.loads(capsys.readouterr().out)
    assert "joint" not in default["correction"] and "Clopper-Pearson" in default["correction"]
    # the same event and counts certified two ways; each bound below the true epsilon 2
    assert default["epsilon_lower"] < 2.0 and joint["epsilon_lower"] < 2.0


def test_auto_certification_is_joint_at_positive_delta(capsys: pytest.CaptureFixture[str]) -> None:
    delta = ("--delta", "1e-3")
    assert main(["audit", BROKEN, *ARGS, *delta]) == 1
    auto = json.loads(capsys.readouterr().out)
    assert "joint exact test" in auto["correction"]
    assert main(["audit", BROKEN, *ARGS, *delta, "--certification", "joint"]) == 1
    assert json.loads(capsys.readouterr().out)["epsilon_lower"] == auto["epsilon_lower"]
    assert main(["audit", BROKEN, *ARGS, *delta, "--certification", "clopper-pearson"]) == 1
    rectangle = json.loads(capsys.readouterr().out)
    assert "joint" not in rectangle["correction"]
    assert rectangle["epsilon_lower"] <= auto["epsilon_lower"] < 2.0


def test_sequential_certification_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--certification sequential``: the broken Laplace is caught at the first look (1,000
    certification samples of the 15,000 the fixed test draws), below its true epsilon 2."""
    assert main(["audit", BROKEN, *ARGS, "--certification", "sequential"]) == 1
    seq = json.loads(capsys.readouterr().out)
    assert seq["violation"] and "sequential" in seq["correction"]
    assert seq["samples_d0"] < 15_000 and seq["epsilon_lower"] < 2.0


def test_a_bad_certification_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", BROKEN, *ARGS, "--certification", "bayes"]) == 2
    out = capsys.readouterr()
    assert json.loads(out.out)["error"]["exit_code"] == 2  # --json: the error as JSON too
    assert "argument --certification: invalid choice: 'bayes'" in out.err


def test_audit_records_refuses_a_bad_certification_before_searching() -> None:
    def fn(data: np.ndarray, rng: np.random.Generator) -> float:
        raise AssertionError("the search must not start")

    with pytest.raises(
        ValueError, match="certification must be 'auto', 'clopper-pearson', 'joint' or 'sequential'"
    ):
        audit_records(fn, [(0, 1)], epsilon=1.0, samples=100, certification="bayes")
