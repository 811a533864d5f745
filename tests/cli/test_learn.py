"""``dpaudit learn``: the list, a fit on CSV files, and bad input (exit code 2, JSON errors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MARGIN = [
    "--train",
    str(EXAMPLES / "margin_train.csv"),
    "--test",
    str(EXAMPLES / "margin_test.csv"),
]
BOOLEAN = [
    "--train",
    str(EXAMPLES / "boolean_train.csv"),
    "--test",
    str(EXAMPLES / "boolean_test.csv"),
]


def _json(capsys, argv: list[str]) -> tuple[int, object]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_list_json_names_task_source_privacy(capsys) -> None:
    code, rows = _json(capsys, ["learn", "--list", "--json"])
    assert code == 0
    by_name = {r["name"]: r for r in rows}
    assert by_name["noisy-sgd-margin"]["task"] == "halfspace"
    assert by_name["decision-list"]["task"] == by_name["dp-winnow"]["task"] == "boolean"
    assert by_name["label-dp-margin"]["privacy"] == "label"
    kinds = ("pure", "approximate", "label", "prediction")
    assert all(r["source"] and r["privacy"] in kinds for r in rows)


def test_fit_on_csv_reports_error_and_a_guarantee_within_the_request(capsys) -> None:
    argv = ["learn", "net-margin", *MARGIN, "--label", "label", "--epsilon", "1", "--seed", "3"]
    code, out = _json(capsys, [*argv, "--json"])
    assert code == 0
    assert out["n"] == 600 and out["d"] == 4 and out["classes"] == ["ham", "spam"]
    assert 0 <= out["test_error"] <= 0.5 and out["seconds"] >= 0
    assert out["epsilon"] <= 1.0 and out["delta"] == 0.0
    code, again = _json(capsys, [*argv, "--json"])
    assert again["test_error"] == out["test_error"]  # the seed makes it reproducible


def test_approximate_learner_and_params(capsys) -> None:
    argv = ["learn", "decision-list", *BOOLEAN, "--label", "label", "--epsilon", "0.9"]
    code, out = _json(capsys, [*argv, "--delta", "1e-6", "--seed", "1", "--json"])
    assert code == 0 and out["epsilon"] <= 0.9 and out["delta"] <= 1e-6
    assert out["test_error"] <= 0.35  # n = 600 at eps = 0.9 (recorded 0.29; 0.0 at n = 4000)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["learn", "nope", *MARGIN, "--label", "label", "--epsilon", "1"], "learner must be one"),
        (["learn", "net-margin", *MARGIN, "--label", "y", "--epsilon", "1"], "--label must name"),
        (["learn", "net-margin", *MARGIN, "--label", "label", "--epsilon", "0"], "--epsilon must"),
        (["learn", "net-margin", *MARGIN, "--label", "x1", "--epsilon", "1"], "'label' must be"),
        (["learn", "decision-list", *MARGIN, "--label", "label", "--epsilon", "0.5"], "boolean"),
        (["learn", "net-margin", *MARGIN, "--label", "label"], "--epsilon is required"),
        (
            ["learn", "net-margin", *MARGIN, "--label", "label", "--epsilon", "1", "--param", "x"],
            "KEY=VALUE",
        ),
        (
            ["learn", "net-margin", *MARGIN, "--label", "label", "--epsilon", "1", "--seed", "-2"],
            "--seed must be an integer",
        ),
    ],
)
def test_bad_input_exit_2_with_a_json_error(capsys, argv, match) -> None:
    code, out = _json(capsys, [*argv, "--json"])
    assert code == 2
    assert out["error"]["type"] == "bad_input" and match in out["error"]["message"]


def test_non_numeric_feature_and_missing_file(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,2,x\n1,oops,y\n")
    argv = ["learn", "net-margin", "--train", str(bad), "--test", str(bad), "--label", "label"]
    code, out = _json(capsys, [*argv, "--epsilon", "1", "--json"])
    assert code == 2 and "line 3: feature 'b' must be a finite number" in out["error"]["message"]
    three = tmp_path / "three.csv"
    three.write_text("a,label\n1,x\n2,y\n3,z\n")
    argv[3] = argv[5] = str(three)
    code, out = _json(capsys, [*argv, "--epsilon", "1", "--json"])
    assert (
        code == 2 and "exactly two classes in --train, got 3 (x, y, z)" in out["error"]["message"]
    )
    argv[3] = str(tmp_path / "missing.csv")
    code, out = _json(capsys, [*argv, "--epsilon", "1", "--json"])
    assert code == 2 and "no such file" in out["error"]["message"]


@pytest.mark.slow
def test_readable_summary_through_the_module_entry_point() -> None:
    cmd = [sys.executable, "-m", "dpaudit", "learn", "pure-margin", *MARGIN, "--label", "label"]
    proc = subprocess.run(
        [*cmd, "--epsilon", "1", "--seed", "2"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "test error" in proc.stdout and "-DP" in proc.stdout


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet=st.sampled_from(list('ab,1.0-e\n"xy \t;\r\x00')), max_size=80))
def test_any_csv_text_is_read_or_refused_with_a_value_error(tmp_path, text) -> None:
    """Arbitrary small files (Hypothesis, 200 examples): read_csv returns finite features of
    the header's width, or raises a ValueError; nothing else escapes."""
    from dpaudit.cli.learn import read_csv

    path = tmp_path / "any.csv"
    path.write_text(text, newline="")
    try:
        X, y, names = read_csv(str(path), "y", "--train")
    except ValueError:
        return
    assert X.shape == (len(y), len(names)) and np.isfinite(X).all()
