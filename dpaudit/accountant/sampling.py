"""Amplification by subsampling on any child with an (epsilon, delta) guarantee.

Importing this module adds two rules to :data:`~dpaudit.accountant.rules.RULES`, both
instances of one pattern ("sample a gamma fraction, then run an (eps, delta)-DP mechanism"):

* Poisson subsampling at rate q (add/remove): Balle, Barthe, Gaboardi 2018 (NeurIPS),
  Theorem 8, gamma = q;
* sampling m of n records without replacement (replace-one): the same paper, Theorem 9,
  gamma = m/n.

Both give (log(1 + gamma (e^eps - 1)), gamma delta).  A pure child gives a pure statement;
otherwise the child's delta is taken at each share of :data:`BUDGET_SHARES` of budget /
gamma.  The privacy loss distributions and RDP curves of subsampled leaves (tighter where
they exist) are in :mod:`~dpaudit.accountant.tight`; the accountant keeps the tightest.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpaudit import events as ev
from dpaudit.accountant.domains import admit
from dpaudit.accountant.rules import Children, best_candidate, of_currency, register_rule
from dpaudit.accountant.statements import Approx, Pure, Statement, Step, show
from dpaudit.deferred_imports import sympy
from dpaudit.events.base import Event
from dpaudit.exact_numbers import rational
from dpaudit.numeric import functions as fn
from dpaudit.theorems import amplification as amp
from dpaudit.theorems.base import Theorem


@functools.cache
def _budget_shares() -> tuple[sympy.Expr, ...]:
    return (rational(1), rational(1) / 2)


#: ``BUDGET_SHARES``: fractions of a sampled node's delta budget at which its (eps, delta)
#: statements are derived: all of it (a lone node) and half of it (so that a k-fold
#: composition above keeps half of its budget as the slack of advanced composition).  Exact
#: numbers (no sympy), made on first access (PEP 562 ``__getattr__``).
if TYPE_CHECKING:
    BUDGET_SHARES: tuple[sympy.Expr, ...]
    Amplify = Callable[[sympy.Expr, sympy.Expr], tuple[sympy.Expr, sympy.Expr]]
else:

    def __getattr__(name: str) -> Any:
        if name == "BUDGET_SHARES":
            return _budget_shares()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _amplified(
    event: Event,
    inner: Any,
    card: Theorem,
    checks: Any,
    ratio: sympy.Expr,
    amplify: Amplify,
    ratio_text: str,
    budget: sympy.Expr | None,
) -> list[Statement]:
    """The statements of ``card`` (eps' = log(1 + gamma (e^eps - 1)), delta' = gamma delta,
    ``amplify``) applied to the child's pure statement, or else to its best (eps, delta)
    candidates at the budget's shares divided by gamma = ``ratio``."""
    out: list[Statement] = []
    for p in of_currency(inner, Pure)[:1]:
        e, _ = amplify(p.epsilon, rational(0))
        formula = f"eps = log(1 + {ratio_text}(e^eps_0 - 1)), {ratio_text} = {show(ratio)}"
        out.append(
            Pure(
                Step(card, event, f"({show(e)})-DP", formula, (p.step,), checks=checks),
                epsilon=e,
            )
        )
        if e.free_symbols:
            # log(1 + x) <= x: a looser bound in a form the verifier factors (gamma times a
            # function of eps alone), kept beside the exact one as an (eps, 0) statement
            x = ratio * (fn.exp(p.epsilon) - 1)
            out.append(
                Approx(
                    Step(
                        card,
                        event,
                        f"({show(x)}, 0)-DP",
                        f"eps = {ratio_text}(e^eps_0 - 1) >= log(1 + {ratio_text}(e^eps_0 - 1))",
                        (p.step,),
                        checks=checks,
                    ),
                    epsilon=x,
                    delta=rational(0),
                )
            )
    if out:
        return out
    targets = [None] if budget is None else [share * budget / ratio for share in _budget_shares()]
    for target in targets:
        if target is not None and not target.free_symbols and not target < 1:
            continue  # (a symbolic target is left to the conversions, as for zCDP)
        cand = best_candidate(inner, target)
        if cand is None and target is targets[-1] and not out:
            cand = best_candidate(inner, None)  # the child's own delta; the parent decides
        if cand is None:
            continue
        e, d = amplify(cand.epsilon, cand.delta)
        out.append(
            Approx(
                Step(
                    card,
                    event,
                    f"({show(e)}, {show(d)})-DP",
                    f"eps = log(1 + {ratio_text}(e^eps_0 - 1)), delta = {ratio_text} delta_0, "
                    f"{ratio_text} = {show(ratio)}",
                    (cand.step,),
                    checks=checks,
                ),
                epsilon=e,
                delta=d,
            )
        )
    return out


@register_rule(ev.SampledWithoutReplacement)
def _without_replacement(
    event: ev.SampledWithoutReplacement, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """Balle, Barthe, Gaboardi 2018, Theorem 9 on any child with an (eps, delta) guarantee
    (pure, approximate, or a whole profile such as a Gaussian's, resolved at the delta the
    budget leaves it), symbolic parameters allowed.

    Privacy: with gamma = m/n, if the child is (eps, delta)-DP under replace-one on m-record
    datasets, the sampled mechanism is (log(1 + gamma (e^eps - 1)), gamma delta)-DP under
    replace-one."""
    (inner,) = children
    checks = admit(
        amp.WITHOUT_REPLACEMENT_AMPLIFICATION, event, {"m": event.sample, "n": event.population}
    )
    if checks is None:
        return []

    def amplify(e: sympy.Expr, d: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
        return amp.without_replacement_amplification(e, d, event.sample, event.population)

    ratio = event.sample / event.population
    return _amplified(
        event, inner, amp.WITHOUT_REPLACEMENT_AMPLIFICATION, checks, ratio, amplify, "m/n", budget
    )


@register_rule(ev.PoissonSampled)
def _poisson(
    event: ev.PoissonSampled, children: Children, budget: sympy.Expr | None
) -> list[Statement]:
    """Balle, Barthe, Gaboardi 2018, Theorem 8 on any child with an (eps, delta) guarantee:
    a Poisson-subsampled eps-DP mechanism is (log(1 + q (e^eps - 1)))-DP, which no privacy
    loss distribution states (they need a delta), symbolic parameters allowed.

    Privacy: if the child is (eps, delta)-DP under add/remove, running it on a sample that
    holds each record independently with probability q is (log(1 + q (e^eps - 1)), q delta)-DP
    under add/remove (:class:`~dpaudit.events.PoissonSampled` requires add/remove)."""
    (inner,) = children
    checks = admit(amp.POISSON_AMPLIFICATION, event, {"q": event.rate})
    if checks is None:
        return []

    def amplify(e: sympy.Expr, d: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
        return amp.poisson_amplification(e, d, event.rate)

    return _amplified(
        event, inner, amp.POISSON_AMPLIFICATION, checks, event.rate, amplify, "q", budget
    )
