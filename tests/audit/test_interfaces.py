"""The user-facing interfaces: assert_private, the dpaudit audit command, the result."""

from __future__ import annotations

import json

import _audit_mechanisms as mech
import pytest

from dpaudit.cli import main
from dpaudit.testing import DEFAULT_CONFIDENCE, assert_private


def test_assert_private_passes_a_correct_mechanism_deterministically():
    a = assert_private(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=50_000)
    b = assert_private(mech.ShiftedLaplace(1.0), 0.0, 1.0, epsilon=1.0, samples=50_000)
    assert a.epsilon_lower == b.epsilon_lower and a.confidence == DEFAULT_CONFIDENCE


def test_assert_private_fails_a_broken_mechanism_with_the_summary():
    with pytest.raises(AssertionError, match=r"privacy claim refuted(.|\n)*VIOLATION"):
        assert_private(mech.ShiftedLaplace(0.5), 0.0, 1.0, epsilon=1.0, samples=50_000)


def test_assert_private_needs_epsilon():
    with pytest.raises(ValueError, match="epsilon must be given"):
        assert_private(mech.ShiftedLaplace(1.0), 0.0, 1.0)


def test_cli_exit_status_and_json(capsys):
    args = [
        "audit",
        "mechanisms.broken:BrokenLaplaceTooLittleNoise",
        "--samples",
        "50000",
        "--seed",
        "1",
        "--json",
    ]
    assert main(args) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["violation"] is True and data["seed"] == 1
    assert (
        main(["audit", "mechanisms.catalogue:LaplaceCount", "--samples", "50000", "--seed", "1"])
        == 0
    )
    assert "no violation found" in capsys.readouterr().out


def test_cli_datasets_query_pairs_and_exact(capsys):
    assert (
        main(
            [
                "audit",
                "_audit_mechanisms:laplace_loop",
                "--d0",
                "0",
                "--d1",
                "1",
                "--epsilon",
                "1",
                "--samples",
                "5000",
                "--seed",
                "0",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "audit",
                "mechanisms.broken:BrokenNoisyMaxReleasesValue",
                "--query-pairs",
                "3",
                "--samples",
                "40000",
                "--seed",
                "0",
            ]
        )
        == 1
    )
    assert main(["audit", "mechanisms.broken:BrokenNoisyMaxWrongNoiseScale", "--exact"]) == 1
    assert "exact" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch:thing"], "MODULE:OBJECT must name an importable object"),
        (["mechanisms.catalogue"], "MODULE:OBJECT must look like"),
        (["_audit_mechanisms:laplace_loop", "--d0", "0", "--d1", "1"], "--epsilon must be given"),
        (["_audit_mechanisms:laplace_loop", "--epsilon", "1"], "datasets must be given"),
        (
            ["_audit_mechanisms:laplace_loop", "--epsilon", "1", "--d0", "[1,", "--d1", "1"],
            "--d0 must be JSON",
        ),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args, message, capsys):
    assert main(["audit", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
