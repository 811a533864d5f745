"""The deferred import of sympy (``dpaudit.deferred_imports``) and its start-up guard."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from deferred_reads import reads_during_import

from dpaudit.deferred_imports import DeferredModule, is_loaded

ROOT = Path(__file__).resolve().parents[2]

FRESH = """
import sys
from dpaudit.deferred_imports import is_loaded, sympy
before = "sympy" in sys.modules or is_loaded(sympy)
value = sympy.Integer(2) + 1
print(before, "sympy" in sys.modules, is_loaded(sympy), value)
"""


def test_the_first_attribute_read_imports_the_module():
    out = subprocess.run(
        [sys.executable, "-c", FRESH], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "True", "3"]


def test_threads_reading_at_once_share_one_module():
    module = DeferredModule("json")
    seen: list[object] = []
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        seen.append(module.dumps)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    import json

    assert seen == [json.dumps] * 8 and is_loaded(module)
    assert "imported" in repr(module) and "json" in repr(module)


def test_a_missing_attribute_is_the_module_s_error():
    module = DeferredModule("json")
    try:
        module.no_such_name  # noqa: B018
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_the_guard_finds_a_module_level_read(tmp_path, monkeypatch):
    """Control for the start-up guard: a module that reads ``sympy.Integer`` at import is
    reported with its line; reads inside functions are not."""
    (tmp_path / "probe_module_level.py").write_text(
        "from dpaudit.deferred_imports import sympy\n"
        "X = sympy.Integer(3)\n"
        "def f():\n"
        "    return sympy.Integer(4)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = reads_during_import("probe_module_level", root=tmp_path)
    assert found == ["probe_module_level.py:2: sympy.Integer"]


#: Packages and modules already on the deferred import: importing them reads no attribute of
#: ``sympy`` at module level (the other modules they import still import sympy for now).
DEFERRED = [
    "dpaudit.accountant",
    "dpaudit.accountant.curve",
    "dpaudit.events",
    "dpaudit.parse",
    "dpaudit.plans",
    "dpaudit.filters",
    "dpaudit.ledger",
    "dpaudit.pld",
    "dpaudit.cli",
    "dpaudit.cli.account",
    "dpaudit.cli.explain",
    "dpaudit.testing",
    "dpaudit.integrations.opacus",
    "dpaudit.integrations.dp_accounting",
]


@pytest.mark.slow
def test_deferred_modules_read_no_sympy_at_import():
    """A fresh interpreter imports :data:`DEFERRED` under the guard (whose control is the
    test above): no module-level read of the deferred sympy."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "tooling" / "deferred_reads.py"), *DEFERRED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
