"""``ruff check`` is part of the test suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_clean():
    ruff = shutil.which("ruff")
    cmd = [ruff, "check", "."] if ruff else [sys.executable, "-m", "ruff", "check", "."]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0 and "No module named ruff" in result.stderr:
        pytest.fail("ruff is not installed: pip install -e '.[dev]'")
    assert result.returncode == 0, result.stdout + result.stderr
