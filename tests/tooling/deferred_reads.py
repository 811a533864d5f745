"""Which module-level code reads a deferred module (``dpaudit.deferred_imports.sympy``) while
modules are being imported: each such read imports sympy at start-up.

Usage: ``python tests/tooling/deferred_reads.py dpaudit.accountant [more modules]`` prints one
line per read (the reading file and line, and the attribute) and exits 1 if there is any.
Used by ``tests/tooling/test_startup_imports.py`` and by whoever moves a module onto the
deferred import.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def reads_during_import(*modules: str, root: Path = ROOT) -> list[str]:
    """Import ``modules`` in this (fresh) interpreter and return the deferred reads made while
    the body of any module under ``root`` ran, as ``"file:line: sympy.Attribute"``."""
    from dpaudit import deferred_imports

    found: list[str] = []
    original = deferred_imports.DeferredModule.__getattr__

    def recording(self: deferred_imports.DeferredModule, attribute: str) -> object:
        stack = traceback.extract_stack()[:-1]
        if any(
            frame.name == "<module>" and str(root) in frame.filename and frame.filename != __file__
            for frame in stack
        ):
            caller = next(f for f in reversed(stack) if f.filename != deferred_imports.__file__)
            where = Path(caller.filename).resolve()
            if where.is_relative_to(root):
                where = where.relative_to(root)
            found.append(f"{where}:{caller.lineno}: {self._name}.{attribute}")
        return original(self, attribute)

    deferred_imports.DeferredModule.__getattr__ = recording  # type: ignore[method-assign]
    try:
        for name in modules:
            importlib.import_module(name)
    finally:
        deferred_imports.DeferredModule.__getattr__ = original  # type: ignore[method-assign]
    return found


def main(argv: list[str]) -> int:
    found = reads_during_import(*argv)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
