"""Modules imported on first use, so that importing dpaudit does not pay for them.

``import sympy`` costs about 0.3 s, more than a whole ``dpaudit account "Laplace(1)"`` needs
without it (issue 19, part 4).  A dpaudit module that uses sympy only inside its functions
writes ``from dpaudit.deferred_imports import sympy`` and keeps its code as it is
(``sympy.exp(x)``, ``isinstance(v, sympy.Basic)``): the real import happens at the first
attribute read, not at import time.  Type checkers see the real module.  ``scipy_stats``
(``scipy.stats``, about 0.4 s) is deferred the same way.

Module-level code must therefore not read an attribute of a deferred module (a symbol made at
import, a table of sympy functions); ``tests/tooling/test_startup_imports.py`` checks which
imports leave sympy unimported.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

__all__ = ["DeferredModule", "is_loaded", "lazy_attributes", "scipy_stats", "sympy"]


class DeferredModule:
    """A stand-in for the module ``name``: its first attribute read imports the module (with
    :func:`importlib.import_module`, which holds the import system's per-module lock, so two
    threads reading at once import it once) and every read is then the module's attribute.

    Args:
        name: the module's dotted name.
    """

    __slots__ = ("_lock", "_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None
        self._lock = threading.Lock()

    def _load(self) -> ModuleType:
        module = self._module
        if module is None:
            with self._lock:
                if self._module is None:
                    self._module = importlib.import_module(self._name)
                module = self._module
        return module

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<deferred module {self._name!r} ({state})>"


def lazy_attributes(namespace: dict[str, Any], where: dict[str, str]) -> Callable[[str], Any]:
    """A package's module-level ``__getattr__`` (PEP 562) for names imported on first use:
    ``where`` maps each name to its module; the first read imports that module and keeps the
    value in ``namespace`` (the package's ``globals()``), so later reads are plain lookups.

    A submodule must not be named like one of the names: importing it would put the module
    in the name's place (``tests/tooling/test_lazy_exports.py`` checks the packages)."""

    def attribute(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(where[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")

    return attribute


def is_loaded(module: Any) -> bool:
    """Whether a deferred module has been imported (always True for a real module)."""
    return not isinstance(module, DeferredModule) or module._module is not None


if TYPE_CHECKING:
    import scipy.stats as scipy_stats
    import sympy as sympy
else:
    sympy = DeferredModule("sympy")
    #: ``scipy.stats`` costs about 0.4 s (45 MB) to import: the auditor reads it only in the
    #: joint exact test, the one-run audit and the sampler check.
    scipy_stats = DeferredModule("scipy.stats")
