"""The event base class, neighbouring relations and parameter validation.

An *event* describes what an algorithm does, never what it costs: a leaf is one primitive
mechanism, an inner node a way of combining mechanisms.  Events are frozen dataclasses that
validate themselves when constructed, so an invalid event never exists.  Parameters are exact
sympy expressions (see :mod:`dpaudit.numeric`) and may contain symbols, so one event tree
serves a concrete run and a whole theorem.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object
from dpaudit.expressions import as_expr
from dpaudit.numeric import EvaluationError, decide_relation, exact, interval
from dpaudit.numeric import endpoints as _endpoints


class Relation(str, Enum):
    """The neighbouring relation under which an event's guarantee is stated.

    ``ADD_REMOVE``: datasets differ by adding or removing one record (unbounded DP).
    ``REPLACE_ONE``: datasets of equal size differ in one record (bounded DP, substitution).

    A sensitivity is measured under the event's relation; combining events stated under
    different relations is refused rather than guessed.
    """

    ADD_REMOVE = "add_remove"
    REPLACE_ONE = "replace_one"

    def __str__(self) -> str:
        return self.value


def as_relation(value: Any) -> Relation:
    """Parse a relation given as a :class:`Relation` or its string value."""
    if isinstance(value, Relation):
        return value
    try:
        return Relation(str(value))
    except ValueError:
        allowed = ", ".join(repr(r.value) for r in Relation)
        raise ValueError(f"relation must be one of {allowed}, got {value!r}") from None


def _truth(relational: Any) -> bool | None:
    """Decide a sympy relational exactly when possible: True, False or None (undecided).
    A ``bool`` (an exact number's comparison, already decided) is its own truth; None stays
    undecided."""
    if relational is None or isinstance(relational, bool):
        return relational
    rel = as_expr(relational)
    if rel is sympy.true:
        return True
    if rel is sympy.false:
        return False
    if not rel.free_symbols and isinstance(rel, sympy.core.relational.Relational):
        try:
            lo, hi = _endpoints(interval(rel.lhs - rel.rhs))
        except EvaluationError:
            return None
        if rel.rel_op in ("<", "<=", ">", ">=", "=="):
            return decide_relation(rel.rel_op, lo, hi)
    return None


def _relation(value: Any, op: str, bound: Any) -> Any:
    """``value op bound``: a sympy relational for a sympy value; for an exact number the
    decision itself (True, False, or None when interval arithmetic cannot separate them)."""
    if isinstance(value, ExactNumber):
        try:
            return bool(_OPERATORS[op](value, bound))
        except TypeError:
            return None
    return _OPERATORS[op](value, bound)


_OPERATORS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _interval_text(low: Any, high: Any, low_open: bool, high_open: bool, integer: bool) -> str:
    lo = "-inf" if low is None else str(low)
    hi = "inf" if high is None else str(high)
    text = (
        ("(" if low_open or low is None else "[")
        + f"{lo}, {hi}"
        + (")" if high_open or high is None else "]")
    )
    return ("an integer in " if integer else "in ") + text


def parameter(
    owner: str,
    name: str,
    value: Any,
    *,
    low: Any = None,
    high: Any = None,
    low_open: bool = True,
    high_open: bool = True,
    integer: bool = False,
) -> sympy.Expr:
    """Validate one parameter and return it as an exact sympy expression.

    A number outside the admissible range raises; a symbolic value is accepted unless sympy
    can show it is outside the range (the range is then an assumption of any guarantee
    derived from it, see :meth:`Event.constraints`).

    Args:
        owner: the event's name, for the error message.
        name: the parameter's name.
        value: the value given.
        low: the lower end of the admissible range (``None`` for unbounded).
        high: the upper end (``None`` for unbounded).
        low_open: whether ``low`` is excluded.
        high_open: whether ``high`` is excluded.
        integer: whether the parameter must be an integer.

    Returns:
        The exact value.

    Raises:
        ValueError: naming the parameter, the admissible range and the value received.
    """
    range_text = _interval_text(low, high, low_open, high_open, integer)
    try:
        expr = exact(value, name)
    except ValueError as err:
        raise ValueError(f"{owner}: {name} must be {range_text}, got {value!r} ({err})") from None
    checks = []
    if low is not None:
        checks.append(_relation(expr, ">" if low_open else ">=", low))
    if high is not None:
        checks.append(_relation(expr, "<" if high_open else "<=", high))
    for check in checks:
        if _truth(check) is False:
            raise ValueError(f"{owner}: {name} must be {range_text}, got {value!r}")
    if expr.free_symbols:
        if integer and expr.is_integer is False:
            raise ValueError(f"{owner}: {name} must be {range_text}, got {value!r}")
        return expr
    if integer and not expr.is_Integer:
        raise ValueError(f"{owner}: {name} must be {range_text}, got {value!r}")
    for check in checks:
        if _truth(check) is not True:
            raise ValueError(
                f"{owner}: {name} must be {range_text}, got {value!r}{_undecided(expr)}"
            )
    return expr


def _undecided(expr: Any) -> str:
    """Why an exact number could not be placed in a range, for the error message."""
    if not isinstance(expr, ExactNumber) or expr.is_Rational:
        return ""
    try:
        interval(expr)
    except EvaluationError as err:
        return f" (not evaluated by interval arithmetic: {err})"
    return " (interval arithmetic cannot place it in the range)"


def _format_value(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, Event):
        return value.expression()
    if isinstance(value, Relation):
        return repr(value.value)
    if isinstance(value, ExactNumber) or is_sympy_object(value):
        if value.is_Rational and not value.is_Integer:
            q = int(value.q)
            if q & (q - 1) == 0 and q >= 2**20:
                as_float = float(value)
                if Fraction(as_float) == Fraction(int(value.p), q):
                    return repr(as_float)  # the float the user gave, shown as Python shows it
            # show exact decimals as decimals, other rationals as fractions
            q = int(value.q)
            while q % 2 == 0:
                q //= 2
            while q % 5 == 0:
                q //= 5
            if q == 1 and value.q < 10**30:
                return _decimal(value)
            return f"{value.p}/{value.q}"
        return str(value)
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _decimal(value: sympy.Rational) -> str:
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        text = format(Decimal(int(value.p)) / Decimal(int(value.q)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclasses.dataclass(frozen=True)
class Event:
    """Base class of every event.

    Subclasses are frozen dataclasses; they validate and normalise their fields in
    ``__post_init__`` (through :func:`parameter`) and define :attr:`relation`.
    """

    #: Fields shown in :meth:`expression` even when equal to their default.
    _always_shown: ClassVar[tuple[str, ...]] = ()

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    # ``relation`` (a :class:`Relation`) is a field on leaves and a property on combinators.
    if TYPE_CHECKING:  # declared for the type checker only; nothing changes at runtime

        @property
        def relation(self) -> Relation:
            """The neighbouring relation the event's guarantee is stated under."""
            ...

    def children(self) -> tuple[Event, ...]:
        """The sub-events of a combinator (empty for a leaf)."""
        return ()

    @property
    def kind(self) -> str:
        """The event's class name, as written in event expressions."""
        return type(self).__name__

    def constraints(self) -> tuple[sympy.Basic, ...]:
        """Conditions on symbolic parameters that a derived guarantee assumes.

        Numbers were already checked at construction; for every symbolic parameter this
        returns the range condition it must satisfy, e.g. ``scale > 0``.
        """
        found: list[sympy.Basic] = []
        for field in dataclasses.fields(self):
            spec = field.metadata.get("range")
            value = getattr(self, field.name)
            if spec is None or not is_sympy_object(value) or not value.free_symbols:
                continue
            low, high, low_open, high_open, _integer = spec
            if low is not None:
                found.append(value > low if low_open else value >= low)
            if high is not None:
                found.append(value < high if high_open else value <= high)
        for child in self.children():
            found.extend(child.constraints())
        unique: list[sympy.Basic] = []
        for c in found:
            if c not in unique and c is not True and not (is_sympy_object(c) and c is sympy.true):
                unique.append(c)
        return tuple(unique)

    @property
    def free_symbols(self) -> frozenset[sympy.Symbol]:
        """Every symbol in the event's parameters, its children's included."""
        symbols: set[sympy.Symbol] = set()
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if is_sympy_object(value):
                symbols |= value.free_symbols
        for child in self.children():
            symbols |= child.free_symbols
        return frozenset(symbols)

    def expression(self) -> str:
        """The event written in dpaudit's event-expression syntax (what the CLI parses)."""
        parts: list[str] = []
        keywords: list[str] = []
        fields = sorted(dataclasses.fields(self), key=lambda f: f.name == "relation")
        for field in fields:
            value = getattr(self, field.name)
            if field.metadata.get("positional") or field.metadata.get("first_positional"):
                parts.append(_format_value(value))
                continue
            default = field.default
            if default is not dataclasses.MISSING and field.name not in self._always_shown:
                try:
                    same = value == (
                        exact(default)
                        if isinstance(default, (int, float, str))
                        and not isinstance(default, bool)
                        and field.metadata.get("range")
                        else default
                    )
                except ValueError:
                    same = value == default
                if same:
                    continue
            keywords.append(f"{field.name}={_format_value(value)}")
        return f"{self.kind}({', '.join(parts + keywords)})"

    def __str__(self) -> str:
        return self.expression()


def ranged(
    *,
    low: Any = None,
    high: Any = None,
    low_open: bool = True,
    high_open: bool = True,
    integer: bool = False,
    default: Any = dataclasses.MISSING,
    first_positional: bool = False,
) -> Any:
    """A dataclass field whose admissible range is recorded for validation and constraints."""
    metadata = {
        "range": (low, high, low_open, high_open, integer),
        "first_positional": first_positional,
    }
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def validate_ranges(event: Event) -> None:
    """Validate and normalise every ranged field of ``event`` (call from ``__post_init__``)."""
    for field in dataclasses.fields(event):
        spec = field.metadata.get("range")
        if spec is None:
            continue
        low, high, low_open, high_open, integer = spec
        value = parameter(
            event.kind,
            field.name,
            getattr(event, field.name),
            low=low,
            high=high,
            low_open=low_open,
            high_open=high_open,
            integer=integer,
        )
        object.__setattr__(event, field.name, value)
