"""Monte Carlo auditing: certified lower bounds on the epsilon of a mechanism's real code.

Public API:
    audit(mechanism, d0, d1, *, epsilon, delta=0.0, samples, confidence=0.95, seed=None, ...)
        (``arithmetic="float"``, the default for a mechanism that declares nothing, also
        searches events over the outputs' bit patterns in their own precision:
        :mod:`dpaudit.audit.float_bits`; outputs may be structured, :mod:`.structured`;
        ``on_error="output"`` makes an exception's type an outcome)
    audit_records(fn, domain, *, epsilon, delta=0.0, relation="replace-one", sizes=(1, 8),
                  samples, confidence=0.95, seed=None, budget_seconds=None, workers=1)
    audit_one_run(train, m, *, epsilon, delta=0.0, confidence=0.95, seed=None, guesses=None,
                  subsets=None, method="auto", curve="auto")
        (one training run with m canaries: Steinke, Nasr, Jagielski 2023; f-DP, Mahloujifar,
        Melis, Chaudhuri 2025; Gaussian scores), OneRunAuditResult,
        one_run_epsilon_lower(m, r, v, *, delta, confidence, tests), one_run_p_value,
        one_run_theory(epsilon, m, r, ...), one_run_curve(m, r, ...)
    exact_audit(mechanism, d0, d1, *, epsilon, delta=0.0, pairs=None)
    exact_epsilon(p, q, delta=0.0); check_sampler(mechanism, dataset, *, samples, ...)
    query_pairs(length, *, base=0.0, sensitivity=1.0)
    NeighbouringPair(d0, d1, name), AuditResult
    statistical_limit(p_num, p_den, *, samples, delta, confidence, tests); samples_needed(...)
    tradeoff_curve(mechanism, d0, d1, *, samples, confidence=0.95, seed=None, thresholds=None)
"""

from typing import TYPE_CHECKING

from dpaudit.deferred_imports import lazy_attributes

if TYPE_CHECKING:
    from dpaudit.audit.certifiable import (
        samples_needed,
        statistical_limit,
        threshold_probabilities,
    )
    from dpaudit.audit.exact import check_sampler, exact_audit, exact_epsilon
    from dpaudit.audit.frames import over_frame, over_records
    from dpaudit.audit.monte_carlo import audit
    from dpaudit.audit.one_run import (
        one_run_curve,
        one_run_epsilon_lower,
        one_run_p_value,
        one_run_theory,
    )
    from dpaudit.audit.one_run_audit import OneRunAuditResult, audit_one_run
    from dpaudit.audit.pairs import NeighbouringPair, query_pairs
    from dpaudit.audit.records import audit_records
    from dpaudit.audit.records_result import RecordsAuditResult
    from dpaudit.audit.result import AuditResult
    from dpaudit.audit.tradeoff import TradeoffCurve, tradeoff_curve

#: Where each public name lives.  The submodules are imported on first use, so that reading
#: one small module (limits, options, the record domain, as ``dpaudit audit --help`` does) does
#: not import SciPy with the whole auditor.
_LAZY = {
    "AuditResult": "dpaudit.audit.result",
    "NeighbouringPair": "dpaudit.audit.pairs",
    "OneRunAuditResult": "dpaudit.audit.one_run_audit",
    "RecordsAuditResult": "dpaudit.audit.records_result",
    "TradeoffCurve": "dpaudit.audit.tradeoff",
    "audit": "dpaudit.audit.monte_carlo",
    "audit_one_run": "dpaudit.audit.one_run_audit",
    "audit_records": "dpaudit.audit.records",
    "check_sampler": "dpaudit.audit.exact",
    "exact_audit": "dpaudit.audit.exact",
    "exact_epsilon": "dpaudit.audit.exact",
    "one_run_curve": "dpaudit.audit.one_run",
    "one_run_epsilon_lower": "dpaudit.audit.one_run",
    "one_run_p_value": "dpaudit.audit.one_run",
    "one_run_theory": "dpaudit.audit.one_run",
    "over_frame": "dpaudit.audit.frames",
    "over_records": "dpaudit.audit.frames",
    "query_pairs": "dpaudit.audit.pairs",
    "samples_needed": "dpaudit.audit.certifiable",
    "statistical_limit": "dpaudit.audit.certifiable",
    "threshold_probabilities": "dpaudit.audit.certifiable",
    "tradeoff_curve": "dpaudit.audit.tradeoff",
}

__all__ = [
    "AuditResult",
    "NeighbouringPair",
    "OneRunAuditResult",
    "RecordsAuditResult",
    "TradeoffCurve",
    "audit",
    "audit_one_run",
    "audit_records",
    "check_sampler",
    "exact_audit",
    "exact_epsilon",
    "one_run_curve",
    "one_run_epsilon_lower",
    "one_run_p_value",
    "one_run_theory",
    "over_frame",
    "over_records",
    "query_pairs",
    "samples_needed",
    "statistical_limit",
    "threshold_probabilities",
    "tradeoff_curve",
]


__getattr__ = lazy_attributes(globals(), _LAZY)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
