"""Packages that export names lazily (``dpaudit.audit``, ``dpaudit.accountant``): every public
name resolves to what it names, also after every submodule has been imported.

A submodule named like one of its package's public names (``audit/statistical_limit.py``
exported ``statistical_limit``) replaces the lazily exported function by the module the
first time something imports the submodule: ``from dpaudit.audit import statistical_limit``
then returned a module.  The test imports every submodule first, so it sees that clash.
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

LAZY_PACKAGES = ("dpaudit.audit", "dpaudit.accountant", "dpaudit.report", "mechanisms.estimators")


def shadowed(package: types.ModuleType, submodules: list[str]) -> list[str]:
    """The public names of ``package`` that are modules, or share a submodule's name."""
    found = set(package.__all__) & set(submodules)
    found |= {n for n in package.__all__ if isinstance(getattr(package, n), types.ModuleType)}
    return sorted(found)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_public_names_are_not_shadowed_by_submodules(name: str) -> None:
    package = importlib.import_module(name)
    submodules = [m.name for m in pkgutil.iter_modules(package.__path__)]
    for sub in submodules:
        importlib.import_module(f"{name}.{sub}")
    assert shadowed(package, submodules) == []


def test_the_check_sees_a_clash() -> None:
    """Control: the clash as the import system leaves it (the submodule set as the package's
    attribute of the same name) is found."""
    package = types.ModuleType("pkg")
    package.__all__ = ["limit", "other"]  # type: ignore[attr-defined]
    package.limit = types.ModuleType("pkg.limit")  # type: ignore[attr-defined]
    package.other = len  # type: ignore[attr-defined]
    assert shadowed(package, ["limit"]) == ["limit"]
    assert shadowed(package, []) == ["limit"]
