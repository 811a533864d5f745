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
import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.expressions import as_expr
from dpaudit.theorems.conditions import (
    Check,
    Conditions,
    check_domain,
    conditions,
)

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
        return check_domain(self.key, self.domain, params, known)

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
