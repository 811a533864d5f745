"""The command line's ``--records`` text: a record domain written out (:mod:`dpaudit.audit.domain`).

:func:`parse_records` reads it with a small tokenizer of its own (numbers only; nothing is
evaluated)::

    records = column { "," column } ;
    column  = "(" number "," number ")"                  (* numeric: low, high *)
            | "{" number { "," number } "}"              (* categorical values *)
            | "[" number { "," number } "]" ;            (* categorical values *)
    number  = [ "+" | "-" ] ( digits [ "." [ digits ] ] | "." digits )
              [ ( "e" | "E" ) [ "+" | "-" ] digits ] ;

e.g. ``"(-1,10),(0,1)"`` (two numeric columns) or ``"(0,100),{0,1,2}"`` (a numeric column
and a categorical one).
"""

from __future__ import annotations

import re

__all__ = ["MAX_RECORDS_TEXT", "parse_records"]

#: Longest ``--records`` text accepted (characters).
MAX_RECORDS_TEXT = 100_000

_TOKEN = re.compile(
    r"\s*(?:(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|(?P<mark>[(){}\[\],]))"
)
_CLOSE = {"(": ")", "{": "}", "[": "]"}


def _tokens(text: str) -> list[tuple[str, str, int]]:
    found, i = [], 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        match = _TOKEN.match(text, i)
        if match is None:
            start = len(text) - len(text[i:].lstrip())
            raise ValueError(
                f"--records must be columns like '(-1,10),(0,1)' or '{{0,1,2}}' (numbers, "
                f"parentheses, braces, brackets, commas), got {text[:80]!r}: unexpected "
                f"{text[start : start + 10]!r} at character {start}"
            )
        kind = "number" if match.group("number") is not None else "mark"
        found.append((kind, match.group(kind), match.start(kind)))
        i = match.end()
    return found


def parse_records(text: str) -> list[tuple[float, float] | list[float]]:
    """Read the command line's ``--records`` text into a domain list (grammar above).

    Args:
        text: e.g. ``"(-1,10),(0,1)"`` or ``"(0,100),{0,1,2}"``.

    Returns:
        The domain: a ``(low, high)`` tuple per numeric column, a list per categorical one
        (validate it with :func:`dpaudit.audit.domain.check_domain`).

    Raises:
        ValueError: naming ``--records``, the syntax expected and where the text departs.
    """
    if not isinstance(text, str) or len(text) > MAX_RECORDS_TEXT:
        size = len(text) if isinstance(text, str) else type(text).__name__
        raise ValueError(
            f"--records must be a text of at most {MAX_RECORDS_TEXT:,} characters, got {size}"
        )
    tokens = _tokens(text)
    columns: list[tuple[float, float] | list[float]] = []
    pos = 0

    def fail(expected: str) -> ValueError:
        got = f"{tokens[pos][1]!r} at character {tokens[pos][2]}" if pos < len(tokens) else "end"
        return ValueError(
            f"--records must be columns like '(-1,10),(0,1)' or '(0,100),{{0,1,2}}', got "
            f"{text[:80]!r}: expected {expected}, found {got}"
        )

    while True:
        if pos >= len(tokens) or tokens[pos][1] not in _CLOSE:
            raise fail("'(' , '{' or '['")
        opening = tokens[pos][1]
        pos += 1
        values = []
        while True:
            if pos >= len(tokens) or tokens[pos][0] != "number":
                raise fail("a number")
            values.append(float(tokens[pos][1]))  # a token the regex checked: digits only
            pos += 1
            if pos < len(tokens) and tokens[pos][1] == ",":
                pos += 1
                continue
            if pos < len(tokens) and tokens[pos][1] == _CLOSE[opening]:
                pos += 1
                break
            raise fail(f"',' or {_CLOSE[opening]!r}")
        if opening == "(":
            if len(values) != 2:
                raise ValueError(
                    f"--records: a numeric column must be '(low,high)' with two numbers, got "
                    f"{len(values)} number(s) in column {len(columns)} of {text[:80]!r}"
                )
            columns.append((values[0], values[1]))
        else:
            columns.append(values)
        if pos == len(tokens):
            return columns
        if tokens[pos][1] != ",":
            raise fail("',' between columns")
        pos += 1
