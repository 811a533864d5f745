"""Exact numbers without sympy: rationals and closed forms of them, as small immutable trees.

Parameters that are plain numbers (``Laplace(1)``, ``Gaussian(1.1)``, ``1e-6``) need exact
arithmetic and rigorous enclosures, not a computer algebra system: importing sympy costs about
0.3 s, more than the whole ``dpaudit account "Laplace(1)"`` needs otherwise (issue 19,
part 4).  An :class:`ExactNumber` is a rational (a :class:`fractions.Fraction`), one of the
constants ``E`` and ``pi``, or a node applying ``+``, ``*``, a rational power, or one of the
functions of the restricted parser (``exp``, ``log``, ``erfc``, ``Min``, ...) to exact numbers.
Rational arithmetic is folded exactly as it is built; nothing else is simplified.

It is the same value as the sympy expression :meth:`ExactNumber.to_sympy` builds (with
sympy's constructors, so sympy's own evaluation rules apply there), and it interoperates:

* sympy converts it implicitly (``_sympy_``): ``sympy.exp(x)``, ``x + sympy_symbol``,
  ``sympy.Rational(1, 2) == x`` all work and import sympy then;
* an attribute it does not define itself is read from its sympy form
  (``x.evalf(30)``, ``x.atoms(...)``): code written for sympy values keeps working, paying the
  import where it is used;
* comparisons with numbers are decided with rigorous interval arithmetic
  (:func:`dpaudit.numeric.interval`) and return a ``bool``; a comparison the intervals cannot
  decide at the highest precision raises ``TypeError`` (as sympy does for an undecidable
  relation).

Floats never enter: arithmetic with a ``float`` raises ``TypeError`` (convert it with
:func:`dpaudit.numeric.exact`, which keeps its exact binary value).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from fractions import Fraction
from numbers import Integral
from numbers import Rational as _RationalABC
from typing import Any

from dpaudit.deferred_imports import sympy
from dpaudit.exact_text import sympy_text

__all__ = [
    "FUNCTION_HEADS",
    "ExactNumber",
    "apply",
    "constant",
    "is_exact_number_value",
    "is_sympy_object",
    "rational",
]

#: The functions an :class:`ExactNumber` node may apply, by their names in the restricted
#: parser, with their number of arguments (None: any number, at least one).
FUNCTION_HEADS: dict[str, int | None] = {
    "exp": 1,
    "log": 1,
    "erf": 1,
    "erfc": 1,
    "tanh": 1,
    "gamma": 1,
    "factorial": 1,
    "floor": 1,
    "ceiling": 1,
    "Abs": 1,
    "binomial": 2,
    "Min": None,
    "Max": None,
}

_CONSTANTS = ("E", "pi")


class ExactNumber:
    """An exact real number: a rational, ``E``, ``pi``, or a function of exact numbers.

    Build them with :func:`rational`, :func:`apply` and the arithmetic operators; the
    constructor is internal.
    """

    __slots__ = ("_args", "_hash", "_head", "_sympy")

    _head: str
    _args: tuple[Any, ...]

    def __init__(self, head: str, args: tuple[Any, ...]) -> None:
        object.__setattr__(self, "_head", head)
        object.__setattr__(self, "_args", args)
        object.__setattr__(self, "_sympy", None)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ExactNumber is immutable (cannot set {name})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (ExactNumber, (self._head, self._args))

    # ---- structure -----------------------------------------------------------------------

    @property
    def head(self) -> str:
        """``"rational"``, ``"E"``, ``"pi"``, ``"add"``, ``"mul"``, ``"pow"`` or a function
        name of :data:`FUNCTION_HEADS`."""
        return self._head

    @property
    def operands(self) -> tuple[Any, ...]:
        """The node's operands (a ``Fraction`` for a rational, exact numbers otherwise)."""
        return self._args

    @property
    def is_Rational(self) -> bool:
        return self._head == "rational"

    @property
    def is_Integer(self) -> bool:
        return self._head == "rational" and self._args[0].denominator == 1

    @property
    def is_number(self) -> bool:
        return True

    @property
    def free_symbols(self) -> frozenset[Any]:
        return frozenset()

    @property
    def p(self) -> int:
        """The numerator of a rational (AttributeError otherwise)."""
        return self._fraction("p").numerator

    @property
    def q(self) -> int:
        """The denominator of a rational (AttributeError otherwise)."""
        return self._fraction("q").denominator

    @property
    def is_zero(self) -> bool | None:
        if self._head == "rational":
            return self._args[0] == 0
        return self._sign_known(0)

    @property
    def is_positive(self) -> bool | None:
        if self._head == "rational":
            return self._args[0] > 0
        return self._sign_known(1)

    @property
    def is_negative(self) -> bool | None:
        if self._head == "rational":
            return self._args[0] < 0
        return self._sign_known(-1)

    @property
    def is_finite(self) -> bool:
        return True

    def _fraction(self, attribute: str) -> Fraction:
        if self._head != "rational":
            raise AttributeError(f"{attribute}: {self} is not a rational number")
        value: Fraction = self._args[0]
        return value

    def as_fraction(self) -> Fraction | None:
        """The value as a ``Fraction`` when it is a rational, else None."""
        return self._args[0] if self._head == "rational" else None

    def size(self) -> int:
        """The number of nodes of the tree."""
        if self._head == "rational" or self._head in _CONSTANTS:
            return 1
        return 1 + sum(a.size() for a in self._args if isinstance(a, ExactNumber))

    def _sign_known(self, sign: int) -> bool | None:
        op = ">" if sign > 0 else ("<" if sign < 0 else "==")
        return _DECIDE[0](self, op)

    # ---- conversion ----------------------------------------------------------------------

    def to_sympy(self) -> Any:
        """The same value as a sympy expression (built once, with sympy's constructors)."""
        value = self._sympy
        if value is None:
            value = _build_sympy(self)
            object.__setattr__(self, "_sympy", value)
        return value

    def _sympy_(self) -> Any:
        return self.to_sympy()

    def __getattr__(self, attribute: str) -> Any:
        # private names are not delegated: sympy's operators ask for ``_op_priority`` and
        # would then skip the conversion through ``_sympy_``
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.to_sympy(), attribute)

    def __float__(self) -> float:
        if self._head == "rational":
            value: Fraction = self._args[0]
            try:
                return float(value)
            except OverflowError:  # beyond the float range: as sympy, an infinity
                return math.inf if value > 0 else -math.inf
        ends = _ENCLOSURE[0](self)
        if ends is None:
            raise ValueError(f"cannot evaluate {self}")
        lo, hi = ends
        return float((lo + hi) / 2)

    def __int__(self) -> int:
        if self.is_Integer:
            return int(self._args[0])
        return int(self.to_sympy())

    def __index__(self) -> int:
        if self.is_Integer:
            return int(self._args[0])
        raise TypeError(f"{self} is not an integer")

    def __bool__(self) -> bool:
        if self._head == "rational":
            return self._args[0] != 0
        return True

    def __str__(self) -> str:
        if self._head == "rational":
            return str(self._args[0])
        # sympy's str of the same value, without sympy where dpaudit.exact_text can
        text = sympy_text(self)
        return text if text is not None else str(self.to_sympy())

    def __repr__(self) -> str:
        return str(self)

    # ---- equality and order --------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ExactNumber):
            if self._head == "rational" and other._head == "rational":
                return bool(self._args[0] == other._args[0])
            return self._head == other._head and self._args == other._args
        if isinstance(other, (Integral, _RationalABC)) and not isinstance(other, bool):
            return self._head == "rational" and self._args[0] == other
        if isinstance(other, float):  # Fraction compares with floats exactly (inf, nan too)
            return self._head == "rational" and bool(self._args[0] == other)
        if is_sympy_object(other):
            return bool(self.to_sympy() == other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        value = self._hash
        if value is None:
            if self._head == "rational":
                value = hash(self._args[0])
            else:
                value = hash((self._head, self._args))
            object.__setattr__(self, "_hash", value)
        return value

    def _compare(self, other: Any, op: str) -> Any:
        if isinstance(other, float):  # a float is an exact binary number: compare exactly
            if math.isnan(other):
                return False
            if math.isinf(other):
                return (other > 0) == (op in ("<", "<="))
            other = Fraction(other)
        rhs = _coerce(other)
        if rhs is None:
            return NotImplemented
        if self._head == "rational" and rhs._head == "rational":
            a, b = self._args[0], rhs._args[0]
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        decided = _DECIDE[0](self - rhs, op)
        if decided is None:
            raise TypeError(f"cannot decide {self} {op} {rhs} with interval arithmetic")
        return decided

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, "<")

    def __le__(self, other: Any) -> Any:
        return self._compare(other, "<=")

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, ">")

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, ">=")

    # ---- arithmetic ----------------------------------------------------------------------

    def __add__(self, other: Any) -> Any:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _add(self, rhs)

    def __radd__(self, other: Any) -> Any:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _add(lhs, self)

    def __sub__(self, other: Any) -> Any:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _add(self, _negate(rhs))

    def __rsub__(self, other: Any) -> Any:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _add(lhs, _negate(self))

    def __mul__(self, other: Any) -> Any:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _mul(self, rhs)

    def __rmul__(self, other: Any) -> Any:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _mul(lhs, self)

    def __truediv__(self, other: Any) -> Any:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else _mul(self, _power(rhs, Fraction(-1)))

    def __rtruediv__(self, other: Any) -> Any:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else _mul(lhs, _power(self, Fraction(-1)))

    def __pow__(self, other: Any) -> Any:
        rhs = _coerce(other)
        if rhs is None:
            return NotImplemented
        if rhs._head != "rational":
            return ExactNumber("pow", (self, rhs))
        return _power(self, rhs._args[0])

    def __rpow__(self, other: Any) -> Any:
        lhs = _coerce(other)
        return NotImplemented if lhs is None else lhs.__pow__(self)

    def __neg__(self) -> ExactNumber:
        return _negate(self)

    def __pos__(self) -> ExactNumber:
        return self

    def __abs__(self) -> ExactNumber:
        return apply("Abs", self)

    def __floordiv__(self, other: Any) -> Any:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else apply("floor", self / rhs)

    def __mod__(self, other: Any) -> Any:
        rhs = _coerce(other)
        return NotImplemented if rhs is None else self - rhs * apply("floor", self / rhs)


def decide_relation(op: str, lo: Any, hi: Any) -> bool | None:
    """Decide ``d op 0`` for a difference ``d = lhs - rhs`` enclosed in ``[lo, hi]``.

    Args:
        op: one of ``"<"``, ``"<="``, ``">"``, ``">="``, ``"=="``.
        lo, hi: a rigorous enclosure of lhs - rhs.

    Returns:
        True or False when the enclosure decides the relation, None when it does not.
    """
    if op in ("<", "<="):
        if hi < 0 or (op == "<=" and hi <= 0):
            return True
        if lo > 0 or (op == "<" and lo >= 0):
            return False
        return None
    if op in (">", ">="):
        if lo > 0 or (op == ">=" and lo >= 0):
            return True
        if hi < 0 or (op == ">" and hi <= 0):
            return False
        return None
    if op == "==":
        if lo == hi == 0:
            return True
        return False if (lo > 0 or hi < 0) else None
    raise ValueError(f"op must be one of <, <=, >, >=, ==, got {op!r}")


def _not_installed(*args: Any) -> Any:
    raise RuntimeError("dpaudit.numeric.enclosures has not installed the interval evaluator")


#: The interval evaluator, installed by :mod:`dpaudit.numeric.enclosures` when it is imported
#: (it depends on this module; the package imports it first): the rigorous enclosure of an
#: exact number as ``(low, high)`` mpmath numbers or None, and the decision of ``x op 0``
#: (True, False, or None when no precision up to the maximum separates it from 0).
_ENCLOSURE: list[Callable[[ExactNumber], tuple[Any, Any] | None]] = [_not_installed]
_DECIDE: list[Callable[[ExactNumber, str], bool | None]] = [_not_installed]


def install_enclosure(
    enclose: Callable[[ExactNumber], tuple[Any, Any] | None],
    decide: Callable[[ExactNumber, str], bool | None],
) -> None:
    """Install the interval evaluator (called once, by :mod:`dpaudit.numeric.enclosures`)."""
    _ENCLOSURE[0] = enclose
    _DECIDE[0] = decide


# ---- construction --------------------------------------------------------------------------


def rational(value: int | Fraction) -> ExactNumber:
    """The exact number ``value`` (an ``int`` or ``Fraction``)."""
    return ExactNumber("rational", (Fraction(value),))


_ZERO = rational(0)
_ONE = rational(1)


def constant(name: str) -> ExactNumber:
    """``E`` or ``pi``."""
    if name not in _CONSTANTS:
        raise ValueError(f"constant must be one of {_CONSTANTS}, got {name!r}")
    return ExactNumber(name, ())


def is_exact_number_value(value: Any) -> bool:
    """Whether ``value`` is an :class:`ExactNumber`."""
    return isinstance(value, ExactNumber)


def is_sympy_object(value: Any) -> bool:
    """Whether ``value`` is a sympy object, without importing sympy (nothing can be one before
    sympy is imported)."""
    module = sys.modules.get("sympy")
    return module is not None and isinstance(value, module.Basic)


def _coerce(value: Any) -> ExactNumber | None:
    if isinstance(value, ExactNumber):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, Integral):
        return rational(int(value))
    if isinstance(value, _RationalABC):
        return rational(Fraction(int(value.numerator), int(value.denominator)))
    return None


def _negate(x: ExactNumber) -> ExactNumber:
    if x._head == "rational":
        return rational(-x._args[0])
    return _mul(rational(-1), x)


def _split_coefficient(term: ExactNumber) -> tuple[Fraction, ExactNumber]:
    """``term`` as ``coefficient * core`` (the rational factor of a product, else 1)."""
    if term._head == "mul" and term._args[0]._head == "rational":
        rest = term._args[1:]
        core = rest[0] if len(rest) == 1 else ExactNumber("mul", rest)
        return term._args[0]._args[0], core
    return Fraction(1), term


def _add(a: ExactNumber, b: ExactNumber) -> ExactNumber:
    """The sum, with rational terms folded and equal terms collected (``x - x`` is 0, as
    sympy's sum would make it, so truth values and zero tests see the exact zero)."""
    if a._head == "rational" and b._head == "rational":
        return rational(a._args[0] + b._args[0])
    cores: dict[ExactNumber, Fraction] = {}
    total = Fraction(0)
    for x in (a, b):
        for t in x._args if x._head == "add" else (x,):
            if t._head == "rational":
                total += t._args[0]
            else:
                coefficient, core = _split_coefficient(t)
                cores[core] = cores.get(core, Fraction(0)) + coefficient
    terms = [core if c == 1 else _mul(rational(c), core) for core, c in cores.items() if c != 0]
    if total != 0:
        terms.insert(0, rational(total))
    if not terms:
        return _ZERO
    if len(terms) == 1:
        return terms[0]
    return ExactNumber("add", tuple(terms))


def _mul(a: ExactNumber, b: ExactNumber) -> ExactNumber:
    if a._head == "rational" and b._head == "rational":
        return rational(a._args[0] * b._args[0])
    for c, other in ((a, b), (b, a)):  # a number times a sum is distributed, as in sympy
        if c._head == "rational" and other._head == "add":
            total = _ZERO
            for term in other._args:
                total = _add(total, _mul(c, term))
            return total
    factors: list[ExactNumber] = []
    coefficient = Fraction(1)
    for x in (a, b):
        for f in x._args if x._head == "mul" else (x,):
            if f._head == "rational":
                coefficient *= f._args[0]
            else:
                factors.append(f)
    if coefficient == 0:
        return _ZERO
    if coefficient != 1:
        factors.insert(0, rational(coefficient))
    if len(factors) == 1:
        return factors[0]
    return ExactNumber("mul", tuple(factors))


def _power(base: ExactNumber, exponent: Fraction) -> ExactNumber:
    if exponent == 1:
        return base
    if exponent == 0:
        return _ONE
    if base._head == "rational":
        value: Fraction = base._args[0]
        if exponent.denominator == 1:
            if value == 0 and exponent < 0:
                raise ZeroDivisionError("division by zero")
            return rational(value ** int(exponent))
        if value >= 0 and exponent.denominator == 2:
            num, den = math.isqrt(value.numerator), math.isqrt(value.denominator)
            if num * num == value.numerator and den * den == value.denominator:
                return _power(rational(Fraction(num, den)), exponent * 2)
    if base._head == "pow" and exponent.denominator == 1:
        inner_base, inner_exponent = base._args
        return _power(inner_base, inner_exponent._args[0] * exponent)
    return ExactNumber("pow", (base, rational(exponent)))


def apply(name: str, *arguments: Any) -> ExactNumber:
    """The function ``name`` of :data:`FUNCTION_HEADS` applied to exact numbers.

    Folds only what is exact and obvious (``exp(0) = 1``, ``log(1) = 0``, ``Abs``, ``floor``,
    ``ceiling``, ``Min``, ``Max`` of rationals, ``binomial`` and ``factorial`` of small
    non-negative integers); everything else stays a node.

    Raises:
        ValueError: for an unknown function or a wrong number of arguments.
        TypeError: for an argument that is not an exact number, int or Fraction.
    """
    arity = FUNCTION_HEADS.get(name, -1)
    if arity == -1:
        raise ValueError(f"unknown function {name!r} (known: {', '.join(FUNCTION_HEADS)})")
    if (arity is None and not arguments) or (arity is not None and len(arguments) != arity):
        raise ValueError(f"{name} takes {arity or 'one or more'} argument(s)")
    args = []
    for value in arguments:
        coerced = _coerce(value)
        if coerced is None:
            raise TypeError(f"{name}: expected an exact number, got {type(value).__name__}")
        args.append(coerced)
    folded = _FOLD.get(name, _no_fold)(args)
    return folded if folded is not None else ExactNumber(name, tuple(args))


def _no_fold(args: list[ExactNumber]) -> ExactNumber | None:
    return None


def _fractions(args: list[ExactNumber]) -> list[Fraction] | None:
    values = [a.as_fraction() for a in args]
    return None if any(v is None for v in values) else values  # type: ignore[return-value]


def _fold_exp(args: list[ExactNumber]) -> ExactNumber | None:
    return _ONE if args[0] == _ZERO else None


def _fold_log(args: list[ExactNumber]) -> ExactNumber | None:
    if args[0] == _ONE:
        return _ZERO
    if args[0]._head == "E":
        return _ONE
    if args[0]._head == "exp":
        return args[0]._args[0]
    return None


def _fold_rational(fn: Callable[[Fraction], int | Fraction]) -> Any:
    def fold(args: list[ExactNumber]) -> ExactNumber | None:
        values = _fractions(args)
        return None if values is None else rational(fn(values[0]))

    return fold


def _fold_extreme(pick: Callable[..., Fraction]) -> Any:
    def fold(args: list[ExactNumber]) -> ExactNumber | None:
        if len(args) == 1:
            return args[0]
        values = _fractions(args)
        return None if values is None else rational(pick(values))

    return fold


#: Factorials and binomials are folded up to this argument (larger ones stay nodes and are
#: enclosed by interval arithmetic, as the parser's own limit intends).
_FOLD_INTEGER_LIMIT = 1000


def _fold_binomial(args: list[ExactNumber]) -> ExactNumber | None:
    values = _fractions(args)
    if values is None or any(v.denominator != 1 for v in values):
        return None
    n, k = (int(v) for v in values)
    if 0 <= k <= n <= _FOLD_INTEGER_LIMIT:
        return rational(math.comb(n, k))
    return None


def _fold_factorial(args: list[ExactNumber]) -> ExactNumber | None:
    values = _fractions(args)
    if values is None or values[0].denominator != 1:
        return None
    n = int(values[0])
    return rational(math.factorial(n)) if 0 <= n <= _FOLD_INTEGER_LIMIT else None


def _fold_gamma(args: list[ExactNumber]) -> ExactNumber | None:
    values = _fractions(args)
    if values is None or values[0].denominator != 1:
        return None
    n = int(values[0])
    return rational(math.factorial(n - 1)) if 1 <= n <= _FOLD_INTEGER_LIMIT else None


_FOLD: dict[str, Callable[[list[ExactNumber]], ExactNumber | None]] = {
    "gamma": _fold_gamma,
    "exp": _fold_exp,
    "log": _fold_log,
    "Abs": _fold_rational(abs),
    "floor": _fold_rational(math.floor),
    "ceiling": _fold_rational(math.ceil),
    "Min": _fold_extreme(min),
    "Max": _fold_extreme(max),
    "binomial": _fold_binomial,
    "factorial": _fold_factorial,
}


# ---- to sympy ------------------------------------------------------------------------------


def _build_sympy(x: ExactNumber) -> Any:
    head, args = x._head, x._args
    if head == "rational":
        value: Fraction = args[0]
        return sympy.Rational(value.numerator, value.denominator)
    if head in _CONSTANTS:
        return getattr(sympy, head)
    parts = [a.to_sympy() for a in args]
    if head == "add":
        return sympy.Add(*parts)
    if head == "mul":
        return sympy.Mul(*parts)
    if head == "pow":
        return sympy.Pow(parts[0], parts[1])
    return getattr(sympy, head)(*parts)
