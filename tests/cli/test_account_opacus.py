"""``dpaudit account --opacus FILE``: an Opacus history saved as JSON, read as untrusted data."""

from __future__ import annotations

import json
import re

import pytest

from dpaudit.cli import main
from dpaudit.integrations import opacus
from dpaudit.integrations.opacus import opacus_guarantee

HISTORY = [[1.1, 0.01, 50], [0.9, 0.02, 30]]


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "data", [HISTORY, {"history": HISTORY, "mechanism": "prv"}], ids=["history", "state_dict"]
)
def test_history_file_gives_the_guarantee_of_the_schedule(tmp_path, capsys, data):
    path = tmp_path / "history.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["account", "--opacus", str(path), "--delta", "1e-5", "--json"]) == 0
    out = _json(capsys)
    g = opacus_guarantee(HISTORY, 1e-5)
    assert out["epsilon"] == g.epsilon_upper
    assert out["epsilon_lower"] <= out["epsilon"]
    assert "PoissonSampled(Gaussian(1.1), 0.01), 50" in out["event"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "[[1.1, 0.01, 50], [1.0, 2.0, 3]]",
            r"history\[1\]: sample_rate must be in \(0, 1\], got 2.0",
        ),
        ("[[NaN, 0.01, 50]]", r"not valid JSON \(expected a finite number, got NaN\)"),
        ("[[1.1, 0.01", r"not valid JSON"),
        ('{"mechanism": "rdp"}', r"expected a 'history' key"),
        ("7", r"expected an Opacus accountant"),
    ],
)
def test_bad_history_files_are_bad_input(tmp_path, capsys, text, match):
    path = tmp_path / "history.json"
    path.write_text(text, encoding="utf-8")
    assert main(["account", "--opacus", str(path), "--json"]) == 2
    assert re.search(match, _json(capsys)["error"]["message"])


def test_file_size_is_limited(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(opacus, "MAX_FILE_BYTES", 10)
    path = tmp_path / "history.json"
    path.write_text(json.dumps(HISTORY), encoding="utf-8")
    assert main(["account", "--opacus", str(path), "--json"]) == 2
    assert "at most 10 bytes" in _json(capsys)["error"]["message"]


def test_opacus_excludes_an_expression(tmp_path, capsys):
    path = tmp_path / "history.json"
    path.write_text(json.dumps(HISTORY), encoding="utf-8")
    assert main(["account", "Laplace(1)", "--opacus", str(path), "--json"]) == 2
    assert "got an event expression and --opacus" in _json(capsys)["error"]["message"]
