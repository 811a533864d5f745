"""The sections this package adds to ``dpaudit demo`` (see :func:`dpaudit.demo.register_section`):
real primitives recorded in a ledger and compared with their plan; a Monte Carlo audit of a
correct and a broken mechanism; and two of the source documents' learners end to end.

dpaudit finds them through the entry point ``mechanisms`` of the group ``dpaudit.demos``
(``pyproject.toml``), which names :func:`register`.
"""

from __future__ import annotations

import numpy as np

from dpaudit.demo import register_section
from dpaudit.events import Composed, Exponential, Laplace, SelfComposed

__all__ = ["register", "section_audit", "section_ledger"]


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
    return "\n".join(
        [
            f"noisy counts {np.round(noisy, 2).tolist()}, "
            f"exponential mechanism chose index {winner}",
            f"ledger: {ledger.event()}",
            f"spent epsilon <= {spent:.6g}; the plan {plan} declares {planned:.6g}: within plan",
        ]
    )


def section_audit() -> str:
    """The auditor sandwiches the truth: a correct and a broken Laplace count."""
    from dpaudit.audit import audit
    from mechanisms.broken import BrokenLaplaceTooLittleNoise
    from mechanisms.catalogue import LaplaceCount

    lines = [
        "The auditor runs the real code on neighbouring datasets, picks an output event on a",
        "quarter of the samples and certifies it on the other, fresh ones (Clopper-Pearson).",
        "",
    ]
    for mechanism in (LaplaceCount(1.0), BrokenLaplaceTooLittleNoise(1.0)):
        result = audit(
            mechanism,
            pairs=mechanism.pairs,
            epsilon=mechanism.epsilon,
            samples=200_000,
            seed=2026,
            progress=False,
        )
        lines.append(str(result))
        lines.append("")
    return "\n".join(lines).rstrip()


def _exponential_learner() -> str:
    from mechanisms.exponential_learner import demo_section

    return demo_section()


def _halfspaces() -> str:
    from mechanisms.halfspaces import demo_section

    return demo_section()


def register() -> None:
    """Add this package's sections to the tour, in order (the entry point of the group
    ``dpaudit.demos``)."""
    register_section("A run recorded in a ledger", section_ledger, quick=True)
    register_section("A Monte Carlo audit: a correct and a broken mechanism", section_audit)
    register_section("A learner of Lecture 4 / Bun and Fang, end to end", _exponential_learner)
    register_section("A large-margin / private-prediction learner, end to end", _halfspaces)
