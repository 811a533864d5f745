"""Privacy plans in files: a versioned JSON (or YAML) description of an event tree.

A plan lets a repository keep its privacy budget in a file that CI checks with
``dpaudit account --plan plan.json``.  Version 1::

    {
      "dpaudit_plan": 1,
      "name": "nightly training run",
      "delta": "1e-6",
      "event": {"type": "SelfComposed", "count": 100,
                "event": {"type": "Laplace", "scale": 10}}
    }

Each event node is an object with ``"type"`` (an event class, as in event expressions) and
that class's parameters by name: numbers for numeric parameters (JSON numbers, read exactly as
the decimals they spell, or strings such as ``"1e-6"`` and ``"1/3"``), a node for ``event``, a
list of nodes for ``events``, ``true``/``false`` and strings for flags and names.  The schema
is :func:`plan_schema` (committed as ``docs/plan.schema.json``); ``docs/plans.md`` documents it.

A plan file is untrusted input: it is parsed as data (JSON, or YAML's safe loader) and never
evaluated; size, nesting depth, node count and number sizes are limited
(:data:`LIMITS`); every error is a :class:`PlanError` naming the field path (``event.events[2]
.scale``), the admissible range and the value received.
"""

from __future__ import annotations

import dataclasses
import decimal
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.events import EVENT_TYPES, Event
from dpaudit.events import cover as _cover  # noqa: F401  (registers EMCover)
from dpaudit.events import stability as _stability  # noqa: F401  (registers its events)
from dpaudit.events.base import Relation
from dpaudit.expressions import as_expr
from dpaudit.suggestions import closest_hint

__all__ = [
    "LIMITS",
    "PLAN_VERSION",
    "Plan",
    "PlanError",
    "event_to_node",
    "load_plan",
    "plan_from_data",
    "plan_schema",
    "plan_to_data",
]

#: The plan format version this dpaudit reads and writes.
PLAN_VERSION = 1

#: Limits on untrusted plan files.
LIMITS: dict[str, int] = {
    "max_bytes": 1_000_000,  # file size
    "max_depth": 64,  # nesting of event nodes
    "max_nodes": 10_000,  # event nodes in the whole plan
    "max_number_chars": 100,  # characters of one number
    # |decimal exponent| of one number: within a double's range (about 1e-308 to 1e308), so
    # no number of a plan overflows where the accountant evaluates in floating point
    "max_exponent": 300,
    "max_text_chars": 1_000,  # name and description
}

_TOP_KEYS = {"dpaudit_plan", "name", "description", "delta", "epsilon", "event"}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(/[+-]?\d+)?$")


class PlanError(ValueError):
    """A plan that cannot be read: names the field path, what is admissible and the value."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """A privacy plan read from a file.

    Attributes:
        event: the event tree.
        delta: the target delta (None: the natural guarantee).
        epsilon: an epsilon to report delta at (None: not asked).
        name: the plan's name.
        description: free text.
    """

    event: Event
    delta: sympy.Expr | None = None
    epsilon: sympy.Expr | None = None
    name: str = ""
    description: str = ""


def _fail(path: str, expected: str, value: Any) -> PlanError:
    shown = str(value) if isinstance(value, decimal.Decimal) else repr(value)
    if len(shown) > 80:
        shown = shown[:80] + "..."
    return PlanError(f"plan field {path}: expected {expected}, got {shown}")


def _number(value: Any, path: str) -> sympy.Expr:
    """An exact number from a JSON/YAML value (never evaluated: a pattern, then Rational)."""
    if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal, float, str)):
        raise _fail(path, 'a number (e.g. 10, 0.5, "1e-6", "1/3")', value)
    text = str(value).strip()
    if isinstance(value, float):
        text = repr(value)
    if len(text) > LIMITS["max_number_chars"] or not _NUMBER.match(text):
        raise _fail(path, 'a number (e.g. 10, 0.5, "1e-6", "1/3")', value)
    num, _, den = text.partition("/")
    try:
        parts = [decimal.Decimal(num)] + ([decimal.Decimal(den)] if den else [])
    except decimal.InvalidOperation:
        raise _fail(path, "a number", value) from None
    for p in parts:
        if p != 0 and abs(p.adjusted()) > LIMITS["max_exponent"]:
            raise _fail(
                path,
                f"a number of magnitude 1e-{LIMITS['max_exponent']} to 1e{LIMITS['max_exponent']}",
                value,
            )
    q = sympy.Rational(str(parts[0]))
    if den:
        if parts[1] == 0:
            raise _fail(path, "a fraction with a non-zero denominator", value)
        q = q / sympy.Rational(str(parts[1]))
    return q


def _range_text(spec: tuple[Any, ...]) -> str:
    low, high, low_open, high_open, integer = spec
    what = "an integer" if integer else "a number"
    conds = []
    if low is not None:
        conds.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        conds.append(f"{'<' if high_open else '<='} {high}")
    return what + (" " + " and ".join(conds) if conds else "")


def _in_range(q: sympy.Expr, spec: tuple[Any, ...]) -> bool:
    low, high, low_open, high_open, integer = spec
    if integer and not q.is_Integer:
        return False
    if low is not None:
        lo = sympy.Rational(str(low)) if isinstance(low, str) else as_expr(low, "low")
        if (q <= lo) if low_open else (q < lo):
            return False
    if high is not None:
        hi = sympy.Rational(str(high)) if isinstance(high, str) else as_expr(high, "high")
        if (q >= hi) if high_open else (q > hi):
            return False
    return True


class _Reader:
    def __init__(self) -> None:
        self.nodes = 0

    def node(self, data: Any, path: str, depth: int) -> Event:
        if depth > LIMITS["max_depth"]:
            raise _fail(path, f"event nodes nested at most {LIMITS['max_depth']} deep", "...")
        self.nodes += 1
        if self.nodes > LIMITS["max_nodes"]:
            raise _fail(path, f"at most {LIMITS['max_nodes']} event nodes in a plan", "more")
        if not isinstance(data, Mapping):
            raise _fail(path, 'an event object such as {"type": "Laplace", "scale": 1}', data)
        kind = data.get("type")
        cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
        if cls is None:
            hint = closest_hint(kind, EVENT_TYPES) if isinstance(kind, str) else ""
            expected = hint.strip(" ()") if hint else "one of " + ", ".join(sorted(EVENT_TYPES))
            raise _fail(f"{path}.type", f"an event type ({expected})", kind)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key == "type":
                continue
            where = f"{path}.{key}"
            if not isinstance(key, str) or key not in fields:
                raise _fail(where, f"a parameter of {kind}: " + ", ".join(fields), key)
            kwargs[key] = self.value(fields[key], value, where, depth)
        missing = [
            n
            for n, f in fields.items()
            if n not in kwargs
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise _fail(f"{path}.{missing[0]}", f"a value (required by {kind})", None)
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as err:
            raise PlanError(f"plan field {path} ({kind}): {err}") from None

    def value(self, field: dataclasses.Field[Any], value: Any, path: str, depth: int) -> Any:
        spec = field.metadata.get("range")
        if spec is not None:
            q = _number(value, path)
            if not _in_range(q, spec):
                raise _fail(path, _range_text(spec), value)
            return q
        kind = _kind(field)
        if kind == "event":
            return self.node(value, path, depth + 1)
        if kind == "events":
            if not isinstance(value, list) or not value:
                raise _fail(path, "a non-empty list of event objects", value)
            return [self.node(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
        if field.name == "relation":
            allowed = [r.value for r in Relation]
            if value not in allowed:
                raise _fail(path, "one of " + ", ".join(map(repr, allowed)), value)
            return value
        choices = field.metadata.get("choices")
        if choices and value not in choices:
            raise _fail(path, "one of " + ", ".join(map(repr, choices)), value)
        if field.type in (bool, "bool"):
            if not isinstance(value, bool):
                raise _fail(path, "true or false", value)
            return value
        if kind == "number":
            return _number(value, path)
        if not isinstance(value, str) or len(value) > LIMITS["max_text_chars"]:
            raise _fail(path, "a string", value)
        return value


def _kind(field: dataclasses.Field[Any]) -> str:
    """What a field holds: "range" (a ranged number), "event", "events", "relation", "bool",
    "number" (an unranged number) or "string" -- read from its annotation."""
    annotation = str(field.type)
    if field.metadata.get("range") is not None:
        return "range"
    if annotation in ("Event", "Event | None"):
        return "event"
    if annotation.startswith(("tuple[Event", "Sequence[Event")):
        return "events"
    if field.name == "relation":
        return "relation"
    if annotation == "bool":
        return "bool"
    if annotation == "Any":
        return "number"
    return "string"


def plan_from_data(data: Any) -> Plan:
    """A :class:`Plan` from parsed JSON/YAML data (dicts, lists, numbers, strings).

    Raises:
        PlanError: naming the field path, the admissible values and the value received.
    """
    if not isinstance(data, Mapping):
        raise _fail("(top level)", "an object with dpaudit_plan and event", data)
    version = data.get("dpaudit_plan")
    if isinstance(version, bool) or version != PLAN_VERSION:
        raise _fail("dpaudit_plan", f"the plan format version {PLAN_VERSION}", version)
    for key in data:
        if key not in _TOP_KEYS:
            raise _fail(str(key), "one of the keys " + ", ".join(sorted(_TOP_KEYS)), key)
    if "event" not in data:
        raise _fail("event", "an event object", None)
    text = {}
    for key in ("name", "description"):
        value = data.get(key, "")
        if not isinstance(value, str) or len(value) > LIMITS["max_text_chars"]:
            raise _fail(key, f"a string of at most {LIMITS['max_text_chars']} characters", value)
        text[key] = value
    delta = epsilon = None
    if data.get("delta") is not None:
        delta = _number(data["delta"], "delta")
        if not 0 <= delta < 1:
            raise _fail("delta", "a number in [0, 1)", data["delta"])
    if data.get("epsilon") is not None:
        epsilon = _number(data["epsilon"], "epsilon")
        if not epsilon >= 0:
            raise _fail("epsilon", "a number >= 0", data["epsilon"])
    event = _Reader().node(data["event"], "event", 1)
    return Plan(event, delta, epsilon, text["name"], text["description"])


def load_plan(path: str | Path) -> Plan:
    """Read a plan file: JSON, or YAML (``.yaml``/``.yml``, needs PyYAML) by its extension.

    Raises:
        PlanError: for a file too large, not JSON/YAML, or not a valid plan (with the path).
        OSError: if the file cannot be read.
    """
    p = Path(path)
    size = p.stat().st_size
    if size > LIMITS["max_bytes"]:
        raise PlanError(f"plan file {p}: at most {LIMITS['max_bytes']} bytes, got {size}")
    raw = p.read_bytes()[: LIMITS["max_bytes"] + 1]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PlanError(f"plan file {p}: expected UTF-8 text ({err})") from None
    if p.suffix.lower() in (".yaml", ".yml"):
        data = _yaml(text, p)
    else:
        try:
            data = json.loads(text, parse_float=decimal.Decimal, parse_constant=_no_constant)
        except (ValueError, RecursionError) as err:  # JSONDecodeError, a too-long integer
            raise PlanError(f"plan file {p}: not valid JSON ({err})") from None
    return plan_from_data(data)


def _no_constant(name: str) -> Any:
    raise PlanError(f"plan: expected a finite number, got {name}")


def _yaml(text: str, p: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise PlanError(
            f"plan file {p}: reading YAML needs PyYAML (pip install 'dpaudit[yaml]'), "
            "or write the plan as JSON"
        ) from None

    class _Loader(yaml.SafeLoader):  # the safe loader: data only, floats kept exact
        pass

    def _decimal(loader: Any, node: Any) -> Any:
        return loader.construct_scalar(node)  # a string, read exactly by _number

    _Loader.add_constructor("tag:yaml.org,2002:float", _decimal)
    try:
        return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: data only
    except (yaml.YAMLError, RecursionError) as err:
        raise PlanError(f"plan file {p}: not valid YAML ({' '.join(str(err).split())})") from None


# ---- writing -------------------------------------------------------------------------


def _number_out(value: Any, path: str) -> Any:
    q = as_expr(value, path)
    if q.free_symbols or not q.is_Rational:
        raise PlanError(
            f"plan field {path}: only numeric rational parameters can be written, got {q}"
        )
    return int(q) if q.is_Integer else str(q)


def event_to_node(event: Event, path: str = "event") -> dict[str, Any]:
    """The plan node of an event (the inverse of reading it).

    Raises:
        PlanError: for a symbolic or irrational parameter (a plan holds numbers).
    """
    node: dict[str, Any] = {"type": event.kind}
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        where = f"{path}.{field.name}"
        if isinstance(value, Event):
            node[field.name] = event_to_node(value, where)
        elif isinstance(value, tuple) and value and isinstance(value[0], Event):
            node[field.name] = [event_to_node(v, f"{where}[{i}]") for i, v in enumerate(value)]
        elif field.metadata.get("range") is not None:
            node[field.name] = _number_out(value, where)
        elif isinstance(value, Relation):
            node[field.name] = value.value
        elif isinstance(value, sympy.Basic):
            node[field.name] = _number_out(value, where)
        else:
            node[field.name] = value
    return node


def plan_to_data(plan: Plan) -> dict[str, Any]:
    """A JSON-ready plan (version :data:`PLAN_VERSION`)."""
    data: dict[str, Any] = {"dpaudit_plan": PLAN_VERSION}
    if plan.name:
        data["name"] = plan.name
    if plan.description:
        data["description"] = plan.description
    if plan.delta is not None:
        data["delta"] = _number_out(plan.delta, "delta")
    if plan.epsilon is not None:
        data["epsilon"] = _number_out(plan.epsilon, "epsilon")
    data["event"] = event_to_node(plan.event)
    return data


# ---- the schema ------------------------------------------------------------------------

_NUMBER_SCHEMA = {
    "oneOf": [
        {"type": "number"},
        {"type": "string", "pattern": _NUMBER.pattern, "maxLength": LIMITS["max_number_chars"]},
    ]
}


def _field_schema(field: dataclasses.Field[Any]) -> dict[str, Any]:
    spec = field.metadata.get("range")
    if spec is not None:
        return {**_NUMBER_SCHEMA, "description": _range_text(spec)}
    kind = _kind(field)
    if kind == "number":
        return {**_NUMBER_SCHEMA}
    if kind == "event":
        return {"$ref": "#/$defs/event"}
    if kind == "events":
        return {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/event"}}
    if field.name == "relation":
        return {"enum": [r.value for r in Relation]}
    if field.metadata.get("choices"):
        return {"enum": list(field.metadata["choices"])}
    if field.type in (bool, "bool"):
        return {"type": "boolean"}
    return {"type": "string", "maxLength": LIMITS["max_text_chars"]}


def plan_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of plan version :data:`PLAN_VERSION`.

    The ranges of numeric parameters are stated in each field's ``description`` (a string
    number such as ``"1/3"`` cannot be range-checked by JSON Schema); :func:`plan_from_data`
    checks them.
    """
    variants = []
    for name in sorted(EVENT_TYPES):
        cls = EVENT_TYPES[name]
        fields = dataclasses.fields(cls)
        required = [
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        variants.append(
            {
                "type": "object",
                "title": name,
                "properties": {
                    "type": {"const": name},
                    **{f.name: _field_schema(f) for f in fields},
                },
                "required": ["type", *required],
                "additionalProperties": False,
            }
        )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://dpaudit.invalid/plan.schema.json",
        "title": f"dpaudit privacy plan, version {PLAN_VERSION}",
        "type": "object",
        "properties": {
            "dpaudit_plan": {"const": PLAN_VERSION},
            "name": {"type": "string", "maxLength": LIMITS["max_text_chars"]},
            "description": {"type": "string", "maxLength": LIMITS["max_text_chars"]},
            "delta": {**_NUMBER_SCHEMA, "description": "target delta in [0, 1)"},
            "epsilon": {**_NUMBER_SCHEMA, "description": "report delta at this epsilon >= 0"},
            "event": {"$ref": "#/$defs/event"},
        },
        "required": ["dpaudit_plan", "event"],
        "additionalProperties": False,
        "$defs": {"event": {"oneOf": variants}},
    }
