"""Markdown made from user text: the escaping every report block goes through.

Kept apart from :mod:`dpaudit.report.render` so that the modules laying out parts of a
report (:mod:`dpaudit.report.one_run`) escape exactly as the renderer does (see the
renderer's module docstring for the subset of Markdown blocks use).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Block", "md_code", "md_escape"]

Block = tuple[Any, ...]

#: Characters escaped with a backslash anywhere in user text (links, images, HTML tags and
#: entities, emphasis, code, table cells, strikethrough, and the ``$`` of the math GitHub and
#: most notebook viewers typeset).
_MD_ANYWHERE = frozenset("\\`*_[]<&|~$")
#: Characters escaped at the start of user text (headings, quotes, lists, setext lines).
_MD_AT_START = frozenset("#>-+=")


def md_escape(text: Any) -> str:
    """User text made inert in Markdown (and in the HTML
    :func:`dpaudit.report.render.to_html` makes of it).

    Line breaks become spaces; ``\\ ` * _ [ ] < & | ~ $`` are backslash-escaped everywhere,
    and ``# > - + =`` and an ordered-list marker (``1.``) at the start.

    Args:
        text: the text (any object; ``str()`` is taken).

    Returns:
        Markdown that renders as exactly ``text`` (line breaks aside).
    """
    flat = " ".join(str(text).splitlines())
    out = "".join("\\" + c if c in _MD_ANYWHERE else c for c in flat)
    if out[:1] in _MD_AT_START:
        out = "\\" + out
    elif m := re.match(r"\d+([.)])", out):
        out = out[: m.end() - 1] + "\\" + out[m.end() - 1 :]
    return out


def md_code(text: Any) -> str:
    """A Markdown code span showing ``text`` literally (the fence is longer than any run of
    backticks inside it)."""
    flat = " ".join(str(text).splitlines())
    fence = "`" * (max((len(r) for r in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
