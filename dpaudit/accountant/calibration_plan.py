"""Calibrating one parameter of a plan file (:mod:`dpaudit.plans`): the field named by its path
(``event.event.event.sigma``, as plan errors name fields) or by its name when one field of the
plan has it (``sigma``) becomes a symbol, and :func:`~dpaudit.accountant.calibrate` searches
its best value; :func:`calibrated_plan` is the plan with that value written in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpaudit.accountant.calibration import Calibration, calibrate
from dpaudit.accountant.parameter_roles import CalibrationError
from dpaudit.deferred_imports import sympy
from dpaudit.events import Event
from dpaudit.plans import Plan, load_plan

__all__ = ["calibrate_plan", "calibrated_plan", "plan_fields", "with_symbol"]


def plan_fields(event: Event, path: str = "event") -> Iterator[tuple[str, Event, str]]:
    """Every numeric (ranged) field of the tree: ``(path, node, field name)``, with paths as
    plan errors write them (``event.events[2].scale``)."""
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        where = f"{path}.{field.name}"
        if isinstance(value, Event):
            yield from plan_fields(value, where)
        elif isinstance(value, tuple) and value and isinstance(value[0], Event):
            for i, v in enumerate(value):
                yield from plan_fields(v, f"{where}[{i}]")
        elif field.metadata.get("range") is not None:
            yield where, event, field.name


def _resolve(event: Event, field: str) -> str:
    """The full path of ``field``: itself when it is a path of the tree, else the one path
    whose last part it is."""
    paths = [p for p, _, _ in plan_fields(event)]
    if field in paths:
        return field
    matching = [p for p in paths if p.rsplit(".", 1)[-1] == field]
    if len(matching) == 1:
        return matching[0]
    if not matching:
        raise CalibrationError(
            f"the plan has no numeric field {field!r}; its fields: " + ", ".join(paths[:20])
        )
    raise CalibrationError(
        f"the plan has {len(matching)} fields named {field!r}: "
        + ", ".join(matching)
        + "; give one of these paths"
    )


def with_symbol(event: Event, path: str, symbol: Any, where: str = "event") -> Event:
    """``event`` with the field at ``path`` replaced by ``symbol`` (rebuilt and validated)."""
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        here = f"{where}.{field.name}"
        if here == path:
            changes[field.name] = symbol
        elif isinstance(value, Event) and path.startswith(here + "."):
            changes[field.name] = with_symbol(value, path, symbol, here)
        elif (
            isinstance(value, tuple)
            and value
            and isinstance(value[0], Event)
            and path.startswith(here + "[")
        ):
            changes[field.name] = tuple(
                with_symbol(v, path, symbol, f"{here}[{i}]") for i, v in enumerate(value)
            )
    return dataclasses.replace(event, **changes) if changes else event


def _name(path: str) -> str:
    """The parameter's name: the field's name (``sigma``)."""
    return path.rsplit(".", 1)[-1]


def calibrate_plan(
    plan: Plan | str | Path,
    field: str,
    *,
    epsilon: Any,
    delta: Any = None,
    low: Any = None,
    high: Any = None,
    delta_target: Any = None,
) -> Calibration:
    """The best value of one field of a plan (see :func:`~dpaudit.accountant.calibrate`).

    Args:
        plan: a :class:`~dpaudit.plans.Plan` or the path of a plan file.
        field: the field's path (``event.event.event.sigma``) or its name when the plan has
            one field of that name.
        epsilon, delta, low, high, delta_target: as for :func:`~dpaudit.accountant.calibrate`;
            ``delta`` defaults to the plan's delta when no ``delta_target`` is given.

    Returns:
        A :class:`~dpaudit.accountant.Calibration` whose ``parameter`` is the field's name.

    Raises:
        CalibrationError: for a field the plan does not have (or has several of), and every
            error of :func:`~dpaudit.accountant.calibrate`.
        PlanError: for a plan file that cannot be read.
    """
    if not isinstance(plan, Plan):
        plan = load_plan(plan)
    path = _resolve(plan.event, field)
    name = _name(path)
    symbolic = with_symbol(plan.event, path, sympy.Symbol(name, positive=True))
    if delta is None and delta_target is None:
        delta = plan.delta
    return calibrate(
        symbolic,
        epsilon=epsilon,
        delta=delta,
        parameter=name,
        low=low,
        high=high,
        delta_target=delta_target,
    )


def calibrated_plan(plan: Plan, result: Calibration) -> Plan:
    """The plan with the calibrated event (its other fields kept)."""
    return dataclasses.replace(plan, event=result.event)
