"""Text placed in LaTeX output: the one escaper every LaTeX renderer uses.

``dpaudit account --latex``, ``dpaudit explain --latex``, the notebooks' ``_repr_latex_`` and
the teaching views put text into LaTeX that is not dpaudit's own: event expressions (a symbol
may be named anything from Python), theorem names and citations a plugin registers, claim
statements.  Each special character of LaTeX's text mode is replaced once, so the text
typesets as itself and never opens math mode, a group, a comment or a command.
"""

from __future__ import annotations

__all__ = ["LATEX_SPECIAL", "latex_escape"]

#: Each special character of LaTeX text mode and what it becomes.
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "_": r"\_",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "$": r"\$",
    "^": r"\^{}",
    "~": r"\~{}",
    "{": r"\{",
    "}": r"\}",
}


def latex_escape(text: str) -> str:
    """``text`` safe in LaTeX text mode (and inside ``\\text{...}``, ``\\texttt{...}``):
    each special character replaced once (a backslash becomes ``\\textbackslash{}``, whose
    braces are not escaped again).

    Args:
        text: any text.

    Returns:
        The escaped text.
    """
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in str(text))
