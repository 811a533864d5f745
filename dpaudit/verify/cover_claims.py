"""The EMCover lemma of Bun and Fang (004) as claims, with the proof steps it rests on.

* ``004/lemma-a1``: Lemma A.1 as stated, over the domain the paper states (every
  inverse temperature lambda > 0, every delta in (0, 1), any number of rounds T >= 1).  It is
  **refuted**: for large lambda a score family meeting the cover conditions breaks it
  (:func:`dpaudit.theorems.cover.cover_lower_bound`), and the proof step
  1 + (e^eps - 1) x <= e^(2 eps x) fails for eps > 1.2564...  Correct statement:
  (lambda + (e^lambda - 1)(ln(1/delta) + 1), delta)-DP for every lambda > 0
  (:data:`dpaudit.theorems.cover.EM_COVER`), which implies the stated bound for
  lambda <= 5/4.
* ``004/lemma-a1-small-lambda``: the stated bound for 0 < lambda <= 5/4 -- **proved** from the
  corrected theorem.
  Its steps include the coin lemma's elementary inequality log(1 - p) <= -p, from which
  (1 - p)^(y/p) <= e^(-y) (a constant adversary cannot beat Lemma A.3's bound).
"""

from __future__ import annotations

import sympy

from dpaudit.events.cover import EMCover
from dpaudit.theorems.cover import LAMBDA_STATED_MAX, cover_lower_bound, stated_cover_epsilon
from dpaudit.verify.claims import Claim, Step, register_claim
from dpaudit.verify.domain import Domain, Range

__all__ = ["LEMMA_A1", "LEMMA_A1_SMALL"]

lam, delta, T, x, p = sympy.symbols("lambda delta T x p", positive=True)

_DOC = "004 Bun, Fang (decision lists, DP-Winnow)"
_PROOF_STEP = Step(
    "1 + (e^eps - 1) x <= e^(2 eps x) for eps > 0, x in [0, 1] (proof of Lemma A.1)",
    1 + (sympy.exp(lam) - 1) * x <= sympy.exp(2 * lam * x),
    Domain({"lambda": "(0, oo)", "x": "[0, 1]"}),
)

LEMMA_A1 = register_claim(
    Claim(
        key="004/lemma-a1",
        document=_DOC,
        theorem="Lemma A.1",
        statement=(
            "EMCover with cover-condition scores and EM ~ exp(eps q) is "
            "(2 eps (ln(1/delta) + 3/2), delta)-DP for every delta > 0"
        ),
        plan=EMCover(lam, T),
        epsilon=stated_cover_epsilon(lam, delta),
        delta=delta,
        domain=Domain({"lambda": "(0, oo)", "delta": "(0, 1)", "T": "[1, oo)"}, integers=["T"]),
        note="the lemma's eps is the inverse temperature lambda (the proof samples ~ exp(eps q))",
        lower=cover_lower_bound(lam, delta, T),
        lower_source="one covering candidate drawn w.p. y/(T+y), y = ln(1/delta)/2, never drawn",
        steps=(_PROOF_STEP,),
        witnesses=({"lambda": 3, "delta": "1/1000", "T": 1000},),
        correction=(
            "(lambda + (e^lambda - 1)(ln(1/delta) + 1), delta)-DP for all lambda > 0; the "
            "stated bound holds for lambda <= 5/4"
        ),
    )
)

LEMMA_A1_SMALL = register_claim(
    Claim(
        key="004/lemma-a1-small-lambda",
        document=_DOC,
        theorem="Lemma A.1 (lambda <= 5/4)",
        statement="the stated bound where its proof step holds: 0 < lambda <= 5/4",
        plan=EMCover(lam, T),
        epsilon=stated_cover_epsilon(lam, delta),
        delta=delta,
        domain=Domain(
            {
                "lambda": Range(0, LAMBDA_STATED_MAX, low_open=True),
                "delta": "(0, 1)",
                "T": "[1, oo)",
            },
            integers=["T"],
        ),
        steps=(
            Step(
                _PROOF_STEP.name,
                _PROOF_STEP.relation,
                Domain({"lambda": Range(0, LAMBDA_STATED_MAX, low_open=True), "x": "[0, 1]"}),
            ),
            Step(
                "log(1 - p) <= -p, so a constant p-coin adversary has (1 - p)^(y/p) <= e^(-y) "
                "(Lemma A.3)",
                sympy.log(1 - p) <= -p,
                Domain({"p": "[0, 1)"}),
            ),
        ),
    )
)
