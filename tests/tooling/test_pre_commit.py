"""The pre-commit configuration runs the checks CI runs, with the tools the dev install has.

``pre-commit validate-config`` checks the file against pre-commit's own schema; every hook is
a local one whose program is installed (no network, the pinned versions).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".pre-commit-config.yaml"


def _hooks() -> dict[str, dict[str, object]]:
    data = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    return {h["id"]: h for repo in data["repos"] for h in repo["hooks"]}


def test_the_config_is_valid_for_pre_commit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(CONFIG)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_hooks_are_the_ci_checks_and_their_programs_are_installed() -> None:
    hooks = _hooks()
    assert set(hooks) == {"ruff-check", "ruff-format", "import-contracts", "mypy"}
    for hook in hooks.values():
        assert hook["language"] == "system"
        program = shlex.split(str(hook["entry"]))[0]
        assert program == "python" or shutil.which(program), f"{program} is not installed"
