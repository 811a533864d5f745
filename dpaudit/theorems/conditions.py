"""The domain conditions of theorem cards, and their checks at the parameters of an application.

A card states its domain as comparisons in its own symbol names (``"epsilon > 0"``,
``"0 < delta' < 1"``).  :class:`Conditions` holds them as written and parses them into sympy
relations on first read; :func:`check_domain` decides them where a rule applies the card:

* numbers (every value an exact number, no sympy): each comparison as the card writes it
  (:class:`Condition`) is read by the restricted parser with the names bound to the values and
  decided exactly or by interval arithmetic with the precision raised as needed; one the
  intervals cannot separate counts as *not verified*;
* symbols: a condition is *verified* when sympy's assumptions on the symbols decide it or when
  it follows from a known condition (``d_known <= 0`` and ``d - d_known <= 0``), *refuted* when
  they decide its negation, and *not verified* otherwise.

A condition none of whose symbols the rule binds is not about that application and is left
out; binding some but not all of a condition's symbols is a programming error (ValueError).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object
from dpaudit.expressions import as_expr, names_in, parse_expression
from dpaudit.numeric import EvaluationError, endpoints, exact, float_up, interval
from dpaudit.numeric import decide_relation as _decide

__all__ = ["Check", "Condition", "ConditionSide", "Conditions", "check_domain", "conditions"]


_OPS = ("<=", ">=", "<", ">")
_SPLIT = re.compile(r"(<=|>=|<|>)")


def _plain(expr: Any) -> Any:
    """``expr`` with every symbol replaced by the assumption-free symbol of the same name
    (cards and events may attach different assumptions to one parameter name)."""
    if not isinstance(expr, sympy.Basic):
        return expr
    return expr.xreplace(
        {s: sympy.Symbol(s.name) for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
    )


def _parse_side(text: str) -> sympy.Expr:
    # the restricted parser (never sympify of text); card names may carry primes (delta')
    return parse_expression(text, symbols=True, primes=True, name="a domain condition's side")


def _split(condition: str) -> list[str]:
    """The sides and operators of a comparison (``"0 < delta < 1"``: 0, <, delta, <, 1),
    checked for shape without sympy."""
    parts = [p.strip() for p in _SPLIT.split(condition)]
    if len(parts) < 3 or len(parts) % 2 == 0 or not all(parts[0::2]):
        raise ValueError(
            f"a domain condition must be a comparison such as 'epsilon > 0' or "
            f"'0 < delta < 1', got {condition!r}"
        )
    return parts


@functools.lru_cache(maxsize=512)
def _parse(condition: str) -> tuple[sympy.Basic, ...]:
    # cached: the cards repeat few conditions ("alpha > 1" in every RDP card; 35 distinct
    # strings among 108), and the relations are immutable, so cards may share them
    parts = _split(condition)
    sides = [_parse_side(p) for p in parts[0::2]]
    ops = parts[1::2]
    return tuple(
        sympy.Rel(a, b, op, evaluate=False) for a, op, b in zip(sides, ops, sides[1:], strict=False)
    )


class ConditionSide(str):
    """One side of a domain condition, as the card writes it (``"delta'"``, ``"700*b"``)."""

    __slots__ = ()

    @property
    def is_Symbol(self) -> bool:
        """Whether the side is a bare parameter name."""
        return bool(_NAME.fullmatch(self))

    def to_sympy(self) -> Any:
        return _parse_side(self)


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*'*")


@dataclasses.dataclass(frozen=True)
class Condition:
    """One comparison of a card's domain as the card writes it, ``lhs rel_op rhs``: what a
    check at numbers reports, decided without sympy.  Printed as sympy prints the same
    relation (a test compares them for every card); :meth:`relation` is that relation."""

    lhs: ConditionSide
    rel_op: str
    rhs: ConditionSide

    def __str__(self) -> str:
        return f"{self.lhs} {self.rel_op} {self.rhs}"

    def relation(self) -> Any:
        """The condition as an unevaluated sympy relation (as :func:`conditions` builds it)."""
        return sympy.Rel(self.lhs.to_sympy(), self.rhs.to_sympy(), self.rel_op, evaluate=False)

    def _sympy_(self) -> Any:
        return self.relation()

    @property
    def free_symbols(self) -> Any:
        """The relation's symbols (sympy's: reading them imports sympy)."""
        return self.relation().free_symbols


def _written(condition: str) -> tuple[Condition, ...]:
    """A condition string's comparisons as written (a chain gives one per operator)."""
    parts = _split(condition)
    return tuple(
        Condition(ConditionSide(a), op, ConditionSide(b))
        for a, op, b in zip(parts[0::2], parts[1::2], parts[2::2], strict=False)
    )


def conditions(*items: Any) -> tuple[sympy.Basic, ...]:
    """A card's domain from comparisons: strings (``"0 < delta' < 1"``, chains allowed) or
    unevaluated sympy relations.  Symbols are matched by name.

    Raises:
        ValueError: for an item that is not a comparison (e.g. a relation that sympy already
            evaluated to True because its symbols were declared positive).
    """
    out: list[sympy.Basic] = []
    for item in items:
        if isinstance(item, str):
            out.extend(_parse(item))
        elif isinstance(item, sympy.core.relational.Relational) and item.rel_op in _OPS:
            out.append(_plain(item))
        else:
            raise ValueError(
                f"a domain condition must be a comparison (string or unevaluated "
                f"sympy relation), got {item!r}"
            )
    return tuple(out)


#: Guards the first parse of every card's domain (see :class:`Conditions`).
_DOMAIN_LOCK = threading.Lock()


def _checked(item: Any) -> str | tuple[Any, ...]:
    """A string condition checked for its shape (parsed later); any other item converted."""
    if isinstance(item, str):
        _split(item)
        return item
    return conditions(item)


class Conditions(Sequence[Any]):
    """A card's domain: the relations of :func:`conditions`, parsed on first read.

    Parsing the cards' domains at import made every start-up import sympy (issue 19, part
    4), although a command reads only the domains of the cards it applies.  So a string
    condition is checked for its shape at once (a comparison, chains allowed; ValueError
    otherwise) and parsed on the first read (item, iteration, length, truth value), once:
    under a lock, so that a reader in another thread waits and then sees the same tuple.  An
    item that is not a string is already a sympy object and is converted at once (ValueError
    for one that is not a comparison).  Reads like the tuple of relations; compares and
    hashes as that tuple; pickles its items.

    Args:
        items: strings and unevaluated sympy relations, as for :func:`conditions`.

    Raises:
        ValueError: as :func:`conditions` (a string's side that does not parse: on first
            read).
    """

    __slots__ = ("_items", "_parts", "_value")

    def __init__(self, *items: Any) -> None:
        self._items = items
        self._parts = tuple(_checked(item) for item in items)
        self._value: tuple[Any, ...] | None = None

    @property
    def parsed(self) -> bool:
        """Whether the relations exist (parsed by a first read)."""
        return self._value is not None

    def written(self) -> tuple[Condition, ...] | None:
        """The comparisons as the card writes them, without parsing (None when an item was
        given as a sympy relation)."""
        texts = [part for part in self._parts if isinstance(part, str)]
        if len(texts) != len(self._parts):
            return None
        return tuple(c for text in texts for c in _written(text))

    def relations(self) -> tuple[Any, ...]:
        """The conditions as a tuple of sympy relations (parsed on the first call)."""
        value = self._value
        if value is None:
            with _DOMAIN_LOCK:
                if self._value is None:
                    self._value = tuple(
                        rel
                        for part in self._parts
                        for rel in (_parse(part) if isinstance(part, str) else part)
                    )
                value = self._value
        return value

    def __getitem__(self, index: Any) -> Any:
        return self.relations()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.relations())

    def __len__(self) -> int:
        return len(self.relations())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Conditions):
            other = other.relations()
        return isinstance(other, tuple) and self.relations() == other

    def __hash__(self) -> int:
        return hash(self.relations())

    def __repr__(self) -> str:
        return repr(self.relations())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Conditions, self._items)


@dataclasses.dataclass(frozen=True)
class Check:
    """The outcome of one domain condition at the parameters where a theorem is applied.

    Attributes:
        condition: the card's condition, e.g. ``delta' < 1``.
        instance: the condition with the parameters substituted (a relation, or True/False).
        status: ``"verified"``, ``"refuted"`` or ``"unverified"``.
        how: how it was decided, e.g. ``"checked: delta' = 1/1000000"``.
    """

    condition: sympy.Basic
    instance: Any
    status: str
    how: str

    @property
    def relation(self) -> Any:
        """The condition as a sympy relation (a check at numbers holds it as written)."""
        condition = self.condition
        return condition.relation() if isinstance(condition, Condition) else condition

    @property
    def numeric(self) -> bool:
        """True when the instance has no free symbols left."""
        return not getattr(self.instance, "free_symbols", set())

    def __str__(self) -> str:
        return f"{self.condition} ({self.how})"


def _normal(rel: Any) -> tuple[sympy.Expr, bool] | None:
    """``rel`` as ``d < 0`` (strict) or ``d <= 0``; None for other relations."""
    op = getattr(rel, "rel_op", None)
    if op in ("<", "<="):
        return sympy.expand(rel.lhs - rel.rhs), op == "<"
    if op in (">", ">="):
        return sympy.expand(rel.rhs - rel.lhs), op == ">"
    return None


def _implied(rel: Any, known: tuple[Any, ...]) -> Any:
    """A known relation that implies ``rel`` (d <= d_k and d_k < 0 or <= 0), if any."""
    target = _normal(rel)
    if target is None:
        return None
    d, strict = target
    for k in known:
        given = _normal(k)
        if given is None:
            continue
        dk, strict_k = given
        gap = sympy.expand(d - dk)
        if gap == 0:
            if strict_k or not strict:
                return k
        elif gap.is_nonpositive and (strict_k or not strict or gap.is_negative):
            return k
    return None


def _value_text(mapping: Mapping[Any, Any], symbols: Iterable[Any]) -> str:
    """``"b = 1, delta ~ 0.1"``: the values of ``symbols`` (sympy symbols or names), exact
    when short."""
    parts = []
    for sym in sorted(symbols, key=str):
        v = mapping[sym]
        if v.free_symbols or v.is_Integer or (v.is_Rational and v.q < 10**7):
            parts.append(f"{sym} = {v}")
            continue
        try:
            parts.append(f"{sym} ~ {float_up(v):.6g}")
        except (EvaluationError, ValueError, TypeError):
            parts.append(f"{sym} = {v}")
    return ", ".join(parts)


def _numbers(params: Mapping[str, Any]) -> dict[str, ExactNumber] | None:
    """The parameters as exact numbers, or None when one is a sympy object (symbolic, or
    given as sympy: the sympy path decides those)."""
    out = {}
    for name, value in params.items():
        if is_sympy_object(value):
            return None
        try:
            number = exact(value, str(name))
        except (ValueError, TypeError):
            return None
        if not isinstance(number, ExactNumber):
            return None
        out[str(name)] = number
    return out


def _decided(lhs: ExactNumber, op: str, rhs: ExactNumber) -> bool | None:
    """``lhs op rhs`` decided exactly (rationals) or by interval arithmetic with the
    precision raised as needed; None when no precision separates the sides."""
    try:
        return bool(
            {"<": lhs < rhs, "<=": lhs <= rhs}[op]
            if op in ("<", "<=")
            else {">": lhs > rhs, ">=": lhs >= rhs}[op]
        )
    except TypeError:
        return None


@functools.lru_cache(maxsize=8192)
def _check_numbers(
    key: str, written: tuple[Condition, ...], values: tuple[tuple[str, ExactNumber], ...]
) -> tuple[Check, ...]:
    """:func:`_check` for parameters that are all numbers, without sympy: each side of a
    condition is read by the restricted parser with the card's names bound to the values."""
    mapping = dict(values)
    out = []
    for cond in written:
        names = names_in(cond.lhs, primes=True) | names_in(cond.rhs, primes=True)
        bound = names & mapping.keys()
        if not bound:
            continue
        missing = names - bound
        if missing:
            raise ValueError(
                f"theorem {key!r} is applied without a value for "
                f"{', '.join(sorted(missing))} in its domain condition {cond}"
            )
        at = _value_text(mapping, names)
        env = {name: mapping[name] for name in names}
        lhs, rhs = (
            parse_expression(side, symbols=env, primes=True, name="a domain condition's side")
            for side in (cond.lhs, cond.rhs)
        )
        decided = _decided(lhs, cond.rel_op, rhs)
        if decided is None:
            out.append(Check(cond, None, "unverified", f"not decided by interval arithmetic: {at}"))
        else:
            out.append(Check(cond, decided, "verified" if decided else "refuted", f"checked: {at}"))
    return tuple(out)


@functools.lru_cache(maxsize=8192)
def _check(
    key: str,
    domain: tuple[sympy.Basic, ...],
    values: tuple[tuple[str, sympy.Expr], ...],
    known: tuple[sympy.Basic, ...],
) -> tuple[Check, ...]:
    mapping = {sympy.Symbol(name): v for name, v in values}
    out = []
    for cond in domain:
        bound = cond.free_symbols & set(mapping)
        if not bound:
            continue
        missing = cond.free_symbols - bound
        if missing:
            raise ValueError(
                f"theorem {key!r} is applied without a value for "
                f"{', '.join(sorted(str(m) for m in missing))} in its domain "
                f"condition {cond}"
            )
        renamed = [s for s in cond.free_symbols if str(mapping[s]) != str(s)]
        at = _value_text(mapping, renamed if _symbolic_values(mapping, cond) else cond.free_symbols)
        inst = cond.xreplace(mapping)
        symbolic = _symbolic_values(mapping, cond)
        if inst is sympy.true or inst is sympy.false:
            verdict = "holds" if inst is sympy.true else "fails"
            how = (
                f"{verdict} by the symbols' assumptions" + (f": {at}" if at else "")
                if symbolic
                else f"checked: {at}"
            )
            out.append(Check(cond, inst, "verified" if inst is sympy.true else "refuted", how))
        elif not symbolic:
            out.append(_numeric(cond, inst, at))
        else:
            out.append(_symbolic(cond, inst, known))
    return tuple(out)


def _symbolic_values(mapping: Mapping[sympy.Symbol, sympy.Expr], cond: sympy.Basic) -> bool:
    """Whether some value of ``cond``'s symbols is symbolic (then only renamed ones are
    worth printing)."""
    return any(mapping[s].free_symbols for s in cond.free_symbols)


def _numeric(cond: sympy.Basic, inst: Any, at: str) -> Check:
    try:
        lo, hi = endpoints(interval(inst.lhs - inst.rhs))
        decided = _decide(inst.rel_op, lo, hi)
    except (EvaluationError, ValueError, TypeError, AttributeError):
        decided = None
    if decided is None:
        return Check(cond, inst, "unverified", f"not decided by interval arithmetic: {at}")
    return Check(cond, inst, "verified" if decided else "refuted", f"checked: {at}")


def _symbolic(cond: sympy.Basic, inst: Any, known: tuple[sympy.Basic, ...]) -> Check:
    normal = _normal(inst)
    if normal is not None:
        d, strict = normal
        if d.is_negative if strict else d.is_nonpositive:
            return Check(cond, inst, "verified", f"{inst} holds by the symbols' assumptions")
        if d.is_nonnegative if strict else d.is_positive:
            return Check(cond, inst, "refuted", f"{inst} fails by the symbols' assumptions")
    plain_known = tuple(_plain(k) for k in known)
    given = _implied(_plain(inst), plain_known)
    if given is None and (unlogged := _without_log(inst)) is not None:
        given = _implied(_plain(unlogged), plain_known)
    here = "" if str(inst) == str(cond) else f"{inst}: "
    if given is not None:
        return Check(cond, inst, "verified", f"{here}follows from the assumption {given}")
    return Check(cond, inst, "unverified", f"{here}not verified")


def _without_log(rel: Any) -> Any:
    """``c log(u) < 0`` (or <=, any sign of the number c) as the equivalent relation on u - 1,
    for u positive by its symbols' assumptions (log is increasing): a condition such as
    ``ln(1/delta) > 0`` then follows from a known ``delta < 1``.  None for other relations."""
    normal = _normal(rel)
    if normal is None:
        return None
    d, strict = normal
    d = sympy.expand_log(d, force=False)
    coeff, rest = d.as_coeff_Mul()
    if not (isinstance(rest, sympy.log) and coeff.is_nonzero and rest.args[0].is_positive):
        return None
    u = rest.args[0]
    diff = (u - 1) if coeff.is_positive else (1 - u)
    return sympy.Lt(diff, 0) if strict else sympy.Le(diff, 0)


def check_domain(
    key: str, domain: Any, params: Mapping[str, Any], known: Iterable[Any] = ()
) -> tuple[Check, ...]:
    """The checks of card ``key``'s ``domain`` at ``params`` (see :meth:`Theorem.check
    <dpaudit.theorems.base.Theorem.check>`): without sympy when every value is a plain number
    and the domain is written as strings."""
    if domain is None:
        return ()
    numbers = _numbers(params)
    written = domain.written() if isinstance(domain, Conditions) else None
    if numbers is not None and written is not None:
        return _check_numbers(key, written, tuple(sorted(numbers.items())))
    values = tuple(sorted((str(k), as_expr(v)) for k, v in params.items()))
    return _check(key, tuple(domain), values, tuple(known))
