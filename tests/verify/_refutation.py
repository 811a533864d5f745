"""Shared check of the verifier's refutations (imported by the verify tests)."""

from __future__ import annotations

from dpaudit.numeric import endpoints, interval


def assert_refutation_holds(verdict, prec: int | None = None) -> None:
    """A refutation's point is in the domain and the inequality certainly fails there
    (rigorous interval evaluation, at ``prec`` bits when given)."""
    point = verdict.counterexample
    assert verdict.domain.contains(point) is True
    rel = verdict.relation
    g = rel.rhs - rel.lhs if rel.rel_op in ("<", "<=") else rel.lhs - rel.rhs
    _, hi = endpoints(interval(g, {s: point[s.name] for s in g.free_symbols}, prec=prec))
    assert hi <= 0 if rel.rel_op in ("<", ">") else hi < 0
