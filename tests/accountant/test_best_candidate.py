"""best_candidate skips a statement whose float estimate cannot win (rules.ESTIMATE_MARGIN):
the same candidate is chosen, the skipped conversion is not computed, and a wrong estimate
can only cost tightness, never soundness."""

from __future__ import annotations

from dpaudit.accountant import Accountant, currencies, rules
from dpaudit.accountant.statements import Candidate, Statement
from dpaudit.numeric import float_up
from dpaudit.parse import parse_event

STEP = "SelfComposed(PoissonSampled(Gaussian(2.6566), 256/60000), 1000000)"


def _rdp_conversions(monkeypatch) -> list[object]:
    """Count the RDP curves' certified conversions."""
    seen: list[object] = []
    real = currencies.RenyiCurve.candidates

    def counted(self, delta):
        seen.append(delta)
        return real(self, delta)

    monkeypatch.setattr(currencies.RenyiCurve, "candidates", counted)
    return seen


def test_the_rdp_conversion_at_a_steps_budget_is_skipped(monkeypatch):
    """DP-SGD, 10^6 steps: at the step's delta budget (1e-11) the RDP curve's conversion (order
    49, about 0.43) cannot beat amplification's 0.03, so it is not certified; the guarantee is
    the same as with the skip turned off, to the last bit of every candidate."""
    event = parse_event(STEP)
    seen = _rdp_conversions(monkeypatch)
    skipped = Accountant().guarantee(event, "1e-5")
    calls_with_skip = len(seen)
    monkeypatch.setattr(rules, "ESTIMATE_MARGIN", float("inf"))
    seen.clear()
    full = Accountant().guarantee(event, "1e-5")
    assert len(seen) == calls_with_skip + 1
    assert [(c.label, c.epsilon) for c in skipped.candidates] == [
        (c.label, c.epsilon) for c in full.candidates
    ]
    assert skipped.epsilon_upper == full.epsilon_upper


class _Fixed(Statement):
    """A statement with one given candidate (and no estimate)."""

    currency = "fixed"

    def __init__(self, cand: Candidate) -> None:
        super().__init__(cand.step)
        object.__setattr__(self, "_cand", cand)

    def candidates(self, delta):
        return [self._cand]


class _Lying(_Fixed):
    """A statement whose estimate claims it is far worse than its candidate is."""

    def estimate(self, delta):
        return 1e9


def test_a_wrong_estimate_costs_tightness_not_soundness():
    """A statement whose estimate lies (claims 1e9) is skipped even though it would win: the
    candidate returned is the other one, itself a certified guarantee, never something
    smaller than a certified candidate."""
    g = Accountant().guarantee(parse_event("SelfComposed(Gaussian(2), 10)"), "1e-5")
    loose, tight = sorted(g.candidates, key=lambda c: float_up(c.epsilon))[::-1][:2]
    chosen = rules.best_candidate([_Fixed(loose), _Lying(tight)], None)
    assert chosen is loose
    chosen = rules.best_candidate([_Fixed(loose), _Fixed(tight)], None)
    assert chosen is tight
