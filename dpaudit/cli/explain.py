"""``dpaudit explain EXPR|THEOREM [--latex|--json]``: a derivation step by step, or one theorem.

Each step names the theorem applied, states it (statement, assumptions, citation), shows
its formula with the numbers substituted, and lists the alternatives it beat.  Steps are
numbered from the leaves up, in the order a reader would prove them.  Then every candidate
theorem at every node, not only the winner, each with its formula, numbers and citation and
marked chosen, kept, dominated or beaten (:mod:`dpaudit.teaching.explanation`).

``dpaudit explain advanced-composition`` (a theorem card's name, any case: an argument
without parentheses) prints that card -- statement, assumptions, citation, formula -- and
its bound at documented example values, rounded up (:mod:`dpaudit.teaching.cards`).
"""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.accountant import Accountant, Guarantee, Step
from dpaudit.accountant.render import assumption_lines
from dpaudit.cli.exit_codes import dumps
from dpaudit.cli.numbers import exact_option
from dpaudit.events import Composed, SelfComposed
from dpaudit.latex import latex_escape
from dpaudit.parse import parse_event
from dpaudit.teaching.absences import Absence, absent_methods
from dpaudit.teaching.cards import UnknownTheoremError, card_names, explain_card
from dpaudit.teaching.explanation import explain_candidates, given_values


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``explain`` subcommand."""
    p = subparsers.add_parser(
        "explain",
        help="walk through the derivation of an event's guarantee step by step",
        description="Explain, step by step, how dpaudit derives the privacy guarantee of an "
        "event expression: each theorem, its statement, its formula with the "
        "numbers substituted, and the alternatives it beat.",
    )
    p.add_argument(
        "expression",
        help="an event expression, e.g. 'SelfComposed(Laplace(10), 100)', or a theorem's name, "
        "e.g. advanced-composition (its statement, assumptions, citation and a worked example)",
    )
    p.add_argument("--delta", help="target delta in [0, 1) (default: the natural guarantee)")
    p.add_argument("--symbols", default="", help="comma-separated names allowed as symbols")
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of text")
    p.add_argument(
        "--json",
        action="store_true",
        help="print a JSON object: the guarantee (as `account --json`) and the steps",
    )
    p.set_defaults(func=run)


def _ordered(step: Step) -> list[Step]:
    """Premises before conclusions (post-order), each step once."""
    out: list[Step] = []

    def visit(s: Step) -> None:
        for p in s.premises:
            visit(p)
        if s not in out:
            out.append(s)

    visit(step)
    return out


def explain_text(g: Guarantee) -> str:
    """The derivation as numbered text steps (the numbers given first, and at the end the
    expected methods that gave no candidate, with why)."""
    given = ", ".join(f"{where} = {v}" for where, v in given_values(g.event, g.delta))
    lines = [f"Why {g}:", f"Given: {given}", ""]
    for n, s in enumerate(_ordered(g.derivation), 1):
        t = s.theorem
        lines.append(f"Step {n}. {t.name} applied to {s.event}")
        lines.append(f"   theorem:     {t.statement}")
        if t.assumptions:
            lines.append(f"   assumes:     {t.assumptions}")
        lines.append(f"   source:      {t.citation}")
        if s.formula:
            lines.append(f"   here:        {s.formula}")
        lines.extend(
            f"   domain:      {line.removeprefix('assumptions: ')}" for line in assumption_lines(s)
        )
        lines.append(f"   concludes:   {s.conclusion}")
        if s.alternatives:
            beaten = [str(a) for a in s.alternatives if not a.chosen]
            if beaten:
                lines.append(f"   beat:        {'; '.join(beaten)}")
        if s.note:
            lines.append(f"   note:        {s.note}")
        lines.append("")
    if g.rejected:
        lines.append("Not applicable (outside the theorem's domain):")
        lines.extend(f"   - {r}" for r in g.rejected)
        lines.append("")
    absent = _absent(g)
    if absent:
        lines.append("Methods with no candidate here (why):")
        lines.extend(f"   - {a}" for a in absent)
        lines.append("")
    lines.append(f"Result: {g}  (epsilon is an upper bound, rounded up)")
    return "\n".join(lines)


def _absent(g: Guarantee) -> list[Absence]:
    """The expected methods without a candidate for a composition (none for other events)."""
    if not isinstance(g.event, (SelfComposed, Composed)):
        return []
    return absent_methods(g, {c.label for c in g.candidates})


def explain_dict(g: Guarantee) -> dict[str, Any]:
    """The derivation as a JSON-ready object: ``{"guarantee": ..., "steps": [...]}``.

    ``guarantee`` is :meth:`Guarantee.to_dict` (the object ``dpaudit account --json``
    prints); each step names its theorem, citation, event, formula, conclusion and the
    alternatives it beat, in the order of :func:`explain_text`; ``nodes`` and ``candidates``
    list every candidate at every node and at the top, marked chosen / kept / dominated /
    beaten (:func:`~dpaudit.teaching.explanation.explain_candidates`).
    """
    steps = []
    for n, s in enumerate(_ordered(g.derivation), 1):
        t = s.theorem
        steps.append(
            {
                "step": n,
                "theorem": t.name,
                "statement": str(t.statement),
                "assumptions": str(t.assumptions) if t.assumptions else None,
                "citation": t.citation,
                "event": str(s.event),
                "formula": s.formula or None,
                "domain": [line.removeprefix("assumptions: ") for line in assumption_lines(s)],
                "concludes": str(s.conclusion),
                "beat": [str(a) for a in s.alternatives if not a.chosen],
                "note": s.note or None,
            }
        )
    return {
        "guarantee": g.to_dict(),
        "given": [{"where": w, "value": v} for w, v in given_values(g.event, g.delta)],
        "steps": steps,
        "not_applicable": [str(r) for r in g.rejected],
        "absent": [{"method": a.method, "reason": a.reason} for a in _absent(g)],
        **explain_candidates(g).to_dict(),
    }


_tex = latex_escape  # the one LaTeX escaper (dpaudit.latex)


def explain_latex(g: Guarantee) -> str:
    """The derivation as a LaTeX enumerate environment."""
    out = [r"\begin{enumerate}"]
    for s in _ordered(g.derivation):
        t = s.theorem
        out.append(
            rf"  \item \textbf{{{_tex(t.name)}}} ({_tex(t.citation)}) applied to "
            rf"\texttt{{{_tex(str(s.event))}}}."
        )
        if t.latex:
            out.append(rf"    Bound: ${t.latex}$.")
        if s.formula:
            out.append(rf"    Here: \texttt{{{_tex(s.formula)}}}.")
        for line in assumption_lines(s, latex=True):
            out.append(rf"    Domain: {line.removeprefix('assumptions: ')}.")
        out.append(rf"    Concludes: \texttt{{{_tex(s.conclusion)}}}.")
        beaten = [str(a) for a in s.alternatives if not a.chosen]
        if beaten:
            out.append(rf"    Beat: \texttt{{{_tex('; '.join(beaten))}}}.")
    out.append(r"\end{enumerate}")
    absent = _absent(g)
    if absent:
        out.append(r"Methods with no candidate here:")
        out.append(r"\begin{itemize}")
        out += [rf"  \item {_tex(a.method)}: {_tex(a.reason)}" for a in absent]
        out.append(r"\end{itemize}")
    if g.rejected:
        out.append(r"Not applicable (outside the theorem's domain):")
        out.append(r"\begin{itemize}")
        out += [rf"  \item {_tex(str(r))}" for r in g.rejected]
        out.append(r"\end{itemize}")
    return "\n".join(out)


def _run_card(args: argparse.Namespace) -> int:
    try:
        view = explain_card(args.expression)
    except UnknownTheoremError:
        # the one-line error (stderr) is cut at 1000 characters: outside --json the whole
        # list goes to stdout
        if not args.json:
            print("theorem cards (name: title):")
            for name, title in card_names():
                print(f"  {name}: {title}")
        raise
    if args.json:
        print(dumps(view.to_dict(), indent=2))
    else:
        print(view.latex() if args.latex else view.text())
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``dpaudit explain`` (a theorem card's name: that card and a worked example)."""
    if "(" not in args.expression:
        return _run_card(args)
    symbols = [s.strip() for s in args.symbols.split(",") if s.strip()]
    event = parse_event(args.expression, symbols=symbols)
    delta = exact_option("--delta", args.delta, 0.0, 1.0)
    g = Accountant().guarantee(event, delta)
    every = explain_candidates(g)
    if args.json:
        print(dumps(explain_dict(g), indent=2))
    elif args.latex:
        print(explain_latex(g) + "\n\n" + r"Every candidate at every node:" + "\n" + every.latex())
    else:
        print(explain_text(g) + "\n\n" + every.text())
    return 0
