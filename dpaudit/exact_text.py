"""sympy's ``str`` of an exact number, without sympy, for the forms the accountant prints.

``str(ExactNumber)`` must read as it always did: as ``str`` of the same value built with
sympy's constructors (:meth:`~dpaudit.exact_numbers.ExactNumber.to_sympy`), which applies
sympy's automatic evaluation (``sqrt(log(10**6)/2)`` becomes ``sqrt(2)*sqrt(log(1000000))/2``)
and sympy's order of terms.  Importing sympy for that costs ~0.3 s (issue 19, part 4), so this
module reproduces it on a small class of values: sums of rational multiples of products of
at most one each of

* ``sqrt(n)`` (n a square-free integer > 1),
* ``exp(r)`` (r rational, not 0; ``exp(1)`` is sympy's ``E``),
* ``log(r)`` or ``sqrt(log(r))`` (r a positive rational; the root only for r > 1),

which is what the zCDP, advanced-composition and RDP conversions of plain numbers give
(``1/2 + sqrt(2)*sqrt(log(1000000))``).  Anything else, or any doubt (two terms too close
in value to be sure of sympy's order), gives None and the caller asks sympy.
``tests/numeric/test_exact_text.py`` compares the result with sympy's on these forms.

The sympy rules reproduced (sympy 1.12-1.14): ``Mul.flatten`` distributes a rational over a
sum only in a product of exactly those two factors; ``Pow`` splits ``sqrt(c*log(r))`` into
``sqrt(c)*sqrt(log(r))`` (log(r) > 0) and writes ``sqrt(p/q)`` as ``(a/q)*sqrt(s)``;
``log(1/q)`` is ``-log(q)``; ``Add`` collects equal products.  ``StrPrinter`` orders the terms
of a sum of numbers by their (double precision) values, ascending, except ``a - c*x`` (a
positive number and a negative multiple of one factor), and the factors of a product as
sqrt(n), exp, log (their ``sort_key``); a rational coefficient ``p/q`` prints as ``p*...*/q``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

__all__ = ["sympy_text"]

#: An atom: ("sqrt", n), ("exp", r), ("log", r) or ("sqrtlog", r).
Atom = tuple[str, Any]
#: A sum: {product of atoms (sorted by _ATOM_ORDER): rational coefficient}.
Poly = dict[tuple[Atom, ...], Fraction]

#: The order of the factors of a product in sympy's printing (Integer base of sqrt(n) first,
#: then the functions exp and log, by Function.class_key).
_ATOM_ORDER = {"sqrt": 0, "exp": 1, "log": 2, "sqrtlog": 2, "logsum": 3}

#: Terms whose values differ by less than this (relative to the larger) are not ordered here:
#: sympy orders them by double-precision products (a few units in the last place off), which
#: could then go either way.
_SEPARATION = Fraction(1, 10**9)


class _UnsupportedError(Exception):
    """The value is outside the class this module prints."""


def sympy_text(x: Any) -> str | None:
    """``str(x.to_sympy())`` for an exact number ``x`` of the class above, else None."""
    try:
        poly = _normalize(x)
        if not poly or set(poly) == {()}:
            return None  # zero or a rational after evaluation: the caller's rational path
        return _print_sum(poly)
    except (_UnsupportedError, RecursionError, ValueError, OverflowError, ZeroDivisionError):
        return None


# ---- sympy's automatic evaluation on the class ------------------------------------------------


def _fraction(x: Any) -> Fraction | None:
    return x.operands[0] if x.head == "rational" else None


def _normalize(x: Any) -> Poly:
    head, args = x.head, x.operands
    if head == "rational":
        value: Fraction = args[0]
        return {(): value} if value != 0 else {}
    if head == "add":
        total: Poly = {}
        for a in args:
            for mono, c in _normalize(a).items():
                total[mono] = total.get(mono, Fraction(0)) + c
        return {m: c for m, c in total.items() if c != 0}
    if head == "mul":
        if len(args) == 2 and args[0].head == "rational" and args[1].head == "add":
            c = args[0].operands[0]  # Mul(rational, Add) distributes (the 2-arg rule)
            return {m: c * v for m, v in _normalize(args[1]).items()}
        product: Poly = {(): Fraction(1)}
        for a in args:
            factor = _normalize(a)
            if not factor:
                return {}
            if len(factor) != 1:
                raise _UnsupportedError("a sum inside a product stays unexpanded in sympy")
            ((mono, c),) = factor.items()
            ((pm, pc),) = product.items()
            product = {_merge(pm, mono): pc * c}
        return product
    if head == "pow":
        return _sqrt(args)
    if head == "log":
        r = _fraction(args[0])
        if r is None and args[0].head == "add":
            return _log_of_sum(args[0])
        if r is None or r <= 0:
            raise _UnsupportedError("log of a non-rational")
        if r == 1:
            return {}
        if r.numerator == 1:
            return {(("log", Fraction(r.denominator)),): Fraction(-1)}
        return {(("log", r),): Fraction(1)}
    if head == "exp":
        r = _fraction(args[0])
        if r is None or r == 0:
            raise _UnsupportedError("exp of a non-rational")
        return {(("exp", r),): Fraction(1)}  # exp(1) is sympy's E, printed "E"
    if head == "E":
        return {(("exp", Fraction(1)),): Fraction(1)}
    raise _UnsupportedError(head)


def _log_of_sum(arg: Any) -> Poly:
    """``log(S)`` of a positive sum S of the class (the amplified epsilon
    ``log(1 + q (e^eps - 1))`` is ``log(E/10 + 9/10)``): sympy keeps it as it is and prints the
    sum inside.  Only as a term of its own (``c*log(S)``): a product or a sum with other terms
    is left to sympy."""
    inner = _normalize(arg)
    if len(inner) < 2 or any(k == "logsum" for mono in inner for k, _ in mono):
        raise _UnsupportedError("log of a sum that sympy may rewrite")
    if _total(inner) <= 0:
        raise _UnsupportedError("log of a non-positive sum")
    return {(("logsum", tuple(sorted(inner.items()))),): Fraction(1)}


def _total(poly: Poly) -> Any:
    total = _context().mpf(0)
    for mono, c in poly.items():
        total += _value(mono, c)
    return total


def _merge(a: tuple[Atom, ...], b: tuple[Atom, ...]) -> tuple[Atom, ...]:
    atoms = [*a, *b]
    if any(k == "logsum" for k, _ in atoms) and len(atoms) > 1:
        raise _UnsupportedError("log of a sum times another factor")
    kinds = [_ATOM_ORDER[k] for k, _ in atoms]
    if len(set(kinds)) != len(kinds):  # sympy combines these (sqrt(2)*sqrt(3) = sqrt(6), ...)
        raise _UnsupportedError("two factors of one kind")
    return tuple(sorted(atoms, key=lambda atom: _ATOM_ORDER[atom[0]]))


def _sqrt(args: tuple[Any, ...]) -> Poly:
    base, exponent = args
    if _fraction(exponent) != Fraction(1, 2):
        raise _UnsupportedError("a power other than a square root")
    inner = _normalize(base)
    if len(inner) != 1:
        raise _UnsupportedError("the root of a sum")
    ((mono, c),) = inner.items()
    if c <= 0:
        raise _UnsupportedError("the root of a negative number")
    coefficient, radicand = _rational_sqrt(c)
    atoms: tuple[Atom, ...] = (("sqrt", radicand),) if radicand != 1 else ()
    if mono == ():
        pass
    elif len(mono) == 1 and mono[0][0] == "log" and mono[0][1] > 1:
        atoms = _merge(atoms, (("sqrtlog", mono[0][1]),))
    else:
        raise _UnsupportedError("the root of a product other than c*log(r), r > 1")
    return {atoms: coefficient}


def _rational_sqrt(value: Fraction) -> tuple[Fraction, int]:
    """sqrt(p/q) as (a/q) sqrt(s), s square-free: sqrt(p q)/q with the squares taken out."""
    n = value.numerator * value.denominator
    if n >= 2**30:  # sympy factors with trial division up to 2**15: beyond, not sure
        raise _UnsupportedError("a radicand too large to be sure of sympy's factoring")
    outside, inside = 1, 1
    rest, d = n, 2
    while d * d <= rest:
        count = 0
        while rest % d == 0:
            rest //= d
            count += 1
        outside *= d ** (count // 2)
        inside *= d ** (count % 2)
        d += 1
    inside *= rest
    return Fraction(outside, value.denominator), inside


# ---- sympy's printing -------------------------------------------------------------------------


def _atom_text(atom: Atom) -> str:
    kind, value = atom
    if kind == "sqrt":
        return f"sqrt({value})"
    if kind == "sqrtlog":
        return f"sqrt(log({value}))"
    if kind == "logsum":
        return f"log({_print_sum(dict(value))})"
    if kind == "exp" and value == 1:
        return "E"
    return f"{kind}({value})"


def _term_text(mono: tuple[Atom, ...], c: Fraction) -> str:
    if not mono:
        return str(c)
    sign = "-" if c < 0 else ""
    c = abs(c)
    numerator = ([str(c.numerator)] if c.numerator != 1 else []) + [_atom_text(a) for a in mono]
    text = sign + "*".join(numerator)
    return text + (f"/{c.denominator}" if c.denominator != 1 else "")


def _context() -> Any:
    """A private mpmath context at 160 bits (the global precision is left alone: it changes
    only under dpaudit.numeric's lock).  Made once; its precision is never changed again."""
    ctx = _CONTEXT.get("ctx")
    if ctx is None:
        import mpmath

        ctx = mpmath.MPContext()
        ctx.prec = 160
        ctx = _CONTEXT.setdefault("ctx", ctx)
    return ctx


_CONTEXT: dict[str, Any] = {}


def _value(mono: tuple[Atom, ...], c: Fraction) -> Any:
    ctx = _context()
    value = ctx.mpf(c.numerator) / c.denominator
    for kind, v in mono:
        if kind == "sqrt":
            value *= ctx.sqrt(v)
        elif kind == "logsum":
            value *= ctx.log(_total(dict(v)))
        else:
            arg = ctx.mpf(v.numerator) / v.denominator
            if kind == "exp":
                value *= ctx.exp(arg)
            elif kind == "log":
                value *= ctx.log(arg)
            else:
                value *= ctx.sqrt(ctx.log(arg))
    return value


def _print_sum(poly: Poly) -> str:
    terms = list(poly.items())
    if len(terms) == 1:
        return _term_text(*terms[0])
    if any(k == "logsum" for mono, _ in terms for k, _ in mono):
        raise _UnsupportedError("log of a sum beside other terms")
    if len(terms) == 2:
        if ((("exp", Fraction(1)),), Fraction(1)) in terms:
            raise _UnsupportedError("E alone in a sum of two: sympy's special case")
        number = [t for t in terms if t[0] == ()]
        other = [t for t in terms if t[0] != ()]
        # sympy's special case: a positive number and a negative multiple of one factor
        if number and number[0][1] > 0 and other[0][1] < 0 and len(other[0][0]) == 1:
            return _join([number[0], other[0]])
    ctx = _context()
    values = [_value(m, c) for m, c in terms]
    if not 1e-300 < min(abs(v) for v in values) <= max(abs(v) for v in values) < 1e300:
        raise _UnsupportedError("a term beyond the float range (sympy's doubles)")
    ordered = sorted(range(len(terms)), key=lambda i: values[i])
    separation = ctx.mpf(_SEPARATION.numerator) / _SEPARATION.denominator
    for i, j in itertools.pairwise(ordered):
        gap, size = values[j] - values[i], max(abs(values[i]), abs(values[j]))
        if gap <= size * separation:
            raise _UnsupportedError("two terms too close to order as sympy does")
    return _join([terms[i] for i in ordered])


def _join(terms: list[tuple[tuple[Atom, ...], Fraction]]) -> str:
    parts: list[str] = []
    for mono, c in terms:
        text = _term_text(mono, c)
        sign = "+"
        if text.startswith("-"):
            sign, text = "-", text[1:]
        parts.extend([sign, text])
    first = parts.pop(0)
    return ("" if first == "+" else first) + " ".join(parts)
