"""Claims, report targets and demo sections come from entry points (``dpaudit.plugins``).

dpaudit never imports the ``mechanisms`` package: the package declares entry points in
``pyproject.toml`` and dpaudit loads them.  A plugin that fails to load is reported in one
line naming it (never a traceback, never skipped silently).
"""

from __future__ import annotations

import importlib.metadata
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit import plugins
from dpaudit.cli import main

ROOT = Path(__file__).resolve().parents[2]

BROKEN = "no_such_plugin_module_xyz"


def _only(monkeypatch: pytest.MonkeyPatch, group: str, value: str) -> None:
    """Make ``group`` hold one entry point ``broken = value`` (and no other)."""
    ep = importlib.metadata.EntryPoint(name="broken", value=value, group=group)
    monkeypatch.setattr(plugins, "entry_points", lambda g: [ep] if g == group else [])


def test_the_mechanisms_package_declares_its_plugins() -> None:
    values = {
        kind: [ep.value for ep in plugins.entry_points(group)]
        for kind, group in plugins.GROUPS.items()
    }
    assert "mechanisms.report_targets:register" in values["report_targets"]
    assert "mechanisms.demo:register" in values["demos"]
    assert "mechanisms.claims:register" in values["claims"]


def test_every_mechanisms_module_that_registers_claims_is_loaded_by_its_plugin() -> None:
    import mechanisms
    from mechanisms.claims import CLAIM_MODULES

    def source(m: pkgutil.ModuleInfo) -> str:  # a subpackage: all its modules
        base = ROOT / "mechanisms" / m.name
        files = sorted(base.rglob("*.py")) if m.ispkg else [base.with_suffix(".py")]
        return "".join(f.read_text("utf-8") for f in files)

    registering = {
        f"mechanisms.{m.name}"
        for m in pkgutil.iter_modules(mechanisms.__path__)
        if "register_claim(" in source(m)
    }
    assert registering == set(CLAIM_MODULES)


def test_the_checkout_pyproject_is_read_when_the_installed_metadata_lacks_a_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])
    values = [ep.value for ep in plugins.entry_points("dpaudit.demos")]
    assert values == ["mechanisms.demo:register"]


def test_every_claim_plugin_loads() -> None:
    from dpaudit.verify import load_claim_modules

    loads = load_claim_modules()
    assert [m for m in loads if m.status != "loaded"] == []


def test_a_broken_claim_plugin_is_an_error_row_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpaudit.verify import load_claim_modules

    _only(monkeypatch, "dpaudit.claims", BROKEN)
    (row,) = [m for m in load_claim_modules() if m.module == BROKEN]
    assert row.status == "error"
    assert "plugin 'broken'" in row.detail and BROKEN in row.detail
    assert "\n" not in row.detail


@pytest.mark.parametrize(
    ("group", "argv"),
    [
        ("dpaudit.report_targets", ["report", "--list"]),
        ("dpaudit.demos", ["demo", "--quick"]),
    ],
)
def test_a_broken_plugin_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], group: str, argv: list[str]
) -> None:
    _only(monkeypatch, group, f"{BROKEN}:register")
    assert main(argv) == 3
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(
        f"dpaudit {argv[0]}: error: plugin failure: plugin 'broken' ({group} = {BROKEN}:"
    )
    assert "ModuleNotFoundError" in line


def test_a_plugin_that_raises_when_called_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, "dpaudit.demos", "json:loads")  # called with no argument: TypeError
    (load,) = plugins.load_group("dpaudit.demos")
    assert load.status == "error" and load.detail.startswith("TypeError")
    with pytest.raises(plugins.PluginError, match=r"plugin 'broken' \(dpaudit.demos = json"):
        plugins.raise_on_errors([load])


def test_dpaudit_imports_no_mechanisms_module_to_account_or_verify_an_inequality() -> None:
    script = (
        "import sys; from dpaudit.cli import main; "
        "main(['account', 'Laplace(1)']); main(['verify', 'x <= 2', '--domain', "
        "'0 < x <= 1']); print(sorted(m for m in sys.modules if m.startswith('mechanisms')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"
