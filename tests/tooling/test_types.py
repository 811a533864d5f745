"""``mypy`` type-checks the package cleanly with the configuration of ``pyproject.toml``.

The configuration (``[tool.mypy]``) names what is checked (``packages = ["dpaudit"]``) and how
strictly; docs/development.md ("Type checking") states the policy for ``# type: ignore``.  The
package check takes about 40 s on a cold cache, so it is a slow test (it runs in CI).  A
second, fast test shows that the same configuration rejects a small module with deliberate
errors, including two that only the options set there report, so a pass is evidence.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "pyproject.toml"


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(CONFIG), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=280,
    )


@pytest.mark.slow
def test_package_type_checks_cleanly() -> None:
    result = _mypy()  # the targets come from the configuration
    assert result.returncode == 0, "mypy found errors:\n" + result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout, result.stdout + result.stderr


#: Each line is an error under pyproject's configuration: an ordinary type error, one found
#: only with ``check_untyped_defs`` (the function has no annotations) and one only with
#: ``warn_unused_ignores``.
BROKEN = textwrap.dedent(
    """\
    def typed(n: int) -> str:
        return n

    def untyped():
        return 1 + "one"

    ok: int = 1  # type: ignore[assignment]
    """
)

CLEAN = textwrap.dedent(
    """\
    def typed(n: int) -> str:
        return str(n)
    """
)


@pytest.mark.slow
def test_configuration_rejects_a_module_with_type_errors(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "clean.py").write_text(CLEAN)
    # the clean module passes, so a failure below is the errors', not the set-up's
    clean = _mypy("--cache-dir", cache, "clean.py", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    broken = _mypy("--cache-dir", cache, "broken.py", cwd=tmp_path)
    out = broken.stdout + broken.stderr
    assert broken.returncode == 1, out
    assert 'broken.py:2: error: Incompatible return value type (got "int", expected "str")' in out
    assert "broken.py:5: error: Unsupported operand types" in out  # check_untyped_defs
    assert 'broken.py:7: error: Unused "type: ignore" comment' in out  # warn_unused_ignores
