"""The fingerprint of a report: a hash of every input of its expensive part (audit and
verification), so that ``dpaudit report --check`` knows when a report is stale.

It covers the target's specification, plan and claim, the seed, the report format, and the
source text of the modules defining the audited code, followed transitively through the
modules of the same top-level package they use.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpaudit.events import Event
from dpaudit.report.one_run import one_run_spec
from dpaudit.report.target import Target

__all__ = ["FORMAT_VERSION", "fingerprint"]

#: Bumped whenever the layout of a report changes (part of every fingerprint).
FORMAT_VERSION = 1


def _same_package_imports(module: types.ModuleType) -> list[str]:
    """Modules of the same top-level package that ``module`` uses: imported as modules, or
    whose functions and classes it imported by name.

    A package's own submodules are left out: the import system binds every submodule
    imported *anywhere in the process* as an attribute of its package, so following them
    made the fingerprint depend on what else the process had imported (a test worker that
    had imported one more library adapter saw every library report as stale)."""
    top = module.__name__.split(".")[0]
    children = module.__name__ + "." if hasattr(module, "__path__") else None
    found = []
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, types.ModuleType) else None
        if name is not None and children is not None and name.startswith(children):
            continue
        if name is None and (inspect.isclass(value) or inspect.isfunction(value)):
            name = getattr(value, "__module__", None)
        if isinstance(name, str) and name.split(".")[0] == top and name != module.__name__:
            found.append(name)
    return found


def _defining_modules(factory: Callable[[], Any]) -> list[str]:
    """The modules defining the object ``factory()`` makes (its class's and its own)."""
    try:
        made = factory()
    except Exception:  # the audit reports the failure; the fingerprint just skips it
        return []
    return [type(made).__module__, getattr(made, "__module__", "") or ""]


def _module_files(target: Target) -> list[Path]:
    """The source files of the audited code: the modules named by the target and its
    mechanism (or one-run trainer), and every module of the same top-level package they use,
    transitively (a helper moved to a sibling module still changes the fingerprint when it
    changes)."""
    source = target.source.split(":")[0].strip() if target.source else ""
    mods = [source] if source else []
    if target.mechanism is not None:
        mods += _defining_modules(target.mechanism)
    if target.one_run is not None:
        mods += _defining_modules(target.one_run.train)
    found: dict[str, types.ModuleType] = {}
    queue = [m for m in mods if m and m != "builtins"]
    while queue:
        name = queue.pop(0)
        module = sys.modules.get(name)
        if name in found or module is None:
            continue
        found[name] = module
        queue.extend(_same_package_imports(module))
    files: list[Path] = []
    for name in sorted(found):
        try:
            files.append(Path(inspect.getfile(found[name])))
        except (TypeError, OSError):
            continue
    return files


def fingerprint(target: Target, seed: int, plan: Event | None, claim: Any) -> str:
    """A hash of every input of the expensive part of the report (audit and verification).

    Covers the target's specification, its plan and claim, the seed, the report format, and
    the source text of the modules defining the audited code.
    """
    h = hashlib.sha256()
    spec = {
        "format": FORMAT_VERSION,
        "seed": seed,
        "name": target.name,
        "epsilon": target.epsilon,
        "delta": target.delta,
        "samples": target.samples,
        "options": {k: repr(v) for k, v in sorted(target.audit_options.items())},
        "parameters": {k: str(v) for k, v in sorted(target.parameters.items())},
        "plan": None if plan is None else plan.expression(),
        "claim": None
        if claim is None
        else [claim.statement, str(claim.epsilon), str(claim.delta), claim.domain.text()],
        "audited": target.mechanism is not None,
        **({"not_audited": target.not_audited} if target.not_audited else {}),
        **({"one_run": one_run_spec(target)} if target.one_run is not None else {}),
        **({"records": target.records.spec()} if target.records is not None else {}),
    }
    h.update(json.dumps(spec, sort_keys=True).encode())
    for path in _module_files(target):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()
