"""Parameter domains of privacy claims: intervals, integer parameters and side constraints.

A :class:`Domain` says over which parameter values a claim or an inequality is asserted:
each parameter ranges over an interval whose ends may be open, closed or unbounded, may be
restricted to integers, and the whole domain may be cut by side constraints such as
``delta < epsilon``.  Parameters are identified by *name*, so an expression written with
``Symbol("epsilon", positive=True)`` and one with a plain ``Symbol("epsilon")`` refer to the
same parameter (the same convention as :func:`dpaudit.accountant.substitute`).

Domains are immutable.  Ends are exact sympy numbers (see :mod:`dpaudit.numeric`).

Example::

    Domain({"epsilon": "(0, 1)", "delta": "(0, 1)", "k": "[1, oo)"}, integers=["k"])
    Domain.parse("0 < epsilon < 1, 0 < delta < 1, k >= 1 integer, delta < epsilon")
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

import sympy

from dpaudit.expressions import as_expr, check_text, shorten
from dpaudit.numeric import EvaluationError, decide_relation, endpoints, exact, interval

__all__ = ["Domain", "Range", "by_name"]


def _end(value: Any, name: str) -> sympy.Expr | None:
    """An interval end: None for an unbounded end, else an exact finite number."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip() in ("oo", "-oo", "inf", "-inf", "+oo"):
        return None
    if isinstance(value, sympy.Basic) and value in (sympy.oo, -sympy.oo):
        return None
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return None
    if isinstance(value, str):
        try:
            expr = exact(as_expr(value.strip(), name), name)
        except (sympy.SympifyError, TypeError):
            raise ValueError(
                f"{name} must be a number such as 0, 1/2 or log(2), got {shorten(value)!r}"
            ) from None
    else:
        expr = exact(value, name)
    if expr.free_symbols:
        raise ValueError(f"{name} must be a number (no symbols), got {value!r}")
    return expr


@dataclasses.dataclass(frozen=True)
class Range:
    """The interval one parameter ranges over.

    Attributes:
        low: the lower end (exact), or None for -oo.
        high: the upper end (exact), or None for +oo.
        low_open: whether ``low`` is excluded (always True in effect when ``low`` is None).
        high_open: whether ``high`` is excluded.
        integer: whether the parameter takes integer values only.
    """

    low: Any = None
    high: Any = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        low = _end(self.low, "low")
        high = _end(self.high, "high")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        if low is None:
            object.__setattr__(self, "low_open", True)
        if high is None:
            object.__setattr__(self, "high_open", True)
        if low is not None and high is not None:
            lo, hi = endpoints(interval(high - low))
            empty = hi < 0 or (hi <= 0 and lo >= 0 and (self.low_open or self.high_open))
            if empty:
                raise ValueError(f"Range: low must be below high, got {self.text()}")
        first, last = self.first_integer(), self.last_integer()
        if self.integer and first is not None and last is not None and first > last:
            raise ValueError(f"Range: {self.text()} contains no integer")

    # ---- constructors ------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str, *, integer: bool = False) -> Range:
        """Parse interval notation: ``"(0, 1)"``, ``"[1, oo)"``, ``"(-oo, 0]"``, ``"[0, 1/2]"``.

        Raises:
            ValueError: naming the accepted form and the text received.
        """
        check_text(text, "range")
        m = re.fullmatch(r"\s*([\(\[])\s*([^,]+?)\s*,\s*([^,]+?)\s*([\)\]])\s*", text)
        if not m:
            raise ValueError(
                f"range must be interval notation such as '(0, 1)' or '[1, inf)', "
                f"got {shorten(text)!r}"
            )
        return cls(
            m.group(2),
            m.group(3),
            low_open=m.group(1) == "(",
            high_open=m.group(4) == ")",
            integer=integer,
        )

    # ---- queries -----------------------------------------------------------------------

    def first_integer(self) -> int | None:
        """The smallest integer in the range (None when unbounded below)."""
        if self.low is None:
            return None
        f = int(sympy.floor(self.low))
        return f + 1 if (f < self.low or self.low_open) else f

    def last_integer(self) -> int | None:
        """The largest integer in the range (None when unbounded above)."""
        if self.high is None:
            return None
        c = int(sympy.ceiling(self.high))
        return c - 1 if (c > self.high or self.high_open) else c

    def contains(self, value: Any) -> bool | None:
        """Whether a number lies in the range: True, False, or None if undecidable."""
        v = exact(value, "value")
        if self.integer and v.is_Integer is not True:
            return False if v.is_number and (v.is_integer is False or v.is_Rational) else None
        for end, is_low, is_open in (
            (self.low, True, self.low_open),
            (self.high, False, self.high_open),
        ):
            if end is None:
                continue
            diff = v - end if is_low else end - v
            try:
                lo, hi = endpoints(interval(diff))
            except EvaluationError:
                return None
            if hi < 0 or (is_open and hi <= 0):
                return False
            if not (lo > 0 or (not is_open and lo >= 0)):
                return None
        return True

    def conditions(self, symbol: sympy.Symbol) -> list[sympy.Basic]:
        """The range as sympy relations on ``symbol``."""
        out: list[sympy.Basic] = []
        if self.low is not None:
            out.append(symbol > self.low if self.low_open else symbol >= self.low)
        if self.high is not None:
            out.append(symbol < self.high if self.high_open else symbol <= self.high)
        return out

    def text(self) -> str:
        """Interval notation, e.g. ``[1, inf)``, with ``integer`` when it applies (ASCII
        ``inf``, as :meth:`parse` reads it back)."""
        lo = "-inf" if self.low is None else str(self.low)
        hi = "inf" if self.high is None else str(self.high)
        body = ("(" if self.low_open else "[") + f"{lo}, {hi}" + (")" if self.high_open else "]")
        return body + (" integer" if self.integer else "")

    def __str__(self) -> str:
        return self.text()


def by_name(expr: Any) -> dict[str, sympy.Symbol]:
    """The free symbols of a sympy expression (or relation) keyed by name."""
    return {s.name: s for s in as_expr(expr).free_symbols}


_CHAIN = re.compile(r"^(.*?)(<=|>=|<|>)(.*?)(?:(<=|>=|<|>)(.*))?$")


def _as_range(value: Any, name: str, integer: bool) -> Range:
    if isinstance(value, Range):
        if integer and not value.integer:
            return dataclasses.replace(value, integer=True)
        return value
    if isinstance(value, str):
        return Range.parse(value, integer=integer)
    raise ValueError(
        f"the range of {name} must be a Range or interval notation such as "
        f"'(0, 1)', got {shorten(value)!r}"
    )


@dataclasses.dataclass(frozen=True, init=False)
class Domain:
    """A set of parameter values: a box of :class:`Range` s cut by side constraints.

    Args:
        ranges: the range of each parameter by name (a :class:`Range` or interval notation
            such as ``"(0, 1)"`` or ``"[1, oo)"``).  Sympy symbols are accepted as keys and
            stand for their names.
        integers: names of parameters restricted to integers (in addition to any range
            marked ``integer``).
        constraints: further sympy relations (or strings sympy parses) every point must
            satisfy, e.g. ``delta < epsilon``.  Their symbols must all have ranges.

    Raises:
        ValueError: for a malformed range, an integer name without a range, or a constraint
            that is not a relation or mentions a parameter without a range.
    """

    ranges: tuple[tuple[str, Range], ...]
    constraints: tuple[sympy.Basic, ...]

    def __init__(
        self,
        ranges: Mapping[Any, Any] | None = None,
        *,
        integers: Iterable[Any] = (),
        constraints: Iterable[Any] = (),
    ) -> None:
        ranges = dict(ranges or {})
        names = {str(k): v for k, v in ranges.items()}
        ints = {str(n) for n in integers}
        for n in ints:
            if n not in names:
                raise ValueError(
                    f"integers: {n!r} has no range; give it one in ranges "
                    f"(known: {', '.join(sorted(names)) or 'none'})"
                )
        items = tuple(sorted((n, _as_range(v, n, n in ints)) for n, v in names.items()))
        cons: list[sympy.Basic] = []
        for c in constraints:
            rel = as_expr(c, "constraints")
            if rel is sympy.true:
                continue
            if not isinstance(rel, (sympy.core.relational.Relational, sympy.And)):
                raise ValueError(
                    f"constraints must be relations such as 'delta < epsilon', got {shorten(c)!r}"
                )
            rel = rel.xreplace({f: sympy.Rational(f) for f in rel.atoms(sympy.Float)})
            unknown = set(by_name(rel)) - set(names)
            if unknown:
                raise ValueError(
                    f"constraint {rel} mentions {', '.join(sorted(unknown))}, "
                    f"which has no range (known: {', '.join(sorted(names))})"
                )
            cons.append(rel)
        object.__setattr__(self, "ranges", items)
        object.__setattr__(self, "constraints", tuple(cons))

    # ---- constructors ------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Domain:
        """Parse a comma- or semicolon-separated description.

        Each part is a chain on one parameter (``0 < epsilon < 1``, ``k >= 1``,
        ``1 <= k <= 50 integer``), a declaration ``k integer``, or any other relation, which
        becomes a side constraint (``delta < epsilon``).

        Raises:
            ValueError: naming the part that could not be read.
        """
        check_text(text, "domain")
        ranges: dict[str, dict[str, Any]] = {}
        integers: list[str] = []
        constraints: list[Any] = []
        for raw in re.split(r"[;,]", text):
            part = raw.strip()
            if not part:
                continue
            is_int = False
            if part.endswith(" integer"):
                is_int, part = True, part[: -len(" integer")].strip()
            if re.fullmatch(r"[A-Za-z_]\w*", part):
                if not is_int:
                    raise ValueError(
                        f"domain part {shorten(raw.strip())!r} is a bare name; "
                        f"write e.g. '{part} >= 1' or '{part} integer'"
                    )
                integers.append(part)
                continue
            bound = _parse_chain(part)
            if bound is None:
                try:
                    constraints.append(as_expr(part, "domain part"))
                except (sympy.SympifyError, TypeError, SyntaxError):
                    raise ValueError(
                        f"cannot read the domain part {shorten(raw.strip())!r}"
                    ) from None
                continue
            name, spec = bound
            ranges.setdefault(name, {}).update(spec)
            if is_int:
                integers.append(name)
        built = {
            n: Range(
                s.get("low"),
                s.get("high"),
                low_open=s.get("low_open", True),
                high_open=s.get("high_open", True),
            )
            for n, s in ranges.items()
        }
        for n in integers:
            built.setdefault(n, Range())
        return cls(built, integers=integers, constraints=constraints)

    # ---- queries -----------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names, sorted."""
        return tuple(n for n, _ in self.ranges)

    def range(self, name: str) -> Range:
        """The range of one parameter.

        Raises:
            KeyError: naming the unknown parameter and the known ones.
        """
        for n, r in self.ranges:
            if n == name:
                return r
        raise KeyError(f"no parameter {name!r} in the domain; known: {', '.join(self.names)}")

    def symbol(self, name: str) -> sympy.Symbol:
        """A plain sympy symbol for parameter ``name`` (matching is by name)."""
        self.range(name)
        return sympy.Symbol(name)

    def conditions(self) -> list[sympy.Basic]:
        """Every condition of the domain as sympy relations on plain symbols."""
        out: list[sympy.Basic] = []
        for n, r in self.ranges:
            out.extend(r.conditions(sympy.Symbol(n)))
        out.extend(_plain(c) for c in self.constraints)
        return out

    def contains(self, point: Mapping[Any, Any]) -> bool | None:
        """Whether a point (values by name) lies in the domain; None when undecidable.

        Raises:
            ValueError: if a parameter of the domain has no value in ``point``.
        """
        values = {str(k): exact(v, str(k)) for k, v in point.items()}
        missing = [n for n in self.names if n not in values]
        if missing:
            raise ValueError(
                f"point must give a value for every parameter; missing {', '.join(missing)}"
            )
        state: bool | None = True
        for n, r in self.ranges:
            inside = r.contains(values[n])
            if inside is False:
                return False
            if inside is None:
                state = None
        for c in self.constraints:
            inside = decide(c, values)
            if inside is False:
                return False
            if inside is None:
                state = None
        return state

    def text(self) -> str:
        """A one-line description, e.g. ``epsilon in (0, 1), k in [1, inf) integer``."""
        parts = [f"{n} in {r}" for n, r in self.ranges]
        parts += [str(c) for c in self.constraints]
        return ", ".join(parts) if parts else "(no parameters)"

    def __str__(self) -> str:
        return self.text()


def _plain(expr: Any) -> Any:
    """``expr`` with every symbol replaced by the plain symbol of the same name."""
    expr = as_expr(expr)
    return expr.xreplace({s: sympy.Symbol(s.name) for s in expr.free_symbols})


def decide(relation: Any, values: Mapping[str, Any]) -> bool | None:
    """Decide a relation (or And/Or of relations) at a point given by name, rigorously.

    Returns:
        True, False, or None when interval arithmetic cannot separate the two sides.
    """
    rel = as_expr(relation)
    if rel is sympy.true:
        return True
    if rel is sympy.false:
        return False
    if isinstance(rel, (sympy.And, sympy.Or)):
        states = [decide(a, values) for a in rel.args]
        if isinstance(rel, sympy.And):
            if any(s is False for s in states):
                return False
            return True if all(s is True for s in states) else None
        if any(s is True for s in states):
            return True
        return False if all(s is False for s in states) else None
    if not isinstance(rel, sympy.core.relational.Relational):
        raise ValueError(f"relation must be an inequality, got {relation!r}")
    subs = {s: values[s.name] for s in rel.free_symbols}
    try:
        lo, hi = endpoints(interval(rel.lhs - rel.rhs, subs))
    except EvaluationError:
        return None
    op = rel.rel_op
    if op in ("<", "<=", ">", ">=", "=="):
        return decide_relation(op, lo, hi)
    if op == "!=":
        if lo > 0 or hi < 0:
            return True
        return False if lo == hi == 0 else None
    return None


def _parse_chain(part: str) -> tuple[str, dict[str, Any]] | None:
    """Read ``a < x < b``, ``x >= a``, ``a <= x`` on one bare name; None for anything else."""
    tokens = re.split(r"(<=|>=|<|>)", part)
    tokens = [t.strip() for t in tokens]
    if len(tokens) not in (3, 5):
        return None
    values, ops = tokens[0::2], tokens[1::2]
    names = [
        i
        for i, v in enumerate(values)
        if re.fullmatch(r"[A-Za-z_]\w*", v) and v not in ("oo", "pi", "E")
    ]
    if len(names) != 1:
        return None
    idx = names[0]
    name = values[idx]
    spec: dict[str, Any] = {}
    try:
        for j, op in enumerate(ops):
            left, right = values[j], values[j + 1]
            if idx == j:  # name op number
                number, name_on_left = right, True
            elif idx == j + 1:  # number op name
                number, name_on_left = left, False
            else:
                return None
            value = _end(number, name)
            upper = (op in ("<", "<=")) == name_on_left
            strict = op in ("<", ">")
            if upper:
                spec["high"], spec["high_open"] = value, strict
            else:
                spec["low"], spec["low_open"] = value, strict
    except ValueError:
        return None
    if len(ops) == 2 and idx != 1:
        return None
    return name, spec
