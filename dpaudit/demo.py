"""``dpaudit demo``: a short, readable tour.

dpaudit's own sections account an event tree (with its derivation) and derive a symbolic
guarantee.  The packages built on dpaudit add the rest -- runs of real primitives recorded in a
ledger, Monte Carlo audits, learners end to end -- with :func:`register_section`, from a
``register()`` function they declare as an entry point of the group ``dpaudit.demos`` (see
:mod:`dpaudit.plugins`; this repository's ``mechanisms`` package does, in
``mechanisms/demo.py``).
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable

import sympy

from dpaudit.accountant import Accountant
from dpaudit.events import Composed, Exponential, Gaussian, Laplace, SelfComposed
from dpaudit.plugins import GROUPS, load_group, raise_on_errors

__all__ = ["SECTIONS", "Section", "load_sections", "register_section", "run_demo"]


@dataclasses.dataclass(frozen=True)
class Section:
    """One section of the tour.

    Attributes:
        title: its heading.
        run: returns the section's text (called when the tour is printed).
        quick: shown by ``dpaudit demo --quick`` too (cheap: no audit, no training).
    """

    title: str
    run: Callable[[], str]
    quick: bool = False


#: The sections registered by plugins, by title, in registration order.
SECTIONS: dict[str, Section] = {}


def register_section(title: str, run: Callable[[], str], *, quick: bool = False) -> Section:
    """Add a section to the tour after dpaudit's own (re-registering a title replaces it).

    Args:
        title: the heading.
        run: a zero-argument callable returning the section's text.
        quick: also shown by ``dpaudit demo --quick`` (keep such sections under a second).

    Returns:
        The :class:`Section`.

    Raises:
        ValueError: for an empty title or a ``run`` that is not callable.
    """
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"register_section: title must be a non-empty string, got {title!r}")
    if not callable(run):
        raise ValueError(f"register_section: run must be callable, got {run!r}")
    section = Section(title, run, bool(quick))
    SECTIONS[title] = section
    return section


def load_sections() -> list[Section]:
    """Call every entry point of the group ``dpaudit.demos`` (each registers its sections).

    Returns:
        Every registered section, in registration order.

    Raises:
        dpaudit.plugins.PluginError: naming every plugin that failed to load (one line each).
    """
    raise_on_errors(load_group(GROUPS["demos"]))
    return list(SECTIONS.values())


def _rule(title: str) -> str:
    return f"\n== {title} " + "=" * max(0, 74 - len(title))


def section_event_tree() -> str:
    """An event tree, its guarantee and derivation."""
    tree = Composed(
        [SelfComposed(Laplace(10), 50), SelfComposed(Gaussian(4), 20), Exponential("0.5")]
    )
    g = Accountant().guarantee(tree, delta="1e-6")
    return "\n".join(
        [
            "An algorithm is described as an event tree: 50 Laplace(10) counts, 20 Gaussian(4)",
            "means, and one exponential-mechanism selection with epsilon 0.5.",
            "",
            g.text(),
        ]
    )


def section_symbolic() -> str:
    """The same accountant on a symbolic tree gives a theorem."""
    b, k = sympy.symbols("b k", positive=True)
    g = Accountant().guarantee(SelfComposed(Laplace(b), k))
    return "\n".join(
        [
            "Parameters may be symbols: k runs of Laplace noise of scale b give a formula.",
            "",
            g.text(),
        ]
    )


def run_demo(include_optional: bool = True) -> str:
    """The whole tour as text.

    Args:
        include_optional: also the plugins' sections that are not marked ``quick`` (audits,
            learners); False is ``dpaudit demo --quick``.

    Returns:
        The text.

    Raises:
        dpaudit.plugins.PluginError: naming every demo plugin that failed to load.
    """
    sections = [
        Section("An event tree and its guarantee", section_event_tree, quick=True),
        Section("A symbolic guarantee", section_symbolic, quick=True),
        *load_sections(),
    ]
    parts: list[str] = ["dpaudit demo: formal privacy accounting and auditing"]
    for section in sections:
        if section.quick or include_optional:
            parts.append(_rule(section.title))
            parts.append(textwrap.dedent(section.run()).strip())
    return "\n".join(parts)
