"""Printing a guarantee's derivation as text (a tree) or LaTeX (nested lists)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy

from dpaudit.accountant.statements import Step, show

if TYPE_CHECKING:
    from dpaudit.accountant.core import Guarantee

__all__ = ["render_latex", "render_text"]


def _headline(g: Guarantee) -> str:
    if g.symbolic:
        line = f"{g.event}\n  is ({g.epsilon}, {g.delta})-DP  [upper bound]"
    else:
        line = (f"{g.event}\n  is ({g.epsilon_upper:.10g}, {g.delta_upper:.3g})-DP  "
                f"[epsilon: upper bound, rounded up; exact value {show(g.epsilon)}]")
    if g.epsilon_lower_float is not None:
        line += (f"\n  certified lower bound on the true epsilon at this delta: "
                 f"{g.epsilon_lower_float:.10g} (rounded down)")
    if g.assumptions:
        line += "\n  assuming " + ", ".join(str(a) for a in g.assumptions)
    return line


def render_text(g: Guarantee) -> str:
    """The guarantee, then its derivation tree, one step per line with its citation."""
    lines = [_headline(g), "", "derivation:"]
    _text_step(g.derivation, "", True, lines, top=True)
    return "\n".join(lines)


def _text_step(step: Step, prefix: str, last: bool, lines: list[str], top: bool = False) -> None:
    branch = "" if top else ("`- " if last else "|- ")
    lines.append(f"{prefix}{branch}{step.event}: {step.conclusion}")
    inner = prefix + ("" if top else ("   " if last else "|  "))
    lines.append(f"{inner}   by {step.theorem.name} [{step.theorem.citation}]")
    if step.formula:
        lines.append(f"{inner}   {step.formula}")
    if step.alternatives:
        parts = [f"{a.label} {show(a.epsilon)}{' <- chosen' if a.chosen else ''}"
                 for a in step.alternatives]
        lines.append(f"{inner}   candidates compared: " + "; ".join(parts))
    if step.note:
        lines.append(f"{inner}   note: {step.note}")
    for i, p in enumerate(step.premises):
        _text_step(p, inner, i == len(step.premises) - 1, lines)


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"),
                 ("#", r"\#"), ("^", r"\^{}"), ("{", r"\{"), ("}", r"\}")):
        text = text.replace(a, b)
    return text


def render_latex(g: Guarantee) -> str:
    """The derivation as nested ``itemize`` lists, each step with its theorem's formula."""
    eps = sympy.latex(g.epsilon)
    out = [r"\begin{itemize}",
           rf"\item \texttt{{{_tex(str(g.event))}}} is $({eps}, {sympy.latex(g.delta)})$-DP"
           r" (upper bound)"]
    _latex_step(g.derivation, out)
    out.append(r"\end{itemize}")
    return "\n".join(out)


def _latex_step(step: Step, out: list[str]) -> None:
    out.append(r"\begin{itemize}")
    formula = f" ${step.theorem.latex}$" if step.theorem.latex else ""
    out.append(rf"\item \texttt{{{_tex(str(step.event))}}}: {_tex(step.conclusion)} by "
               rf"{_tex(step.theorem.name)} ({_tex(step.theorem.citation)}).{formula}")
    if step.formula:
        out.append(rf"\\ \texttt{{{_tex(step.formula)}}}")
    for p in step.premises:
        _latex_step(p, out)
    out.append(r"\end{itemize}")
