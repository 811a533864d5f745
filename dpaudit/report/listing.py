"""The names, groups and titles of the report targets, known without importing their code.

Building the targets (:func:`dpaudit.report.load_targets`) imports every mechanism, the
accountant and the auditor: seconds.  ``dpaudit report --list`` and a misspelled target name
need only the names, so a package that registers targets through the entry-point group
``dpaudit.report_targets`` may also declare, under the *same entry-point name* in the group
``dpaudit.report_target_index``, a sequence of ``(name, group, title)`` triples (or a
zero-argument callable returning one) describing them, readable without importing anything
heavy.  A plugin without an index is loaded in full, as before.  The index must list exactly
the targets ``register()`` registers (this repository's test
``tests/report/test_target_index.py`` checks its own).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any

from dpaudit import plugins
from dpaudit.suggestions import closest_hint

__all__ = ["Listed", "matches", "target_index", "unknown_specs"]


@dataclasses.dataclass(frozen=True)
class Listed:
    """One report target as ``dpaudit report --list`` shows it."""

    name: str
    group: str
    title: str


def _from_index(value: Any, where: str) -> list[Listed]:
    items = value() if callable(value) else value
    try:
        return [Listed(*map(str, item)) for item in items]
    except TypeError:
        raise ValueError(
            f"report target index {where} must be (name, group, title) triples, got {items!r}"
        ) from None


def target_index() -> list[Listed]:
    """Every report target of every installed plugin, in registration order, read from the
    plugins' indexes (a plugin without one is loaded in full).

    Returns:
        The targets' names, groups and titles.

    Raises:
        dpaudit.plugins.PluginError: naming a plugin (or an index) that failed to load.
    """
    groups = plugins.GROUPS
    indexed = {ep.name: ep for ep in plugins.entry_points(groups["report_target_index"])}
    out: list[Listed] = []
    for ep in plugins.entry_points(groups["report_targets"]):
        index = indexed.get(ep.name)
        if index is not None:
            loads = plugins.load_group(
                groups["report_target_index"], call=lambda obj: obj, names=(ep.name,)
            )
            plugins.raise_on_errors(loads)
            for load in loads:
                out += _from_index(load.result, f"{ep.name} ({index.value})")
            continue
        loads = plugins.load_group(groups["report_targets"], names=(ep.name,))
        plugins.raise_on_errors(loads)
        out += [  # the Targets register() returned, read by their fields (nothing imported)
            Listed(t.name, t.group, t.title)
            for load in loads
            for t in (load.result or ())
            if all(isinstance(getattr(t, f, None), str) for f in ("name", "group", "title"))
        ]
    return out


def matches(spec: str, target: Listed) -> bool:
    """Whether ``spec`` names ``target``: its name, its group, a glob pattern over names, a
    name prefix ending a group (``catalogue/``) or ``all``, as
    :func:`dpaudit.report.resolve_targets` reads a spec."""
    return (
        spec == "all"
        or target.name == spec
        or target.group == spec
        or fnmatch.fnmatchcase(target.name, spec)
        or target.name.startswith(spec.rstrip("/") + "/")
    )


def unknown_specs(specs: Iterable[str], listed: Sequence[Listed]) -> str | None:
    """The error for the first spec that names no listed target (a ``MODULE:OBJECT`` spec is
    the user's own and passes), or None.

    A spec matches as :func:`matches` says.
    """
    names = [t.name for t in listed]
    groups = sorted({t.group for t in listed})
    for spec in specs:
        if ":" in spec or any(matches(spec, t) for t in listed):
            continue
        return (
            f"no target matches {spec!r}{closest_hint(spec, [*names, *groups])}; groups: "
            f"{', '.join(groups) or 'none'}; {len(names)} targets (list them with "
            "`dpaudit report --list`)"
        )
    return None
