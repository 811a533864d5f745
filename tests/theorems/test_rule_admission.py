"""Every rule checks the domain of the card it applies (issue #4: "the accountant applies a
theorem only where its assumptions are verified for the parameters at hand ... and says so
in the derivation").

The walk below builds a representative event for every event class that has a rule (numeric
and symbolic), collects every statement every rule proves at every node and every candidate
those statements give at the target delta, and asserts that each step of every derivation
tree carries the checks of its card's domain.  It fails when a new rule (or a new event
class) is added without a representative here, so nothing is silently left unchecked.

Out-of-domain cases: for the cover lemma, the stability conversions and the PLD path, one
case where the card is applied (all its conditions verified, shown in the derivation) and one
where it is rejected with the failing condition and the value shown.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import sympy

import dpaudit.accountant
import dpaudit.filters
import dpaudit.theorems
import dpaudit.verify
from dpaudit import events as ev
from dpaudit.accountant import Accountant, UnsupportedEventError, domains
from dpaudit.accountant.rules import RULES
from dpaudit.accountant.statements import Step
from dpaudit.cli import main
from dpaudit.events.cover import EMCover
from dpaudit.events.stability import (
    LabelFlipped,
    RelabeledSubsampleSelection,
    SubsampledCandidates,
    UniformlyStable,
)
from dpaudit.theorems import cover, stability
from dpaudit.theorems.base import THEOREMS

R = sympy.Rational
lam, dlt, T, e0, s0, k = sympy.symbols("lambda delta T epsilon sigma k", positive=True)
RO = "replace_one"


def _representatives() -> list[tuple[ev.Event, sympy.Expr | None]]:
    g = ev.Gaussian(2)
    em = ev.Exponential(R(1, 10), relation=RO)
    return [
        (ev.Laplace(1), None),
        (ev.DiscreteLaplace(2), R(1, 10**6)),
        (ev.Gaussian(3), R(1, 10**6)),
        (ev.DiscreteGaussian(3), R(1, 10**6)),
        (ev.Exponential(R(1, 2)), R(1, 10**6)),
        (ev.RandomizedResponse(1, categories=3), 0),
        (ev.SelfComposed(ev.RandomizedResponse(1), 3), R(1, 10**6)),
        (ev.ReportNoisyMax(R(1, 2)), None),
        (ev.AboveThreshold(1, cutoff=2), None),
        (ev.PureDP(R(1, 2)), R(1, 10**6)),
        (ev.ApproxDP(R(1, 2), R(1, 10**8)), R(1, 10**6)),
        (ev.ZCDP(R(1, 10)), R(1, 10**6)),
        (ev.Composed([ev.Laplace(1), g, ev.ApproxDP(R(1, 10), R(1, 10**9))]), R(1, 10**5)),
        (ev.Composed([ev.Exponential(R(1, 5))] * 3), R(1, 10**5)),
        (ev.SelfComposed(ev.Exponential(R(1, 5)), 4), R(1, 10**5)),
        (ev.SelfComposed(ev.ApproxDP(R(1, 10), R(1, 10**9)), 5), R(1, 10**5)),
        (ev.SelfComposed(g, 3), R(1, 10**5)),
        (ev.SelfComposed(ev.Laplace(10), 30), R(1, 10**6)),
        (ev.Parallel([ev.Laplace(1), ev.Laplace(2)]), None),
        (ev.Parallel([ev.ApproxDP(R(1, 10), R(1, 10**9)), g]), R(1, 10**5)),
        (ev.PostProcessed(g), R(1, 10**5)),
        (ev.Group(ev.Laplace(2), 2), None),
        (ev.Group(g, 2), R(1, 10**5)),
        (ev.SelfComposed(ev.PoissonSampled(g, R(1, 100)), 10), R(1, 10**5)),
        (ev.PoissonSampled(ev.Laplace(1), R(1, 10)), R(1, 10**5)),
        (ev.SampledWithoutReplacement(ev.Gaussian(2, relation=RO), 10, 100), R(1, 10**5)),
        (ev.SampledWithoutReplacement(ev.PureDP(R(1, 2), relation=RO), 10, 100), None),
        (EMCover(R(1, 10), rounds=20), R(1, 10**6)),
        (EMCover(R(1, 10)), R(1, 10**6)),
        (UniformlyStable(R(1, 100)), None),
        (SubsampledCandidates(em, sample=10, population=1000), None),
        (LabelFlipped(UniformlyStable(R(1, 100)), flip=R(1, 10)), None),
        (LabelFlipped(ev.PureDP(5, relation=RO), flip=R(2, 5)), None),
        (
            RelabeledSubsampleSelection(
                em,
                ev.PureDP(R(1, 10), relation=RO),
                sample=10,
                population=10000,
                vc_dimension=2,
                net_radius=R(1, 10),
            ),
            R(1, 2),
        ),
        # symbolic: conditions decided by the symbols' assumptions or left as assumptions
        (EMCover(lam, rounds=T), dlt),
        (ev.SelfComposed(ev.ApproxDP(e0, dlt), k), R(1, 2)),
        (ev.SelfComposed(ev.Gaussian(s0), k), dlt),
        (LabelFlipped(UniformlyStable(dlt), flip=R(1, 10)), None),
    ]


def _all_steps(event: ev.Event, delta: sympy.Expr | None) -> list[Step]:
    """Every step of every statement that *every* rule proves at every node (not only the
    best ones the accountant keeps) and of every candidate they give at ``delta`` and at
    their own delta."""
    acc = Accountant()
    steps: list[Step] = []
    with domains.context(event.constraints()):
        for node in _nodes(event):
            memo: dict = {}
            children = [acc._evaluate(c, delta, event, memo) for c in node.children()]
            for rule in RULES[type(node)]:
                for st in rule(node, children, delta):
                    steps += [s for _, s in st.step.walk()]
                    for target in {delta, None}:
                        for cand in st.candidates(target):
                            steps += [s for _, s in cand.step.walk()]
    return steps


def test_every_rule_has_a_representative_here() -> None:
    covered = {type(node) for e, _ in _representatives() for node in _nodes(e)}
    missing = sorted(t.__name__ for t in RULES if t not in covered)
    assert not missing, f"event classes with rules but no representative in this test: {missing}"


def _nodes(event: ev.Event):
    yield event
    for child in event.children():
        yield from _nodes(child)


@pytest.mark.parametrize(("event", "delta"), _representatives(), ids=lambda x: str(x)[:40])
def test_every_step_carries_its_domain_checks(event: ev.Event, delta: sympy.Expr) -> None:
    steps = _all_steps(event, delta)
    assert steps
    unchecked = {s.theorem.key for s in steps if s.checks is None and s.theorem.domain}
    assert not unchecked, f"steps applying a card without checking its domain: {unchecked}"
    for s in steps:
        bound = {str(x) for c in s.checks or () for x in c.relation.free_symbols}
        stated = {str(x) for c in s.theorem.domain for x in c.free_symbols}
        assert bound <= stated
        assert all(c.status in ("verified", "unverified") for c in s.checks or ())
        # numbers are decided: only symbolic values may be left unverified
        assert all(c.status == "verified" or not c.numeric for c in s.checks or ())


#: Cards that no accountant rule applies, each with where it is used instead (library
#: functions a user calls directly, or claims of the verifier).
NOT_APPLIED_BY_RULES = {
    "em_cover_stated": "Lemma A.1 as stated: the claims 004/lemma-a1* (verify/cover_claims.py)",
    "kov_heterogeneous": "theorems/advanced.heterogeneous_advanced_composition",
    "amplification_with_replacement": "theorems/amplification (with-replacement sampling)",
    "bounded_range_composition": "theorems/bounded_range (non-adaptive BR composition)",
    "bounded_range_profile": "theorems/bounded_range.bounded_range_delta",
    "rdp_pure": "theorems/rdp.pure_rdp (pure leaves: optimal composition is exact)",
    "sparse_vector_lsl17": "theorems/sparse_vector (AboveThreshold's rule cites above_threshold)",
}


@pytest.mark.slow
def test_every_card_with_a_domain_is_checked_by_some_rule_path() -> None:
    for mod in pkgutil.iter_modules(dpaudit.theorems.__path__):
        importlib.import_module(f"dpaudit.theorems.{mod.name}")
    seen: set[str] = set()
    for event, delta in _representatives():
        seen |= {s.theorem.key for s in _all_steps(event, delta) if s.checks}
    with_domain = {key for key, t in THEOREMS.items() if t.domain}
    unseen = with_domain - seen
    assert unseen <= set(NOT_APPLIED_BY_RULES), sorted(unseen - set(NOT_APPLIED_BY_RULES))
    assert set(NOT_APPLIED_BY_RULES) <= set(THEOREMS)
    assert not set(NOT_APPLIED_BY_RULES) & seen  # the list is kept exact


# ---------------------------------------------------------------- in and out of domain


def test_cover_lemma_in_domain_is_applied_with_the_coin_lemma_checked() -> None:
    g = Accountant().guarantee(EMCover(R(1, 10)), R(1, 10**6))
    assert g.theorem is cover.EM_COVER
    text = g.text()
    assert "0 < delta < 1 (checked: delta = 1/1000000)" in text
    assert "by coin lemma" in text and "y > 0 (checked: y ~ 13.8155)" in text
    assert g.epsilon == cover.cover_epsilon(R(1, 10), R(1, 10**6))


def test_cover_lemma_out_of_domain_is_rejected_with_the_reason() -> None:
    with pytest.raises(
        UnsupportedEventError,
        match=r"corrected Lemma A.1\) not applicable .*0 < delta fails "
        r"\(checked: delta = 0\)",
    ):
        Accountant().guarantee(EMCover(R(1, 10)), 0)
    # with T known the composition theorems still apply, and the rejection is listed
    g = Accountant().guarantee(EMCover(R(1, 10), rounds=3), 0)
    assert g.epsilon == R(6, 10)
    assert any(r.theorem is cover.EM_COVER for r in g.rejected)
    assert "assumption 0 < delta fails (checked: delta = 0)" in g.text()


def test_symbolic_cover_conditions_follow_from_the_claim_domain() -> None:
    g = Accountant(assume=[dlt < 1]).guarantee(EMCover(lam, rounds=T), dlt)
    assert not [a for a in g.assumptions if a not in EMCover(lam, rounds=T).constraints()]
    assert "log(1/delta) > 0: follows from the assumption delta < 1" in g.text()
    bare = Accountant().guarantee(EMCover(lam, rounds=T), dlt)
    shown = {str(a) for a in bare.assumptions}
    assert {"log(1/delta) > 0", "delta < 1"} <= shown  # conditional, and said so


def test_stability_conversion_in_and_out_of_domain() -> None:
    event = ev.SampledWithoutReplacement(ev.PureDP(R(1, 2), relation=RO), 10, 100)
    ok = Accountant().guarantee(event)
    assert not ok.rejected
    # 003 Lemma 5 applies (the rule's statement, all conditions verified); Balle, Barthe,
    # Gaboardi 2018 is tighter, so the accountant keeps that one
    lemma5 = next(
        s for s in _all_steps(event, None) if s.theorem is stability.PREDICTION_SUBSAMPLING
    )
    assert [c.status for c in lemma5.checks] == ["verified"] * 4
    assert "eps = 2 eps_0 m/n = 0.1" in lemma5.formula
    big = Accountant().guarantee(ev.SampledWithoutReplacement(ev.PureDP(2, relation=RO), 10, 100))
    (rej,) = [r for r in big.rejected if r.theorem is stability.PREDICTION_SUBSAMPLING]
    assert "assumption epsilon <= 1 fails (checked: epsilon = 2)" in str(rej)
    assert "not applicable" in big.text() and "epsilon <= 1 fails" in big.text()
    # the alternative that does apply (Balle, Barthe, Gaboardi 2018) gives the bound
    assert big.epsilon == sympy.log(1 + R(1, 10) * (sympy.exp(2) - 1))


def test_label_flip_checks_its_flip_probability() -> None:
    g = Accountant().guarantee(LabelFlipped(UniformlyStable(R(1, 100)), flip=R(1, 10)))
    assert "0 < a < 1/2 (checked: a = 1/10)" in g.text()
    assert g.epsilon == stability.flipped_epsilon(0, R(1, 100), R(1, 10))


def test_pld_pair_in_and_out_of_domain() -> None:
    d = R(1, 10**5)
    g = Accountant().guarantee(ev.SelfComposed(ev.PoissonSampled(ev.Gaussian(2), R(1, 100)), 10), d)
    text = g.text()
    assert "PLD dominating pair of the Gaussian mechanism" in text
    assert "0 < q <= 1 (checked: q = 1/100)" in text
    assert "k >= 1 (checked: k = 10)" in text
    tiny = Accountant().guarantee(ev.Gaussian(R(1, 10**4)), d)
    (rej,) = [r for r in tiny.rejected if r.theorem.key == "pld_pair_gaussian"]
    assert "sigma >= Delta/1000 fails (checked: Delta = 1, sigma = 1/10000)" in str(rej)
    assert tiny.theorem.key != "pld_fft"  # zCDP or Gaussian DP gives the bound instead
    assert tiny.epsilon_upper is not None and tiny.epsilon_upper > 10**7


def test_explain_never_says_not_checked(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["EMCover(0.1, rounds=20)", "--delta", "1e-6"],
        ["SubsampledCandidates(Exponential(0.1, relation='replace_one'), 10, 1000)"],
        ["SelfComposed(PoissonSampled(Gaussian(2), 0.01), 10)", "--delta", "1e-6"],
    ):
        for extra in ([], ["--latex"]):
            assert main(["explain", *args, *extra]) == 0
            out = capsys.readouterr().out
            assert "not checked by this rule" not in out
            assert "checked:" in out


@pytest.mark.parametrize(
    ("leaf", "peer", "k"),
    [
        ("Laplace(10)", "LaplaceDpEvent", 10),
        ("Laplace(10)", "LaplaceDpEvent", 1000),
        ("Gaussian(4)", "GaussianDpEvent", 10),
        ("Gaussian(4)", "GaussianDpEvent", 1000),
    ],
)
def test_leaf_rdp_curves_match_dp_accounting(leaf: str, peer: str, k: int) -> None:
    """Oracle: dp_accounting's RdpAccountant (it converts with the same Balle et al. 2020
    bound).  The leaves' curves are closed forms at every real order, so ours converts at the
    best real order: at most dp_accounting's value on the integer orders 2..49 (rounded up,
    so within 1e-9), and within 1e-5 of its value on a grid of orders 0.001 apart (the real
    optimum lies between that grid's points)."""
    import dp_accounting
    import numpy as np
    from dp_accounting import rdp as peer_rdp

    from dpaudit.accountant.tight import LEAF_ORDERS
    from dpaudit.parse import parse_event

    def peer_epsilon(orders: list[float]) -> float:
        acc = peer_rdp.RdpAccountant(orders=orders)
        acc.compose(getattr(dp_accounting, peer)(10 if leaf.startswith("Laplace") else 4), k)
        return float(acc.get_epsilon(1e-6))

    integer = peer_epsilon([float(a) for a in LEAF_ORDERS])
    fine = peer_epsilon(list(np.arange(1.001, 50, 0.001)))
    g = Accountant().guarantee(ev.SelfComposed(parse_event(leaf), k), R(1, 10**6))
    (ours,) = [c for c in g.candidates if c.label.startswith("RDP to")]
    value = float(ours.epsilon)
    assert value <= integer * (1 + 1e-9)
    assert abs(value - fine) <= 1e-5 * fine
    assert "alpha > 1 (checked: alpha = 2)" in _text_of(ours.step)


def _text_of(step: Step) -> str:
    from dpaudit.accountant.render import assumption_lines

    return "\n".join(line for _, s in step.walk() for line in assumption_lines(s))


@pytest.mark.parametrize(
    ("known", "status"),
    [
        ((dlt < 1,), "verified"),
        ((dlt <= 1,), "unverified"),
        ((dlt < 2,), "unverified"),
        ((), "unverified"),
    ],
)
def test_log_conditions_follow_only_from_a_sufficient_bound(known: tuple, status: str) -> None:
    """ln(1/delta) > 0 iff delta < 1 (delta > 0): delta <= 1 or delta < 2 do not suffice."""
    (check,) = cover.COIN_LEMMA.check({"y": sympy.log(1 / dlt)}, known)
    assert check.status == status


def test_log_conditions_respect_the_sign_of_the_coefficient() -> None:
    x = sympy.Symbol("x", positive=True)
    card = cover.COIN_LEMMA  # y > 0 at y = -2 ln(x): holds iff x < 1
    assert card.check({"y": -2 * sympy.log(x)}, (x < 1,))[0].status == "verified"
    assert card.check({"y": 2 * sympy.log(x)}, (x < 1,))[0].status != "verified"
    assert card.check({"y": 2 * sympy.log(x)}, (x > 1,))[0].status == "verified"
