"""Printing a guarantee's derivation as text (a tree) or LaTeX (nested lists).

Each step lists its theorem's domain conditions and how each was decided at the step's
parameters ("assumptions: 0 < delta' < 1 (checked: delta' = 1/1000000)"), or says that a
condition was not verified (the bound is then conditional on it, see
:mod:`dpaudit.accountant.domains`); the results that were not applicable follow the tree.
"""

from __future__ import annotations

import html
import re
from typing import Any, Protocol

from dpaudit.accountant.statements import Step, show
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import ExactNumber, is_sympy_object
from dpaudit.latex import latex_escape
from dpaudit.theorems.base import Check
from dpaudit.theorems.conditions import Condition, ConditionSide

__all__ = [
    "Derived",
    "assumption_lines",
    "render_html",
    "render_latex",
    "render_math",
    "render_text",
]


class Derived(Protocol):
    """What printing needs of a guarantee (:class:`~dpaudit.accountant.Guarantee` has it):
    a structural type, so that this module does not import the accountant's core, which
    imports it.  Read-only, as on the frozen Guarantee."""

    @property
    def event(self) -> Event: ...

    @property
    def epsilon(self) -> sympy.Expr: ...

    @property
    def delta(self) -> sympy.Expr: ...

    @property
    def derivation(self) -> Step: ...

    @property
    def assumptions(self) -> tuple[sympy.Basic, ...]: ...

    @property
    def rejected(self) -> tuple[Any, ...]: ...

    @property
    def symbolic(self) -> bool: ...

    @property
    def epsilon_upper(self) -> float | None: ...

    @property
    def delta_upper(self) -> float | None: ...

    @property
    def epsilon_lower_float(self) -> float | None: ...


def _headline(g: Derived) -> str:
    if g.symbolic:
        line = f"{g.event}\n  is ({g.epsilon}, {g.delta})-DP  [upper bound]"
    else:
        line = (
            f"{g.event}\n  is ({g.epsilon_upper:.10g}, {g.delta_upper:.3g})-DP  "
            f"[epsilon: upper bound, rounded up; exact value {show(g.epsilon)}]"
        )
    if g.epsilon_lower_float is not None:
        line += (
            f"\n  certified lower bound on the true epsilon at this delta: "
            f"{g.epsilon_lower_float:.10g} (rounded down)"
        )
    if g.assumptions:
        line += "\n  assuming " + ", ".join(str(a) for a in g.assumptions)
    return line


def render_text(g: Derived) -> str:
    """The guarantee, then its derivation tree, one step per line with its citation."""
    lines = [_headline(g), "", "derivation:"]
    _text_step(g.derivation, "", True, lines, top=True)
    if g.rejected:
        lines += ["", "not applicable (domain conditions fail at these parameters):"]
        lines += [f"  - {r}" for r in g.rejected]
    return "\n".join(lines)


def _chains(checks: tuple[Check, ...]) -> list[tuple[Any, Check]]:
    """The checks with ``a < x`` and ``x < b`` (same outcome) merged into ``a < x < b``."""
    out: list[tuple[Any, Check]] = []
    for c in checks:
        if out:
            shown, prev = out[-1]
            cond, last = c.condition, prev.condition
            if (
                _is_comparison(shown)
                and last.rel_op in ("<", "<=")
                and cond.rel_op in ("<", "<=")
                and last.rhs == cond.lhs
                and last.rhs.is_Symbol
                and (prev.status, prev.how) == (c.status, c.how)
            ):
                out[-1] = ((last.lhs, last.rel_op, last.rhs, cond.rel_op, cond.rhs), c)
                continue
        out.append((c.condition, c))
    return out


def _is_comparison(shown: Any) -> bool:
    """A single comparison: a condition as a card writes it, or a sympy relation."""
    return isinstance(shown, Condition) or (
        is_sympy_object(shown) and isinstance(shown, sympy.core.relational.Relational)
    )


def _latex(value: Any) -> str:
    """LaTeX of a value, a condition or a side of one, as written or as sympy (sympy prints
    them all: an exact number through its sympy form, not as the text of an object)."""
    if isinstance(value, Condition):
        value = value.relation()
    elif isinstance(value, (ConditionSide, ExactNumber)):
        value = value.to_sympy()
    # a symbol may be named anything from Python: one that is not a plain name (letters,
    # digits, primes, one subscript) is typeset as escaped text, never as raw LaTeX
    odd = {
        s: rf"\text{{{latex_escape(s.name)}}}"
        for s in getattr(value, "free_symbols", ())
        if isinstance(s, sympy.Symbol) and not _PLAIN_SYMBOL.fullmatch(s.name)
    }
    return str(sympy.latex(value, symbol_names=odd) if odd else sympy.latex(value))


#: A symbol name sympy's LaTeX printer may print as it is.
_PLAIN_SYMBOL = re.compile(r"[A-Za-z]+[0-9]*'*(_[A-Za-z0-9]+)?")


def _condition_text(shown: Any, latex: bool = False) -> str:
    if isinstance(shown, tuple):
        a, op1, x, op2, b = shown
        if latex:
            ops = {"<": "<", "<=": r"\le"}
            return f"{_latex(a)} {ops[op1]} {_latex(x)} {ops[op2]} {_latex(b)}"
        return f"{a} {op1} {x} {op2} {b}"
    return _latex(shown) if latex else str(shown)


def assumption_lines(step: Step, latex: bool = False) -> list[str]:
    """One line for the verified conditions, one per conditional one.

    With ``latex``, finished LaTeX: conditions in ``$...$``, every other text (how a
    condition was checked, which may show the values of user-named symbols) escaped by
    :func:`dpaudit.latex.latex_escape`."""
    domain = step.theorem.domain
    if step.checks is None:
        if domain is None or not domain:
            return []
        listed = ", ".join(_condition_text(c, latex) for c in domain)
        return [
            f"assumptions: {'$' + listed + '$' if latex else listed} (not checked by this rule)"
        ]
    verified, open_ = [], []
    for shown, c in _chains(step.checks):
        text = _condition_text(shown, latex)
        text = f"${text}$" if latex else text
        if c.status == "verified":
            verified.append(f"{text} ({latex_escape(c.how) if latex else c.how})")
        else:
            open_.append(
                f"assumption {text} not verified: the bound is conditional on it "
                "(listed in the guarantee's assumptions)"
            )
    lines = ["assumptions: " + "; ".join(verified)] if verified else []
    return lines + open_


def _text_step(step: Step, prefix: str, last: bool, lines: list[str], top: bool = False) -> None:
    branch = "" if top else ("`- " if last else "|- ")
    lines.append(f"{prefix}{branch}{step.event}: {step.conclusion}")
    inner = prefix + ("" if top else ("   " if last else "|  "))
    lines.append(f"{inner}   by {step.theorem.name} [{step.theorem.citation}]")
    if step.formula:
        lines.append(f"{inner}   {step.formula}")
    lines.extend(f"{inner}   {line}" for line in assumption_lines(step))
    if step.alternatives:
        parts = [
            f"{a.label} {show(a.epsilon)}{' <- chosen' if a.chosen else ''}"
            for a in step.alternatives
        ]
        lines.append(f"{inner}   candidates compared: " + "; ".join(parts))
    if step.note:
        lines.append(f"{inner}   note: {step.note}")
    for i, p in enumerate(step.premises):
        _text_step(p, inner, i == len(step.premises) - 1, lines)


_tex = latex_escape  # the one LaTeX escaper (dpaudit.latex)


def render_latex(g: Derived) -> str:
    """The derivation as nested ``itemize`` lists, each step with its theorem's formula."""
    eps = _latex(g.epsilon)
    out = [
        r"\begin{itemize}",
        rf"\item \texttt{{{_tex(str(g.event))}}} is $({eps}, {_latex(g.delta)})$-DP"
        r" (upper bound)",
    ]
    _latex_step(g.derivation, out)
    if g.rejected:
        out.append(r"\item not applicable (domain conditions fail at these parameters):")
        out.append(r"\begin{itemize}")
        out += [rf"\item {_tex(str(r))}" for r in g.rejected]
        out.append(r"\end{itemize}")
    out.append(r"\end{itemize}")
    return "\n".join(out)


def _latex_step(step: Step, out: list[str]) -> None:
    out.append(r"\begin{itemize}")
    formula = f" ${step.theorem.latex}$" if step.theorem.latex else ""
    out.append(
        rf"\item \texttt{{{_tex(str(step.event))}}}: {_tex(step.conclusion)} by "
        rf"{_tex(step.theorem.name)} ({_tex(step.theorem.citation)}).{formula}"
    )
    if step.formula:
        out.append(rf"\\ \texttt{{{_tex(step.formula)}}}")
    for line in assumption_lines(step, latex=True):
        out.append(rf"\\ {line}")
    for p in step.premises:
        _latex_step(p, out)
    out.append(r"\end{itemize}")


def render_html(g: Derived) -> str:
    """The guarantee and its derivation as HTML (a notebook's ``_repr_html_``): the headline,
    then the derivation as nested lists, each step with its theorem, citation, formula with
    the numbers, domain checks and the candidates it compared."""
    esc = html.escape
    head = esc(_headline(g)).replace("\n", "<br>")
    parts = [f"<div class='dpaudit-guarantee'><p>{head}</p><ul>"]
    _html_step(g.derivation, parts)
    parts.append("</ul>")
    if g.rejected:
        parts.append("<p>not applicable (domain conditions fail at these parameters):</p><ul>")
        parts += [f"<li>{esc(str(r))}</li>" for r in g.rejected]
        parts.append("</ul>")
    parts.append("</div>")
    return "".join(parts)


def _html_step(step: Step, parts: list[str]) -> None:
    esc = html.escape
    t = step.theorem
    formula = rf" \({esc(t.latex)}\)" if t.latex else ""
    parts.append(
        f"<li><code>{esc(str(step.event))}</code>: {esc(step.conclusion)} by "
        f"<b>{esc(t.name)}</b> <i>[{esc(t.citation)}]</i>{formula}"
    )
    if step.formula:
        parts.append(f"<br><code>{esc(step.formula)}</code>")
    for line in assumption_lines(step):
        parts.append(f"<br>{esc(line)}")
    if step.alternatives:
        compared = "; ".join(
            f"{a.label} {show(a.epsilon)}{' (chosen)' if a.chosen else ''}"
            for a in step.alternatives
        )
        parts.append(f"<br>candidates compared: {esc(compared)}")
    if step.premises:
        parts.append("<ul>")
        for p in step.premises:
            _html_step(p, parts)
        parts.append("</ul>")
    parts.append("</li>")


def render_math(g: Derived) -> str:
    """The guarantee as one LaTeX math string (a notebook's ``_repr_latex_``, which MathJax
    renders): the event, epsilon and delta (rounded up when numeric)."""
    if g.symbolic or g.epsilon_upper is None or g.delta_upper is None:
        eps, dlt = _latex(g.epsilon), _latex(g.delta)
    else:  # the floats that leave the toolkit: rounded up
        eps, dlt = f"{g.epsilon_upper:.10g}", f"{g.delta_upper:.3g}"
    event = _tex(str(g.event))
    return (
        rf"$\texttt{{{event}}}\ \text{{is}}\ \left({eps},\ {dlt}\right)\text{{-DP}}"
        r"\ \text{(upper bound)}$"
    )
