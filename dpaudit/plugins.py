"""Discovery of the packages that extend dpaudit, through entry points.

dpaudit never imports the packages that use it.  A package that has privacy claims, report
targets or demo sections to offer declares them as entry points in its ``pyproject.toml``,
one group per kind, and dpaudit loads them when a registry is first needed:

* ``dpaudit.claims`` -- a callable ``register()`` that imports the modules registering claims
  with :func:`dpaudit.verify.register_claim` (or such a module itself; read by
  ``dpaudit verify --all`` and the reports);
* ``dpaudit.report_targets`` -- a callable ``register()`` that registers report targets with
  :func:`dpaudit.report.register_target` (read by ``dpaudit report``);
* ``dpaudit.report_target_index`` -- optional, under the same name as a ``report_targets``
  entry point: the ``(name, group, title)`` of each target it registers, readable without
  importing their code (read by ``dpaudit report --list``; :mod:`dpaudit.report.listing`);
* ``dpaudit.demos`` -- a callable ``register()`` that adds sections to the tour with
  :func:`dpaudit.demo.register_section` (read by ``dpaudit demo``);
* ``dpaudit.learners`` -- a callable ``register()`` that registers private learners with
  :func:`dpaudit.learners.register_learner` (read by ``dpaudit learn``).

For example, this repository's ``mechanisms`` package declares::

    [project.entry-points."dpaudit.claims"]
    mechanisms = "mechanisms.claims:register"

    [project.entry-points."dpaudit.report_targets"]
    mechanisms = "mechanisms.report_targets:register"

Entry points are read from the installed package metadata, which ``pip install -e .``
writes: after adding or changing one, run it again.  For development from a source checkout
whose installed metadata is older than its ``pyproject.toml`` (or belongs to another
checkout), the entry points that this checkout's ``pyproject.toml`` declares are added to the
installed ones (same name: the installed one is kept).

A plugin that fails to load is never skipped silently: its :class:`PluginLoad` has status
``"error"`` and a one-line description naming it.

Objects the user names on the command line (``dpaudit audit mymodule:fn``, ``dpaudit report
pkg.mod:OBJ``) are loaded here too, by :func:`load_object`, the one place that imports a
``MODULE:OBJECT`` target: the current directory goes first on the import path (as pytest
and uvicorn do), and a failure says in one line whether the module or the attribute is
missing (:class:`TargetError`).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "GROUPS",
    "PluginError",
    "PluginLoad",
    "TargetError",
    "entry_points",
    "load_group",
    "load_object",
    "raise_on_errors",
]

#: The entry-point groups dpaudit reads, by kind.
GROUPS: dict[str, str] = {
    "claims": "dpaudit.claims",
    "report_targets": "dpaudit.report_targets",
    "report_target_index": "dpaudit.report_target_index",
    "demos": "dpaudit.demos",
    "learners": "dpaudit.learners",
}

#: The checkout's ``pyproject.toml`` (present when dpaudit runs from a source tree).
_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


class PluginError(RuntimeError):
    """One or more plugins of an entry-point group failed to load (one line per plugin)."""


@dataclasses.dataclass(frozen=True)
class PluginLoad:
    """How loading one entry point went.

    Attributes:
        group: the entry-point group, e.g. ``"dpaudit.claims"``.
        name: the entry point's name.
        value: what it points to (``module`` or ``module:attribute``).
        status: ``"loaded"`` or ``"error"``.
        detail: for an error, the exception's type and first line.
        result: what the loaded object returned (a callable's return value, else None).
    """

    group: str
    name: str
    value: str
    status: str
    detail: str = ""
    result: Any = None

    def line(self) -> str:
        """One line naming the plugin and what went wrong."""
        if self.status == "loaded":
            return f"plugin {self.name!r} ({self.group} = {self.value}) loaded"
        return f"plugin {self.name!r} ({self.group} = {self.value}) failed to load: {self.detail}"


def _checkout_project() -> dict[str, Any]:
    """The ``[project]`` table of the checkout's ``pyproject.toml`` (empty when there is none,
    it cannot be read, or on Python < 3.11 without tomllib)."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            with _PYPROJECT.open("rb") as f:
                return tomllib.load(f).get("project", {})
        except (OSError, ValueError):
            return {}
    return {}  # Python 3.10: no tomllib, the installed metadata only


def _checkout_entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
    """The entry points of ``group`` that the source checkout's ``pyproject.toml`` declares
    (none when dpaudit does not run from a checkout, or on Python < 3.11 without tomllib)."""
    project = _checkout_project()
    if project.get("name") != "dpaudit":
        return []
    declared = project.get("entry-points", {}).get(group, {})
    return [
        importlib.metadata.EntryPoint(name=str(name), value=str(value), group=group)
        for name, value in declared.items()
    ]


def entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
    """The entry points of ``group``: the installed ones, then those only this source
    checkout's ``pyproject.toml`` declares (see the module docstring).

    Args:
        group: an entry-point group, e.g. ``"dpaudit.claims"``.

    Returns:
        The entry points, one per name, sorted by name (installed metadata is sorted, a
        ``pyproject.toml`` need not be: the order is the same either way).
    """
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in [*importlib.metadata.entry_points(group=group), *_checkout_entry_points(group)]:
        found.setdefault(ep.name, ep)
    return [found[name] for name in sorted(found)]


def _one_line(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


def load_group(
    group: str, call: Callable[[Any], Any] | None = None, names: Iterable[str] | None = None
) -> list[PluginLoad]:
    """Load every entry point of ``group`` (or those named ``names``).

    Args:
        group: an entry-point group, e.g. ``"dpaudit.report_targets"``.
        call: what to do with each loaded object (default: call it if it is a callable that
            is not a module, e.g. a ``register()`` function; a module's import is enough).
        names: load only the entry points of these names (None: all).

    Returns:
        One :class:`PluginLoad` per entry point.  An entry point that raises when loaded or
        called is an ``"error"`` with a one-line detail; it never stops the others.
    """
    out: list[PluginLoad] = []
    wanted = None if names is None else set(names)
    for ep in entry_points(group):
        if wanted is not None and ep.name not in wanted:
            continue
        try:
            obj = ep.load()
            if call is not None:
                result = call(obj)
            elif callable(obj):
                result = obj()
            else:
                result = None
        except Exception as err:  # reported as an error row naming the plugin
            out.append(PluginLoad(group, ep.name, ep.value, "error", _one_line(err)))
        else:
            out.append(PluginLoad(group, ep.name, ep.value, "loaded", result=result))
    return out


def raise_on_errors(loads: list[PluginLoad]) -> None:
    """Raise :class:`PluginError` naming every plugin that failed (one line each).

    Raises:
        PluginError: if any of ``loads`` is an error.
    """
    errors = [load.line() for load in loads if load.status == "error"]
    if errors:
        raise PluginError("; ".join(errors))


class TargetError(ValueError):
    """A ``MODULE:OBJECT`` target that cannot be loaded (the message says what is missing)."""


def _cwd_first() -> str:
    """Put the current directory first on ``sys.path`` (unless it is already there)."""
    cwd = os.getcwd()
    if not any(p in ("", ".", cwd) or os.path.abspath(p) == cwd for p in sys.path):
        sys.path.insert(0, cwd)
    return cwd


def load_object(spec: str, what: str = "MODULE:OBJECT") -> Any:
    """Import the object a ``module:attribute`` spec names, the current directory first.

    Args:
        spec: ``"package.module:name"`` (the name may be dotted: ``module:Class.attr``).
        what: how the caller's option is called, for the messages.

    Returns:
        The object.

    Raises:
        TargetError: (a ValueError) in one line: a spec of the wrong shape; no such module on
            the import path (naming the directory searched); a module that fails to import
            (naming what it imports that is missing, or the error it raises); no such
            attribute in the module (naming the module's file).
    """
    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(f"{what} must look like 'package.module:name', got {spec!r}")
    cwd = _cwd_first()
    head = f"{what} must name an importable object, got {spec!r}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and (
            module_name == err.name or module_name.startswith(err.name + ".")
        ):
            raise TargetError(
                f"{head}: cannot import module {module_name!r}: no module named {err.name!r} "
                f"in the current directory ({cwd}) or the installed packages"
            ) from None
        raise TargetError(
            f"{head}: cannot import module {module_name!r}: it imports {err.name!r}, which "
            "is not installed"
        ) from None
    except Exception as err:  # the user's module raised while importing
        raise TargetError(
            f"{head}: cannot import module {module_name!r}: it raised {_one_line(err)}"
        ) from err
    obj: Any = module
    parts = attr.split(".")
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            where = getattr(module, "__file__", None) or "built-in"
            owner = (
                f"module {module_name!r} ({where})"
                if i == 0
                else repr(f"{module_name}:{'.'.join(parts[:i])}")
            )
            raise TargetError(f"{head}: {owner} has no {part!r}") from None
    return obj
