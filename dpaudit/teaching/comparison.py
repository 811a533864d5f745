"""k-fold composition under every accounting method, with the theorem behind each number.

    from dpaudit.teaching import compare_methods
    c = compare_methods("Laplace(1)", [1, 10, 100], delta=1e-6)
    print(c.text())        # table, then each method's theorem, formula and numbers, and notes
    c                      # in a notebook: the same as HTML, with the plot inline

Each method is a candidate of the accountant for ``SelfComposed(MECH, k)`` at ``delta``; its
row carries the theorem that produced it (name, citation, assumptions), the card's formula
(text and LaTeX, the card's one ``bound``) and that formula with the numbers of one k
substituted and evaluated (rounded up).  The notes (:mod:`dpaudit.teaching.orderings`) say
which method is below which, at which k, and why -- computed from the numbers in the table.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from typing import Any

from dpaudit.accountant import Accountant, Guarantee
from dpaudit.accountant.statements import Candidate
from dpaudit.events import Event, SelfComposed
from dpaudit.numeric import EvaluationError, float_up
from dpaudit.parse import parse_event, parse_number
from dpaudit.teaching.absences import Absence, absent_methods
from dpaudit.teaching.formulas import Instance, card_formula, card_latex, instantiate, value_text
from dpaudit.teaching.orderings import ordering_notes
from dpaudit.teaching.render import latex_escape, png_data_uri
from dpaudit.theorems.base import Theorem

__all__ = ["MAX_K", "MAX_K_VALUES", "Comparison", "Method", "compare_methods"]

#: Most k values in one comparison, and the largest k.
MAX_K_VALUES = 100
MAX_K = 10**12


@dataclasses.dataclass(frozen=True)
class Method:
    """One accounting method's column.

    Attributes:
        label: the column's name (the theorem that concluded the candidate).
        theorem: that theorem's card.
        epsilons: epsilon by k (upper bounds, rounded up; inf where no finite bound).
        instance: the card's formula at the reference k's numbers (None for a card with no
            symbolic bound, such as the PLD).
        how: the accountant's own account of the computation at the reference k.
        chain: the theorems of the derivation below it (premises first), at the reference k.
    """

    label: str
    theorem: Theorem
    epsilons: dict[int, float]
    instance: Instance | None
    how: str
    chain: tuple[str, ...]
    given: frozenset[str] = frozenset()

    def values_text(self) -> str:
        """The values put into the formula, those the user gave marked ``(given)``."""
        if self.instance is None:
            return ""
        return ", ".join(
            f"{k} = {value_text(v)}" + (" (given)" if k in self.given else "")
            for k, v in self.instance.values.items()
        )

    def to_dict(self, k: int) -> dict[str, Any]:
        """JSON-ready: the fields of ``compare --json`` (values at the reference ``k``)."""
        out: dict[str, Any] = {
            "method": self.label,
            "theorem": self.theorem.name,
            "citation": self.theorem.citation,
            "assumptions": self.theorem.assumptions,
            "formula": card_formula(self.theorem),
            "latex": card_latex(self.theorem),
            "k": k,
            "values": [],
            "substituted": [],
            "results": {},
            "accountant": self.how,
            "derivation": list(self.chain),
            "epsilon": {str(kk): v for kk, v in sorted(self.epsilons.items())},
        }
        if self.instance is not None:
            inst = self.instance.to_dict()
            out["values"] = [{**v, "given": v["symbol"] in self.given} for v in inst["values"]]
            out["substituted"] = inst["substituted"]
            out["results"] = inst["results"]
        return out


@dataclasses.dataclass(frozen=True)
class Comparison:
    """epsilon of ``SelfComposed(mechanism, k)`` at ``delta`` under every method.

    Attributes:
        mechanism: the event composed.
        delta: the target delta (as given).
        ks: the k values, in the order given.
        k_ref: the k whose numbers are substituted into the formulas.
        methods: one :class:`Method` per accounting method, by label order.
        notes: generated notes on the orderings between methods (see
            :func:`~dpaudit.teaching.orderings.ordering_notes`).
        absent: the methods a reader expects that have no column, each with the reason read
            from the accountant at the reference k (:mod:`dpaudit.teaching.absences`).
    """

    mechanism: Event
    delta: str
    ks: tuple[int, ...]
    k_ref: int
    methods: tuple[Method, ...]
    notes: tuple[str, ...]
    absent: tuple[Absence, ...] = ()

    def table(self) -> dict[str, dict[int, float]]:
        """epsilon (rounded up) by method label and k."""
        return {m.label: dict(m.epsilons) for m in self.methods}

    def to_dict(self) -> dict[str, Any]:
        """The ``dpaudit compare --json`` object."""
        return {
            "mechanism": self.mechanism.expression(),
            "delta": self.delta,
            "k": list(self.ks),
            "k_substituted": self.k_ref,
            "kind": "epsilon: upper bound, rounded up",
            "epsilon": {
                m.label: {str(k): v for k, v in sorted(m.epsilons.items())} for m in self.methods
            },
            "methods": [m.to_dict(self.k_ref) for m in self.methods],
            "notes": list(self.notes),
            "absent": [{"method": a.method, "reason": a.reason} for a in self.absent],
        }

    def text(self) -> str:
        """The table, each method's theorem and formula at ``k_ref``, and the notes."""
        width = max([len(m.label) for m in self.methods] + [10])
        lines = [
            f"epsilon (upper bound, rounded up) of SelfComposed({self.mechanism}, k) at "
            f"delta = {self.delta}",
            f"{'method':<{width}} " + " ".join(f"{k:>10}" for k in self.ks),
        ]
        for m in self.methods:
            cells = [
                f"{m.epsilons[k]:>10.4g}" if k in m.epsilons else f"{'-':>10}" for k in self.ks
            ]
            lines.append(f"{m.label:<{width}} " + " ".join(cells))
        lines += ["", f"Where each column comes from (numbers substituted at k = {self.k_ref}):"]
        for m in self.methods:
            t = m.theorem
            lines += ["", f"{m.label}: {t.citation}"]
            lines.append(f"   assumes:   {t.assumptions}")
            lines.append(f"   formula:   {card_formula(t)}")
            if m.instance is not None:
                values = m.values_text()
                if values:
                    lines.append(f"   with:      {values}")
                lines += [f"   gives:     {line}" for line in m.instance.lines()]
                if m.instance.missing:
                    lines.append(
                        f"   chosen by the method: {', '.join(m.instance.missing)} "
                        "(see the accountant's line)"
                    )
            lines.append(f"   accountant: {m.how}")
            if m.chain:
                lines.append(f"   from:      {' <- '.join(m.chain)}")
            if self.k_ref in m.epsilons:
                lines.append(f"   epsilon:   {m.epsilons[self.k_ref]:.10g} (rounded up)")
        if self.absent:
            lines += [
                "",
                f"Methods without a column (why, from the accountant at k = {self.k_ref}):",
            ]
            lines += [f"  - {a}" for a in self.absent]
        if self.notes:
            lines += ["", "Why the methods order as they do (from the numbers above):"]
            lines += [f"  - {n}" for n in self.notes]
        return "\n".join(lines)

    def latex(self) -> str:
        """The comparison as a LaTeX fragment: the table (``tabular``), each method's theorem,
        formula and formula at ``k_ref`` with its value, the methods without a column and the
        notes (``dpaudit compare --latex``)."""
        esc = latex_escape
        cols = "l" + "r" * len(self.ks)
        lines = [
            rf"% epsilon (upper bound, rounded up) of SelfComposed({self.mechanism}, k) "
            rf"at delta = {self.delta}",
            rf"\begin{{tabular}}{{{cols}}}",
            "method & " + " & ".join(f"$k = {k}$" for k in self.ks) + r" \\ \hline",
        ]
        for m in self.methods:
            cells = [f"{m.epsilons[k]:.4g}" if k in m.epsilons else "--" for k in self.ks]
            lines.append(f"{esc(m.label)} & " + " & ".join(cells) + r" \\")
        lines += [r"\end{tabular}", "", r"\begin{description}"]
        for m in self.methods:
            t = m.theorem
            lines.append(rf"  \item[{esc(m.label)}] {esc(t.citation)}.")
            if card_latex(t):
                lines.append(rf"    Formula: ${card_latex(t)}$.")
            if m.instance is not None:
                if m.values_text():
                    lines.append(rf"    With {esc(m.values_text())}.")
                for name, tex in m.instance.latex.items():
                    r = m.instance.results.get(name)
                    value = "" if r is None else rf" = {r:.10g}"
                    lines.append(rf"    At $k = {self.k_ref}$: ${_tex_name(name)} = {tex}{value}$.")
            if self.k_ref in m.epsilons:
                lines.append(rf"    $\varepsilon \le {m.epsilons[self.k_ref]:.10g}$ (rounded up).")
        lines.append(r"\end{description}")
        if self.absent:
            lines += ["", r"Methods without a column:", r"\begin{itemize}"]
            lines += [rf"  \item {esc(a.method)}: {esc(a.reason)}" for a in self.absent]
            lines.append(r"\end{itemize}")
        if self.notes:
            lines += ["", r"Why the methods order as they do:", r"\begin{itemize}"]
            lines += [rf"  \item {esc(n)}" for n in self.notes]
            lines.append(r"\end{itemize}")
        return "\n".join(lines)

    def plot(self, path: str | None = None, ax: Any = None) -> Any:
        """Plot epsilon against k, one line per method (log-log).

        Args:
            path: write a PNG here (optional).
            ax: a matplotlib axes to draw on (default: a new figure).

        Returns:
            The matplotlib figure.
        """
        if ax is None:
            # a Figure outside pyplot: no backend is switched (a notebook keeps its own)
            from matplotlib.figure import Figure

            fig = Figure(figsize=(7, 4.5))
            ax = fig.add_subplot()
        else:
            fig = ax.figure
        for m in self.methods:
            pts = sorted((k, v) for k, v in m.epsilons.items() if v != float("inf"))
            ax.plot([k for k, _ in pts], [v for _, v in pts], marker="o", label=m.label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("k (number of compositions)")
        ax.set_ylabel(f"epsilon at delta = {self.delta} (upper bound)")
        ax.set_title(f"k-fold composition of {self.mechanism}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(f"<th>k = {k}</th>" for k in self.ks)
        rows = []
        for m in self.methods:
            cells = "".join(
                f"<td>{m.epsilons[k]:.4g}</td>" if k in m.epsilons else "<td>-</td>"
                for k in self.ks
            )
            rows.append(f"<tr><th>{e(m.label)}</th>{cells}</tr>")
        details = []
        for m in self.methods:
            t = m.theorem
            parts = [
                f"<dt>{e(m.label)}</dt><dd><i>{e(t.citation)}</i><br>assumes: {e(t.assumptions)}"
            ]
            if card_latex(t):
                parts.append(rf"<br>formula: \({e(card_latex(t))}\)")
            if m.instance is not None:
                for name, tex in m.instance.latex.items():
                    r = m.instance.results.get(name)
                    val = "" if r is None else f" = {r:.10g}"
                    parts.append(
                        rf"<br>at k = {self.k_ref}: \({e(_tex_name(name))} = {e(tex)}\){val}"
                    )
            parts.append(f"<br>accountant: <code>{e(m.how)}</code></dd>")
            details.append("".join(parts))
        notes = "".join(f"<li>{e(n)}</li>" for n in self.notes)
        img = png_data_uri(self.plot())
        return (
            f"<div class='dpaudit-comparison'><p>epsilon (upper bound, rounded up) of "
            f"<code>SelfComposed({e(str(self.mechanism))}, k)</code> at delta = "
            f"{e(self.delta)}</p><table><tr><th>method</th>{head}</tr>{''.join(rows)}</table>"
            f"<dl>{''.join(details)}</dl><p>Why the methods order as they do:</p>"
            f"<ul>{notes}</ul><img alt='epsilon against k' src='{img}'></div>"
        )

    def _repr_latex_(self) -> str:
        cols = "l" + "r" * len(self.ks)
        head = " & ".join(["\\text{method}", *[f"k={k}" for k in self.ks]])
        rows = []
        for m in self.methods:
            cells = [f"{m.epsilons[k]:.4g}" if k in m.epsilons else "-" for k in self.ks]
            rows.append(" & ".join([rf"\text{{{latex_escape(m.label)}}}", *cells]))
        body = r" \\ ".join(rows)
        return rf"$$\begin{{array}}{{{cols}}} {head} \\ \hline {body} \end{{array}}$$"


def _tex_name(name: str) -> str:
    return {"epsilon": r"\varepsilon", "delta": r"\delta", "rho": r"\rho", "tau": r"\tau"}.get(
        name, name
    )


def _chain(c: Candidate) -> tuple[str, ...]:
    names: list[str] = []
    for _, step in c.step.walk()[1:]:
        if step.theorem.name not in names:
            names.append(step.theorem.name)
    return tuple(names)


def _reference_k(ks: Sequence[int]) -> int:
    """The k whose numbers the formulas show: the largest listed k up to 100, else the
    smallest (the exact optimal-composition sum has k + 1 terms)."""
    small = [k for k in ks if k <= 100]
    return max(small) if small else min(ks)


def compare_methods(
    mechanism: Event | str, ks: Sequence[int], delta: Any = "1e-6", k_ref: int | None = None
) -> Comparison:
    """epsilon of ``SelfComposed(mechanism, k)`` for each k under every method.

    Args:
        mechanism: an event, or an event expression (the restricted parser reads it).
        ks: 1 to :data:`MAX_K_VALUES` integers in [1, :data:`MAX_K`].
        delta: the target delta (a number or its text).
        k_ref: the k whose numbers are substituted into the formulas (default: the largest
            listed k up to 100); must be one of ``ks``.

    Returns:
        A :class:`Comparison`.

    Raises:
        ValueError: for a malformed mechanism, k, k_ref or delta.
    """
    event = parse_event(mechanism) if isinstance(mechanism, str) else mechanism
    d = parse_number(delta) if isinstance(delta, str) else delta
    ks = list(ks)
    if not 1 <= len(ks) <= MAX_K_VALUES:
        raise ValueError(f"--k must list between 1 and {MAX_K_VALUES} values, got {len(ks)}")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise ValueError(f"k must be an integer in [1, {MAX_K:.0e}], got {k!r}")
    ref = _reference_k(ks) if k_ref is None else k_ref
    if ref not in ks:
        raise ValueError(f"k_ref must be one of the listed k values {ks[:10]}, got {ref!r}")
    columns: dict[str, dict[int, float]] = {}
    at_ref: dict[str, tuple[float, Candidate]] = {}
    g_ref: Guarantee | None = None
    for k in dict.fromkeys(ks):
        g = Accountant().guarantee(SelfComposed(event, k), d)
        if k == ref:
            g_ref = g
        for c in g.candidates:
            try:
                value = float_up(c.epsilon)
            except (EvaluationError, ValueError):
                continue
            column = columns.setdefault(c.label, {})
            column[k] = min(value, column.get(k, value))
            if k == ref and (c.label not in at_ref or value < at_ref[c.label][0]):
                at_ref[c.label] = (value, c)
    methods = []
    for label in sorted(columns):
        cand = at_ref.get(label)
        if cand is None:  # no finite value at the reference k: use the first k it has
            k0 = min(columns[label])
            g = Accountant().guarantee(SelfComposed(event, k0), d)
            cand = next((float("inf"), c) for c in g.candidates if c.label == label)
        step = cand[1].step
        params = getattr(step.checks, "params", {})
        instance = instantiate(step.theorem, params) if step.theorem.bound else None
        given = _given(instance, event, ref, d) if instance is not None else frozenset()
        methods.append(
            Method(
                label,
                step.theorem,
                columns[label],
                instance,
                step.formula,
                _chain(cand[1]),
                given,
            )
        )
    notes = ordering_notes(event, methods, [k for k in dict.fromkeys(ks)], str(delta))
    absent = () if g_ref is None else tuple(absent_methods(g_ref, set(columns)))
    return Comparison(event, str(delta), tuple(ks), ref, tuple(methods), tuple(notes), absent)


#: A card's symbol -> the event field it is when the user wrote it (a mechanism's parameter).
_FIELD_OF = {"sigma": "sigma", "Delta": "sensitivity", "b": "scale", "q": "rate"}


def _given(instance: Instance, event: Event, k: int, delta: Any) -> frozenset[str]:
    """The card's symbols whose values the user gave: k (the composition count), delta (the
    target), and a mechanism's own parameter (sigma, Delta, b, q) with the value written in
    the expression; the others were derived by an earlier step or chosen by the method."""
    fields: dict[str, set[Any]] = {}
    stack = [event]
    while stack:
        node = stack.pop()
        stack.extend(node.children())
        for name in _FIELD_OF.values():
            if hasattr(node, name):
                fields.setdefault(name, set()).add(getattr(node, name))
    out = set()
    for name, value in instance.values.items():
        if isinstance(value, (list, tuple)):
            continue
        user = (name == "k" and value == k) or (name in ("delta", "delta_g") and value == delta)
        written = name in _FIELD_OF and value in fields.get(_FIELD_OF[name], set())
        if user or written:
            out.add(name)
    return frozenset(out)
