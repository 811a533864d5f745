"""Every candidate theorem at every node of a derivation, not only the winner.

The accountant applies every theorem whose assumptions hold at every node and keeps the best
statement of each kind (:attr:`~dpaudit.accountant.Guarantee.considered`); at the top it
compares the candidates for the requested delta and chooses the smallest epsilon.  This view
lists them all, each with its theorem's formula (the card's ``bound``), the numbers it was
applied at, what it concluded and its citation, marked:

* ``chosen`` -- on the chosen derivation;
* ``kept`` -- kept for the parent (the best of its kind there) but not on the chosen path;
* ``dominated`` -- a statement of the same kind at the same node was better;
* ``beaten`` -- a candidate for the whole event with a larger epsilon than the chosen one.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from dpaudit.accountant import Guarantee
from dpaudit.accountant.statements import Step
from dpaudit.events import Event
from dpaudit.numeric import EvaluationError, float_up
from dpaudit.teaching.formulas import card_formula, card_latex, value_text
from dpaudit.teaching.render import latex_escape

__all__ = ["MARKS", "Entry", "Explanation", "explain_candidates", "given_values"]

#: The one-character marks of the text view, by status.
MARKS = {"chosen": "*", "kept": "+", "dominated": "-", "beaten": "-", "in the minimum": "*"}


@dataclasses.dataclass(frozen=True)
class Entry:
    """One candidate at one node."""

    theorem: str
    citation: str
    conclusion: str
    formula: str
    latex: str
    values: dict[str, str]
    here: str
    status: str
    epsilon: float | None = None
    epsilon_exact: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``values`` as :func:`~dpaudit.teaching.formulas.values_json`)."""
        out = dataclasses.asdict(self)
        out["values"] = [{"symbol": k, "value": v} for k, v in self.values.items()]
        return out


@dataclasses.dataclass(frozen=True)
class Explanation:
    """The candidates at every node of a guarantee's derivation.

    Attributes:
        guarantee: the guarantee explained.
        nodes: (event text, entries) per node, children before parents.
        top: the candidates for the whole event at the guarantee's delta.
    """

    guarantee: Guarantee
    nodes: tuple[tuple[str, tuple[Entry, ...]], ...]
    top: tuple[Entry, ...]

    def text(self) -> str:
        """The candidates as indented text."""
        lines = [
            "Every candidate at every node (* on the chosen derivation; + kept for the parent "
            "but not used; - dominated at its node, or beaten at the top):"
        ]
        for n, (event, entries) in enumerate(self.nodes, 1):
            lines += ["", f"[{n}] {event}"]
            for e in entries:
                lines += _entry_lines(e)
        lines += ["", f"[{len(self.nodes) + 1}] the whole event at delta = {self._delta()}"]
        for e in self.top:
            lines += _entry_lines(e)
        return "\n".join(lines)

    def _delta(self) -> str:
        d = self.guarantee.delta_upper
        return value_text(self.guarantee.delta) if d is None else f"{d:.6g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``nodes`` (event, candidates) and ``candidates`` (the top)."""
        return {
            "nodes": [
                {"event": event, "candidates": [e.to_dict() for e in entries]}
                for event, entries in self.nodes
            ],
            "candidates": [e.to_dict() for e in self.top],
        }

    def latex(self) -> str:
        """The candidates as nested LaTeX ``itemize`` lists (text mode)."""
        out = [r"\begin{itemize}"]
        groups = [*self.nodes, (f"the whole event at delta = {self._delta()}", self.top)]
        for event, entries in groups:
            out.append(rf"\item \texttt{{{latex_escape(event)}}}")
            out.append(r"\begin{itemize}")
            for e in entries:
                formula = f" ${e.latex}$" if e.latex else ""
                mark = {"*": r"$\star$", "+": "$+$"}.get(MARKS[e.status], "$-$")
                out.append(
                    rf"\item[{mark}] "
                    rf"\textbf{{{latex_escape(e.theorem)}}} ({latex_escape(e.status)}; "
                    rf"{latex_escape(e.citation)}):{formula}"
                )
                if e.here:
                    out.append(rf"\\ \texttt{{{latex_escape(e.here)}}}")
                out.append(rf"\\ concludes \texttt{{{latex_escape(e.conclusion)}}}")
            out.append(r"\end{itemize}")
        out.append(r"\end{itemize}")
        return "\n".join(out)

    def _repr_latex_(self) -> str:
        return self.guarantee._repr_latex_()

    def _repr_html_(self) -> str:
        esc = html.escape
        parts = [f"<div class='dpaudit-explanation'><p>{esc(str(self.guarantee))}</p><ol>"]
        groups = [*self.nodes, (f"the whole event at delta = {self._delta()}", self.top)]
        for event, entries in groups:
            parts.append(f"<li><code>{esc(event)}</code><ul>")
            for e in entries:
                strong = e.status in ("chosen", "in the minimum")
                name = f"<b>{esc(e.theorem)}</b>" if strong else esc(e.theorem)
                formula = rf" \({esc(e.latex)}\)" if e.latex else ""
                parts.append(
                    f"<li>[{esc(e.status)}] {name}: {esc(e.conclusion)}{formula}"
                    f"<br><code>{esc(e.here)}</code><br><i>{esc(e.citation)}</i></li>"
                )
            parts.append("</ul></li>")
        parts.append("</ol></div>")
        return "".join(parts)


def _entry_lines(e: Entry) -> list[str]:
    head = f"  {MARKS[e.status]} {e.theorem} [{e.status}]: {e.conclusion}"
    if isinstance(e.epsilon, float):
        head += f"  (epsilon {e.epsilon:.10g}, rounded up)"
    out = [head, f"      formula: {e.formula}"]
    if e.values:
        out.append("      at:      " + ", ".join(f"{k} = {v}" for k, v in e.values.items()))
    if e.here:
        out.append(f"      here:    {e.here}")
    out.append(f"      source:  {e.citation}")
    return out


def _entry(step: Step, status: str, epsilon: Any = None) -> Entry:
    t = step.theorem
    params = getattr(step.checks, "params", {})
    value: float | None = None
    if epsilon is not None:
        try:
            value = float_up(epsilon)
        except (EvaluationError, ValueError, TypeError):  # symbolic: the exact text only
            value = None
    return Entry(
        theorem=t.name,
        citation=t.citation,
        conclusion=step.conclusion,
        formula=card_formula(t),
        latex=card_latex(t),
        values={k: value_text(v) for k, v in params.items()},
        here=step.formula,
        status=status,
        epsilon=value,
        epsilon_exact=None if epsilon is None else str(epsilon),
    )


def explain_candidates(g: Guarantee) -> Explanation:
    """Every candidate at every node of ``g``'s derivation, marked (see the module).

    Args:
        g: a guarantee from :meth:`dpaudit.accountant.Accountant.guarantee`.

    Returns:
        An :class:`Explanation`.
    """
    on_path = {id(s) for _, s in g.derivation.walk()}
    nodes = []
    for node in g.considered:
        entries = tuple(
            _entry(step, "chosen" if id(step) in on_path else ("kept" if kept else "dominated"))
            for step, kept in zip(node.found, node.kept, strict=True)
        )
        nodes.append((str(node.event), entries))
    numeric = not g.symbolic
    top = tuple(
        _entry(
            c.step,
            ("chosen" if id(c.step) in on_path else "beaten") if numeric else "in the minimum",
            c.epsilon,
        )
        for c in g.candidates
    )
    return Explanation(g, tuple(nodes), top)


def given_values(event: Event, delta: Any = None) -> list[tuple[str, str]]:
    """The numbers the user gave: every numeric parameter written in the event expression
    (fields at their defaults, such as a sensitivity of 1, are named as defaults) and the
    target delta, as ``(where, value)`` pairs: ``("count of SelfComposed", "100")``.

    Args:
        event: the event as given.
        delta: the target delta (None: the natural guarantee, not listed).

    Returns:
        The pairs, outermost node first.
    """
    import dataclasses as dc

    from dpaudit.exact_numbers import is_sympy_object

    out: list[tuple[str, str]] = []
    stack = [event]
    while stack:
        node = stack.pop(0)
        for f in dc.fields(node):
            value = getattr(node, f.name)
            if f.metadata.get("range") is None or (is_sympy_object(value) and value.free_symbols):
                continue
            default = f.default
            is_default = default is not dc.MISSING and str(value) == str(default)
            where = f"{f.name} of {node.kind}" + (" (default)" if is_default else "")
            out.append((where, value_text(value)))
        stack.extend(node.children())
    if delta is not None:
        out.append(("delta (the target)", value_text(delta)))
    return out
