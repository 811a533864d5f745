"""Opacus accountant histories read into dpaudit (no opacus import in dpaudit).

The fakes mirror Opacus's documented structure (``opacus/accountants/accountant.py``,
``rdp.py``: ``history`` of ``(noise_multiplier, sample_rate, num_steps)`` with consecutive
equal steps merged, ``state_dict()`` with ``"history"`` and ``"mechanism"``, a
``PrivacyEngine`` holding ``.accountant``).  Evidence for the numbers: the same schedule as a
dp_accounting ``DpEvent`` tree accounted by dp_accounting's PLD accountant in the same run
(dpaudit's certified band around it, upper within 0.5%), and, where opacus is installed, Opacus's
own ``RDPAccountant`` (an upper bound loosened by the RDP conversion: dpaudit's certified upper
bound must be at most it) and ``PRVAccountant`` (an upper bound up to its eps_error 0.01).
"""

from __future__ import annotations

from collections import OrderedDict

import pytest
import sympy
from dp_accounting import dp_event as d
from dp_accounting.pld import pld_privacy_accountant

from dpaudit.accountant import Accountant
from dpaudit.events import ApproxDP, Composed, Gaussian, PoissonSampled, SelfComposed
from dpaudit.integrations.opacus import from_opacus, opacus_guarantee, opacus_history

DELTA = 1e-5
SCHEDULE = [(1.1, 0.01, 500), (0.9, 0.02, 300)]


class FakeAccountant:
    """Opacus's ``IAccountant`` bookkeeping: ``step`` merges equal consecutive steps."""

    def __init__(self):
        self.history = []

    def step(self, *, noise_multiplier, sample_rate):
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            nm, q, n = self.history.pop()
            self.history.append((nm, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def state_dict(self):
        return OrderedDict(history=list(self.history), mechanism="rdp")


class FakePrivacyEngine:
    def __init__(self, accountant):
        self.accountant = accountant


class OldRDPAccountant:  # Opacus < 1.2 kept the list as .steps
    def __init__(self, steps):
        self.steps = steps


def _trained():
    acc = FakeAccountant()
    for nm, q, n in SCHEDULE:
        for _ in range(n):
            acc.step(noise_multiplier=nm, sample_rate=q)
    return acc


EXPECTED = Composed(
    [
        SelfComposed(PoissonSampled(Gaussian(1.1), 0.01), 500),
        SelfComposed(PoissonSampled(Gaussian(0.9), 0.02), 300),
    ]
)


@pytest.mark.parametrize(
    "source",
    [
        _trained(),
        FakePrivacyEngine(_trained()),
        _trained().state_dict(),
        SCHEDULE,
        [list(t) for t in SCHEDULE],  # a state_dict saved as JSON
        OldRDPAccountant(SCHEDULE),
    ],
    ids=["accountant", "privacy_engine", "state_dict", "triples", "json_lists", "old_steps"],
)
def test_every_source_reads_as_the_poisson_gaussian_schedule(source):
    assert _trained().history == SCHEDULE
    assert from_opacus(source) == EXPECTED


def test_values_are_read_exactly():
    ((sigma, rate, steps),) = opacus_history([(1.1, 0.01, 7)])
    assert sigma == sympy.Rational(1.1) and rate == sympy.Rational(0.01) and steps == 7
    assert sigma != sympy.Rational(11, 10)  # the binary value the training used


def test_trivial_wrappers_are_left_out_and_empty_history_is_a_noop():
    assert from_opacus([(2.0, 1.0, 1)]) == Gaussian(2)
    assert from_opacus([(2.0, 0.5, 1)]) == PoissonSampled(Gaussian(2), sympy.Rational(1, 2))
    assert from_opacus([]) == ApproxDP(0, 0)
    assert opacus_guarantee([], DELTA).epsilon_upper == 0.0


@pytest.mark.slow
def test_guarantee_agrees_with_dp_accounting_pld_on_the_same_schedule():
    tree = d.ComposedDpEvent(
        [
            d.SelfComposedDpEvent(d.PoissonSampledDpEvent(q, d.GaussianDpEvent(nm)), n)
            for nm, q, n in SCHEDULE
        ]
    )
    peer = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    peer.compose(tree)
    theirs = peer.get_epsilon(DELTA)
    g = opacus_guarantee(_trained(), DELTA)
    assert g.epsilon_lower_float is not None
    assert g.epsilon_lower_float <= theirs * (1 + 1e-3)
    assert g.epsilon_upper <= theirs * 1.005
    assert g.epsilon_upper == Accountant().guarantee(EXPECTED, DELTA).epsilon_upper


@pytest.mark.parametrize(
    ("history", "match"),
    [
        (
            [(1.0, 0.1, 5), (0.0, 0.1, 5)],
            r"history\[1\]: noise_multiplier must be a real number > 0 \(0 adds no noise",
        ),
        ([(-1.0, 0.1, 5)], r"history\[0\]: noise_multiplier must be a real number > 0.*got -1.0"),
        (
            [(float("nan"), 0.1, 5)],
            r"history\[0\]: noise_multiplier must be a real number > 0, got nan",
        ),
        ([(1.0, 1.5, 5)], r"history\[0\]: sample_rate must be in \(0, 1\], got 1.5"),
        ([(1.0, 0.0, 5)], r"history\[0\]: sample_rate must be in \(0, 1\], got 0.0"),
        (
            [(1.0, "0.1", 5)],
            r"history\[0\]: sample_rate must be a real number in \(0, 1\], got the string",
        ),
        ([(1.0, 0.1, 0)], r"history\[0\]: num_steps must be an integer >= 1, got 0"),
        ([(1.0, 0.1, 2.5)], r"history\[0\]: num_steps must be an integer >= 1, got 2.5"),
        ([(1.0, 0.1, True)], r"num_steps must be an integer >= 1, got True"),
        (
            [(1.0, 0.1)],
            r"history\[0\]: expected a \(noise_multiplier, sample_rate, num_steps\) triple",
        ),
        ({"mechanism": "rdp"}, r"expected a 'history' key"),
    ],
)
def test_bad_entries_name_index_parameter_range_and_value(history, match):
    with pytest.raises(ValueError, match=match):
        from_opacus(history)


def test_unknown_sources_are_type_errors():
    with pytest.raises(TypeError, match="expected an Opacus accountant"):
        from_opacus(42)
    with pytest.raises(TypeError, match=r"state_dict\['history'\]: expected a list"):
        from_opacus({"history": 3})


@pytest.mark.slow  # imports torch (about 4.5 s)
def test_real_opacus_accountants():
    """Only where opacus is installed (not a dependency: it needs torch).  Opacus's RDP value
    is an upper bound loosened by the RDP-to-DP conversion, its PRV value an upper bound up to
    eps_error = 0.01; dpaudit's certified upper bound is at most both, its lower bound below
    both."""
    pytest.importorskip("opacus")
    from opacus import PrivacyEngine
    from opacus.accountants import PRVAccountant, RDPAccountant

    for cls in (RDPAccountant, PRVAccountant):
        acc = cls()
        for nm, q, n in SCHEDULE:
            for _ in range(n):
                acc.step(noise_multiplier=nm, sample_rate=q)
        assert from_opacus(acc) == EXPECTED
        assert from_opacus(acc.state_dict()) == EXPECTED
        g = opacus_guarantee(acc, DELTA)
        theirs = acc.get_epsilon(DELTA)
        assert g.epsilon_lower_float is not None
        assert g.epsilon_lower_float <= g.epsilon_upper <= theirs
    engine = PrivacyEngine(accountant="rdp")
    engine.accountant.step(noise_multiplier=1.0, sample_rate=0.5)
    assert from_opacus(engine) == PoissonSampled(Gaussian(1), sympy.Rational(1, 2))
