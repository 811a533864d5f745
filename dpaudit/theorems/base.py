"""Theorem objects and the registry of named results (layer 3).

A :class:`Theorem` is the citation card of one result: its name, where it is proved, the
assumptions under which it holds, the privacy contract it gives as an inequality, and a
symbolic form of its bound (sympy) with the domain of parameters on which it holds.  The
formula itself lives in exactly one function of the theorem's family module
(``theorems/composition.py``, ``theorems/zcdp.py``, ...); the accountant calls that function
and cites the card.

Every card states its **domain**: the parameter conditions its source assumes, as relations
in the card's own symbol names (``"epsilon > 0"``, ``"0 < delta' < 1"``), or ``()`` when the
result has no parameter conditions (post-processing).  :meth:`Theorem.check` decides the
domain at the parameters where a rule applies the card:

* numbers: each condition is decided rigorously with interval arithmetic
  (:func:`~dpaudit.numeric.decide_relation`); a condition the intervals cannot separate counts
  as *not verified*;
* symbols: a condition is *verified* when sympy's assumptions on the symbols decide it or when
  it follows from a known condition (``d_known <= 0`` and ``d - d_known <= 0``), *refuted* when
  they decide its negation, and *not verified* otherwise.

A condition none of whose symbols the rule binds is not about that application (the declared
card's ``delta`` for a pure-DP declaration) and is left out; binding some but not all of a
condition's symbols is a programming error (ValueError).  The accountant's policy for the
outcome lives in :mod:`dpaudit.accountant.core`: refuted means not applicable; not verified on
numbers means not applicable; not verified on symbols means the bound is conditional and the
condition joins the guarantee's assumptions, which the verifier must prove over the claim's
domain.

Importing a theorem module makes no sympy object (issue 19, part 4): the modules use the
deferred sympy of :mod:`dpaudit.deferred_imports`, a card's domain is parsed on first read
(:class:`Conditions`), its bound is built on first read (:class:`Bound`, whose
:meth:`Bound.over_positive` makes the card's symbols then), and a module constant that needs
sympy is built on first read (:func:`lazy_constants`).  ``tests/tooling/deferred_reads.py``
lists any module-level read.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_numbers import ExactNumber, is_sympy_object
from dpaudit.expressions import as_expr, names_in, parse_expression
from dpaudit.numeric import EvaluationError, endpoints, exact, float_up, interval
from dpaudit.numeric import decide_relation as _decide

__all__ = [
    "THEOREMS",
    "Bound",
    "Check",
    "Conditions",
    "Theorem",
    "TheoremRegistry",
    "conditions",
    "get",
    "lazy_constants",
    "register",
]

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
        if not all(isinstance(part, str) for part in self._parts):
            return None
        return tuple(c for part in self._parts for c in _written(part))

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


#: Guards the first build of every card's bound.  Re-entrant: one card's bound may read
#: another's (``rdp_pure`` reads ``rdp_randomized_response``).
_BOUND_LOCK = threading.RLock()

_BoundSource = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


class Bound(Mapping[str, Any]):
    """A card's symbolic bound: a read-only mapping from a quantity's name (``"epsilon"``,
    ``"tau"``) to its sympy expression, built on first read.

    Building the cards' expressions at import cost about half a second of every start-up
    (sympy simplifies ``Min``, ``Sum`` and ``log`` while constructing them), although the
    accountant computes with the family functions and only teaching views and the verifier read
    the cards' formulas (issue 19, part 4).  So a card holds a zero-argument callable and the
    first read (item, iteration, length, truth value) calls it, once: the build runs under
    one re-entrant lock, and a reader in another thread waits for it and then sees the same
    dict.  Pickling and copying build it and keep the built expressions.

    Args:
        source: the expressions by name (a mapping, kept as a dict), a zero-argument callable
            returning them, another :class:`Bound`, or None for no bound.

    Raises:
        TypeError: for any other ``source``; on first read, when the callable returns
            something that is not a mapping.
    """

    __slots__ = ("_factory", "_value")

    def __init__(self, source: _BoundSource | Bound = None) -> None:
        self._factory: Callable[[], Mapping[str, Any]] | None = None
        self._value: dict[str, Any] | None = None
        if source is None:
            self._value = {}
        elif isinstance(source, Bound):
            self._value, self._factory = source._value, source._factory
        elif isinstance(source, Mapping):
            self._value = dict(source)
        elif callable(source):
            self._factory = source
        else:
            raise TypeError(
                "bound must be a mapping of sympy expressions or a zero-argument callable "
                f"returning one, got {type(source).__name__}"
            )

    @property
    def built(self) -> bool:
        """Whether the expressions exist (given as a mapping, or built by a first read)."""
        return self._value is not None

    def _expressions(self) -> dict[str, Any]:
        value = self._value
        if value is None:
            with _BOUND_LOCK:
                if self._value is None:
                    factory = self._factory
                    if factory is None:  # unreachable: a Bound has one or the other
                        raise TypeError("a Bound has neither expressions nor a factory")
                    built = factory()
                    if not isinstance(built, Mapping):
                        raise TypeError(
                            f"a bound's factory must return a mapping of sympy expressions, "
                            f"got {type(built).__name__}"
                        )
                    self._value = dict(built)
                    self._factory = None
                value = self._value
        return value

    def __getitem__(self, name: str) -> Any:
        return self._expressions()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._expressions())

    def __len__(self) -> int:
        return len(self._expressions())

    def __repr__(self) -> str:
        return repr(self._expressions())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Bound, (self._expressions(),))

    @classmethod
    def over_positive(cls, names: str, formula: Callable[..., Mapping[str, Any]]) -> Bound:
        """A bound whose first read makes the positive symbols ``names`` (as
        ``sympy.symbols(names, positive=True)``, e.g. ``"b Delta"``) and returns
        ``formula(*symbols)``: a card states its formula in its own symbols, and no symbol
        is made at import.

        Example: ``Bound.over_positive("b Delta", lambda b, Delta: {"epsilon": Delta / b})``.
        """
        return cls(lambda: formula(*sympy.symbols(names, positive=True, seq=True)))


def lazy_constants(namespace: dict[str, Any], **builders: Callable[[], Any]) -> Any:
    """A module ``__getattr__`` (PEP 562) for constants that need sympy: the first read of
    a name of ``builders`` calls its builder, once (under a lock), and stores the value in the
    module's ``namespace`` (``globals()``), where later reads find it directly.

    Example: ``__getattr__ = lazy_constants(globals(), HALF=lambda: sympy.Rational(1, 2))``.
    """
    lock = threading.Lock()

    def read(name: str) -> Any:
        builder = builders.get(name)
        if builder is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        with lock:
            if name not in namespace:
                namespace[name] = builder()
        return namespace[name]

    return read


@dataclasses.dataclass(frozen=True)
class Theorem:
    """A named privacy result.

    Attributes:
        key: a short unique identifier, e.g. ``"basic_composition"``.
        name: a human name, e.g. ``"basic composition"``.
        citation: paper and theorem number, e.g. ``"Dwork and Roth 2014, Theorem 3.16"``.
        assumptions: the neighbouring relation, adaptivity and parameter ranges it needs.
        statement: the privacy contract it concludes, as an inequality in words/symbols.
        bound: the symbolic bound, e.g. ``{"epsilon": Delta/b}`` in the theorem's symbols, as
            a :class:`Bound` (read like a dict; a card gives ``Bound(lambda: {...})`` so that
            the expressions are built on first read, not at import).  A plain dict is accepted
            and wrapped.
        domain: conditions (sympy relations, see :func:`conditions`) on the card's symbols,
            by name, under which it holds; ``()`` for none; None means not stated.  Given
            as a tuple of strings and relations; held as :class:`Conditions`, which parses
            the strings on first read, not at import.
        latex: the bound as LaTeX, for teaching views.
    """

    key: str
    name: str
    citation: str
    assumptions: str
    statement: str
    bound: Bound = dataclasses.field(default_factory=Bound, compare=False)
    domain: Sequence[Any] | None = dataclasses.field(default=None, compare=False)
    latex: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.bound, Bound):
            object.__setattr__(self, "bound", Bound(self.bound))
        if self.domain is not None and not isinstance(self.domain, Conditions):
            object.__setattr__(self, "domain", Conditions(*self.domain))

    def check(
        self, params: Mapping[str, Any], known: Iterable[sympy.Basic] = ()
    ) -> tuple[Check, ...]:
        """Decide each domain condition at ``params`` (values by symbol name).

        Args:
            params: values of the domain's symbols (numbers or sympy expressions).
            known: relations known to hold of the symbols in the values (the event's own
                parameter constraints, a verifier's domain); used for symbolic values only.

        Returns:
            One :class:`Check` per condition about the bound symbols, in the card's order.

        Raises:
            ValueError: when ``params`` binds some but not all symbols of a condition.
        """
        if self.domain is None:
            return ()
        numbers = _numbers(params)
        written = self.domain.written() if isinstance(self.domain, Conditions) else None
        if numbers is not None and written is not None:
            return _check_numbers(self.key, written, tuple(sorted(numbers.items())))
        values = tuple(sorted((str(k), as_expr(v)) for k, v in params.items()))
        return _check(self.key, tuple(self.domain), values, tuple(known))

    def __str__(self) -> str:
        return f"{self.name} ({self.citation})"

    def symbols(self) -> frozenset[sympy.Symbol]:
        """The symbols of the symbolic bound."""
        found: set[sympy.Symbol] = set()
        for expr in self.bound.values():
            found |= as_expr(expr).free_symbols
        return frozenset(found)


class TheoremRegistry(Mapping[str, Theorem]):
    """Every registered theorem by key, complete whatever was imported first.

    The first read (lookup, iteration, length) imports every module of the
    :mod:`dpaudit.theorems` package, each of which registers its cards at import; so the
    registry's content never depends on which modules happened to be imported before.
    :func:`register` adds a card without triggering that load.  Thread-safe: a reader in
    another thread waits for the load to finish; a module that reads the registry while it is
    being loaded (on the loading thread) sees the cards registered so far.
    """

    def __init__(self) -> None:
        self._cards: dict[str, Theorem] = {}
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:  # re-entrant: the loading thread passes, others wait
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                for info in sorted(
                    pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name
                ):
                    importlib.import_module(f"{__package__}.{info.name}")
            finally:
                self._loading = False
            self._loaded = True

    def add(self, theorem: Theorem) -> Theorem:
        """Add ``theorem`` (see :func:`register`) without loading the package."""
        existing = self._cards.get(theorem.key)
        if existing is not None and existing != theorem:
            raise ValueError(f"a different theorem is already registered as {theorem.key!r}")
        self._cards[theorem.key] = theorem
        return theorem

    def __getitem__(self, key: str) -> Theorem:
        self._load()
        return self._cards[key]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(dict(self._cards))

    def __len__(self) -> int:
        self._load()
        return len(self._cards)

    def __repr__(self) -> str:
        return f"TheoremRegistry({len(self)} cards)"


#: Every registered theorem by key (every module of :mod:`dpaudit.theorems` loaded on first
#: read).
THEOREMS = TheoremRegistry()


def register(theorem: Theorem) -> Theorem:
    """Add a theorem to :data:`THEOREMS` (its key must be new) and return it.

    Raises:
        ValueError: if a different theorem is already registered under the same key.
    """
    return THEOREMS.add(theorem)


def get(key: str) -> Theorem:
    """The registered theorem ``key``.

    Raises:
        KeyError: naming the unknown key and the known ones.
    """
    try:
        return THEOREMS[key]
    except KeyError:
        raise KeyError(f"no theorem {key!r}; known: {', '.join(sorted(THEOREMS))}") from None


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


def _value_text(mapping: Mapping[sympy.Symbol, sympy.Expr], symbols: Iterable[Any]) -> str:
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
        at = _number_text(mapping, names)
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


def _number_text(mapping: Mapping[str, ExactNumber], names: Iterable[str]) -> str:
    """``"b = 1, delta ~ 0.1"``: the values of ``names``, exact when short."""
    parts = []
    for name in sorted(names):
        v = mapping[name]
        if v.is_Integer or (v.is_Rational and v.q < 10**7):
            parts.append(f"{name} = {v}")
            continue
        try:
            parts.append(f"{name} ~ {float_up(v):.6g}")
        except (EvaluationError, ValueError, TypeError):
            parts.append(f"{name} = {v}")
    return ", ".join(parts)


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
