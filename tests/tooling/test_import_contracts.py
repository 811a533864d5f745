"""The import contracts of ``pyproject.toml`` ([tool.importlinter]) hold.

ARCHITECTURE.md: dpaudit's layers each import only the layers below them; dpaudit never
imports the packages that use it (mechanisms, benchmarks, tests), which register with it
through entry points (``dpaudit.plugins``); and no module is part of an import circle.  The
contracts are checked with import-linter on this checkout (a fresh interpreter whose path
starts with it).  A second test shows that the same contract types break on a small package
that violates them, so a pass here is evidence.
"""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

import dpaudit

ROOT = Path(__file__).resolve().parents[2]

LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))"
)


def _lint(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(cwd), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    result = subprocess.run(
        [sys.executable, "-c", LINT, str(config)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "No module named 'importlinter'" in result.stderr:
        pytest.fail("import-linter is not installed: pip install -e '.[dev]'")
    return result


def test_the_import_contracts_hold() -> None:
    result = _lint(ROOT / "pyproject.toml", ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout, result.stdout


def test_every_top_level_module_of_dpaudit_has_a_layer() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    placed = {
        name.strip().strip("()").removeprefix("dpaudit.")
        for layer in layers
        for name in layer.split("|")
    }
    modules = {m.name for m in pkgutil.iter_modules(dpaudit.__path__)}
    assert modules - placed == set(), "place these modules in the layers contract"


def test_the_contracts_break_on_a_package_that_violates_them(tmp_path: Path) -> None:
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("import toy.high\n")  # a layer importing the one above
    (pkg / "high.py").write_text("import toy.low\nimport user\n")  # a circle; a user imported
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "__init__.py").write_text("import toy.high\n")
    config = tmp_path / "contracts.toml"
    config.write_text(
        textwrap.dedent("""
        [tool.importlinter]
        root_packages = ["toy", "user"]

        [[tool.importlinter.contracts]]
        name = "layers"
        type = "layers"
        layers = ["toy.high", "toy.low"]

        [[tool.importlinter.contracts]]
        name = "users"
        type = "forbidden"
        source_modules = ["toy"]
        forbidden_modules = ["user"]

        [[tool.importlinter.contracts]]
        name = "acyclic"
        type = "acyclic_siblings"
        ancestors = ["toy"]
    """)
    )
    result = _lint(config, tmp_path)
    assert result.returncode != 0
    assert "0 kept, 3 broken" in result.stdout, result.stdout
