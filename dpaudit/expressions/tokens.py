"""The tokenizer of the restricted expression language, and its documented limits.

One pass over the text turns it into tokens (numbers read exactly, names, strings,
operators); every limit of :data:`LIMITS` the text can break before parsing is checked here.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

from dpaudit.exact_numbers import rational

__all__ = ["LIMITS", "ExpressionError", "ExpressionSizeError", "check_text", "shorten"]

#: The documented limits of the parser.
LIMITS: dict[str, int] = {
    "length": 10_000,  # characters of text
    "tokens": 5_000,  # tokens in one text
    "depth": 100,  # nesting of parentheses, brackets, calls, unary signs and powers
    "digits": 1_000,  # digits in one number literal (before and after the point)
    "exponent": 1_000,  # |decimal exponent| of one number literal (1e-1000 .. 1e1000)
    # bits of an exact number the parser computes (e.g. base**exponent); sympy's own work on
    # exact numbers (sqrt, floor of a huge integer) grows fast past a few thousand digits
    "bits": 4_000,
    # decimal exponent of the magnitude of a numeric argument of a function or a power
    # (floor(exp(exp(100))) or ceiling(exp(10**4)) would make sympy compute a huge integer)
    "magnitude": 1_000,
    "factorial": 10_000,  # largest numeric argument of factorial, gamma, binomial
}


class ExpressionError(ValueError):
    """Text that is not a well-formed, allowed expression; the message says what and where."""


class ExpressionSizeError(ExpressionError):
    """Text over the length or token limit of :data:`LIMITS` (a large event tree belongs in
    a plan file, :mod:`dpaudit.plans`)."""


_TWO_CHAR = ("**", "<=", ">=", "==", "!=")
_ONE_CHAR = "+-*/()[],=<>"
_SPACE = " \t\r\n"
_STRING_CHARS = frozenset(chr(c) for c in range(32, 127)) - {"\\"}


@dataclasses.dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "str", "op", "end"
    text: str
    pos: int  # 0-based offset in the text
    value: Any = None


def shorten(text: Any, limit: int = 60) -> Any:
    """``text`` cut to ``limit`` characters (with "...") for an error message; other values
    unchanged."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit] + "..."


_short = shorten


def _log2(n: Any) -> int:
    """About log2(|n|) for an integer (0 for 0 and +-1)."""
    return max(int(abs(int(n))).bit_length() - 1, 0)


def _bits(q: Any) -> int:
    return int(q.p).bit_length() + int(q.q).bit_length()


def check_text(text: Any, name: str = "expression") -> str:
    """Check that ``text`` is a string within the length limit, before any other work on it
    (regular expressions included).

    Raises:
        ExpressionError: naming ``name``, the limit and the length received.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"{name} must be text, got {type(text).__name__}")
    if len(text) > LIMITS["length"]:
        raise ExpressionSizeError(
            f"{name} too long: {len(text)} characters, the limit is "
            f"{LIMITS['length']} (text starts {_short(text)!r})"
        )
    return text


def _tokenize(text: str, primes: bool) -> list[_Token]:
    n = len(text)
    check_text(text)
    tokens: list[_Token] = []
    i = 0
    while i < n:
        c = text[i]
        if len(tokens) > LIMITS["tokens"]:
            raise ExpressionSizeError(
                f"expression has too many tokens: more than "
                f"{LIMITS['tokens']}, the limit (text starts "
                f"{_short(text)!r})"
            )
        if c in _SPACE:
            i += 1
            continue
        if not c.isascii():
            raise ExpressionError(
                f"non-ASCII character {c!r} (U+{ord(c):04X}) at column "
                f"{i + 1}: only ASCII letters, digits and operators are "
                f"allowed"
            )
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            i = _number(text, i, tokens)
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if primes:
                while j < n and text[j] == "'":
                    j += 1
            word = text[i:j]
            if word.startswith("_"):
                raise ExpressionError(
                    f"name {_short(word)!r} at column {i + 1} starts with "
                    f"'_': such names are not allowed"
                )
            if j < n and not text[j].isascii() and text[j].isalnum():
                raise ExpressionError(
                    f"non-ASCII character {text[j]!r} (U+{ord(text[j]):04X})"
                    f" at column {j + 1}: names must be ASCII"
                )
            tokens.append(_Token("name", word, i))
            i = j
            continue
        if c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] not in _STRING_CHARS:
                    raise ExpressionError(
                        f"character {text[j]!r} at column {j + 1} is not allowed in a string "
                        f"(plain printable ASCII only, no escapes)"
                    )
                j += 1
            if j >= n:
                raise ExpressionError(
                    f"syntax error: unterminated string starting at column {i + 1}"
                )
            tokens.append(_Token("str", text[i : j + 1], i, text[i + 1 : j]))
            i = j + 1
            continue
        if text[i : i + 2] in _TWO_CHAR:
            tokens.append(_Token("op", text[i : i + 2], i))
            i += 2
            continue
        if c in _ONE_CHAR:
            tokens.append(_Token("op", c, i))
            i += 1
            continue
        raise ExpressionError(
            f"syntax error: character {c!r} at column {i + 1} is not allowed in an expression"
        )
    if len(tokens) > LIMITS["tokens"]:
        raise ExpressionError(
            f"expression has too many tokens: {len(tokens)}, the limit is {LIMITS['tokens']}"
        )
    tokens.append(_Token("end", "", n))
    return tokens


def _digits(text: str, i: int) -> int:
    n = len(text)
    while i < n and "0" <= text[i] <= "9":
        i += 1
    return i


def _number(text: str, i: int, tokens: list[_Token]) -> int:
    """Read one number literal at ``i``; append its token; return the next offset."""
    start = i
    j = _digits(text, i)
    int_part = text[i:j]
    frac_part = ""
    if j < len(text) and text[j] == ".":
        k = _digits(text, j + 1)
        frac_part = text[j + 1 : k]
        j = k
    ndigits = len(int_part) + len(frac_part)
    if ndigits > LIMITS["digits"]:
        raise ExpressionError(
            f"number at column {start + 1} has {ndigits} digits, the limit is {LIMITS['digits']}"
        )
    exponent = 0
    if j < len(text) and text[j] in "eE":
        k = j + 1
        if k < len(text) and text[k] in "+-":
            k += 1
        m = _digits(text, k)
        if m == k:
            raise ExpressionError(
                f"syntax error: malformed number {text[start : m + 1]!r} at column "
                f"{start + 1}: the exponent has no digits"
            )
        if m - k > 6 or int(text[k:m]) > LIMITS["exponent"]:
            raise ExpressionError(
                f"number at column {start + 1} has the exponent "
                f"{_short(text[j + 1 : m])}, the limit is "
                f"+-{LIMITS['exponent']}"
            )
        exponent = int(text[j + 1 : m])
        j = m
    if j < len(text) and (text[j].isalnum() or text[j] in "._"):
        raise ExpressionError(
            f"syntax error: malformed number {_short(text[start : j + 1])!r} at column {start + 1}"
        )
    mantissa = Fraction(int(int_part + frac_part or "0"), 10 ** len(frac_part))
    value = mantissa * Fraction(10) ** exponent
    tokens.append(_Token("num", text[start:j], start, rational(value)))
    return j
