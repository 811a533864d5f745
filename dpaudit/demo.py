"""``dpaudit demo``: a short, readable tour on built-in examples.

Sections: an event tree and its guarantee with derivation; a symbolic theorem; a run of
real primitives recorded in a ledger and compared with its plan; and, when the respective
parts are installed, a Monte Carlo audit and the source documents' learners end to end.
"""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Callable

import numpy as np
import sympy

from dpaudit.accountant import Accountant
from dpaudit.events import Composed, Exponential, Gaussian, Laplace, SelfComposed

#: Optional sections contributed by other modules: (title, module, function name).
OPTIONAL_SECTIONS = [
    ("A learner of Lecture 4 / Bun and Fang, end to end", "mechanisms.exponential_learner",
     "demo_section"),
    ("A large-margin / private-prediction learner, end to end", "mechanisms.halfspaces",
     "demo_section"),
]


def _rule(title: str) -> str:
    return f"\n== {title} " + "=" * max(0, 74 - len(title))


def section_event_tree() -> str:
    """An event tree, its guarantee and derivation."""
    tree = Composed([SelfComposed(Laplace(10), 50), SelfComposed(Gaussian(4), 20),
                     Exponential("0.5")])
    g = Accountant().guarantee(tree, delta="1e-6")
    return "\n".join([
        "An algorithm is described as an event tree: 50 Laplace(10) counts, 20 Gaussian(4)",
        "means, and one exponential-mechanism selection with epsilon 0.5.",
        "",
        g.text(),
    ])


def section_symbolic() -> str:
    """The same accountant on a symbolic tree gives a theorem."""
    b, k = sympy.symbols("b k", positive=True)
    g = Accountant().guarantee(SelfComposed(Laplace(b), k))
    return "\n".join([
        "Parameters may be symbols: k runs of Laplace noise of scale b give a formula.",
        "",
        g.text(),
    ])


def section_ledger() -> str:
    """Real primitives record what they spend; compare with the declared plan."""
    from mechanisms.ledger import Ledger
    from mechanisms.primitives import ExponentialMechanism, LaplaceMechanism

    rng = np.random.default_rng(2026)
    counts = np.array([40.0, 55.0, 31.0])
    plan = Composed([SelfComposed(Laplace(10), 3), Exponential("0.5")])
    with Ledger() as ledger:
        noisy = LaplaceMechanism(10).release(counts, rng)
        winner = ExponentialMechanism("0.5").select(counts, rng)
    # the vector release is one Laplace run on an L1-sensitivity-1 histogram; the plan
    # declared three scalar runs, so the run spends less than planned
    spent, planned = ledger.check_within(plan)
    return "\n".join([
        f"noisy counts {np.round(noisy, 2).tolist()}, exponential mechanism chose index {winner}",
        f"ledger: {ledger.event()}",
        f"spent epsilon <= {spent:.6g}; the plan {plan} declares {planned:.6g}: within plan",
    ])


def section_audit() -> str:
    """The auditor sandwiches the truth: a correct and a broken Laplace count."""
    from dpaudit.audit import audit
    from mechanisms.broken import BrokenLaplaceTooLittleNoise
    from mechanisms.catalogue import LaplaceCount

    lines = ["The auditor runs the real code on neighbouring datasets, picks an output event on a",
             "quarter of the samples and certifies it on the other, fresh ones (Clopper-Pearson).",
             ""]
    for mechanism in (LaplaceCount(1.0), BrokenLaplaceTooLittleNoise(1.0)):
        result = audit(mechanism, pairs=mechanism.pairs, epsilon=mechanism.epsilon,
                       samples=200_000, seed=2026, progress=False)
        lines.append(str(result))
        lines.append("")
    return "\n".join(lines).rstrip()


def run_demo(include_optional: bool = True) -> str:
    """The whole tour as text."""
    parts: list[str] = ["dpaudit demo: formal privacy accounting and auditing"]
    builtin: list[tuple[str, Callable[[], str]]] = [
        ("An event tree and its guarantee", section_event_tree),
        ("A symbolic guarantee", section_symbolic),
        ("A run recorded in a ledger", section_ledger),
    ]
    if include_optional:
        builtin.append(("A Monte Carlo audit: a correct and a broken mechanism", section_audit))
    for title, fn in builtin:
        parts.append(_rule(title))
        parts.append(fn())
    if include_optional:
        for title, module_name, fn_name in OPTIONAL_SECTIONS:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as err:
                if err.name == module_name:
                    continue
                raise
            fn = getattr(module, fn_name, None)
            if fn is None:
                continue
            parts.append(_rule(title))
            parts.append(textwrap.dedent(fn()).strip())
    return "\n".join(parts)
