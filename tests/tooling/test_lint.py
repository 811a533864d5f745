"""``ruff check`` and ``ruff format --check`` are part of the test suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    ruff = shutil.which("ruff")
    cmd = [ruff, *args] if ruff else [sys.executable, "-m", "ruff", *args]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0 and "No module named ruff" in result.stderr:
        pytest.fail("ruff is not installed: pip install -e '.[dev]'")
    return result


def test_ruff_check_is_clean() -> None:
    result = _ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_every_file_unchanged() -> None:
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout + result.stderr
