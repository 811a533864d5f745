"""Notes on why accounting methods order as they do, generated from the numbers.

For every pair of methods of a comparison the numbers decide the relation: one is below the
other at every k listed, they agree, or they cross (one is below for small k, the other for
large k).  A reason is attached only when a known reason explains the direction the numbers
show (:data:`REASONS`); a pair without one is listed with its numbers only.  Nothing here
claims an order the table does not show.

Values are upper bounds rounded up, so "below" means "a smaller proved bound", and two values
within :data:`SAME` (relative) count as equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from dpaudit import events as ev
from dpaudit.events import Event
from dpaudit.theorems.base import Theorem

__all__ = ["REASONS", "SAME", "SAME_REASONS", "ordering_notes"]

#: Relative difference under which two rounded-up bounds count as the same number.
SAME = 1e-6


class _Method(Protocol):
    # read-only, as on the frozen dataclass comparison.Method
    @property
    def label(self) -> str: ...
    @property
    def theorem(self) -> Theorem: ...
    @property
    def epsilons(self) -> dict[int, float]: ...


#: The worst case over all eps-DP mechanisms is binary randomized response (Kairouz, Oh,
#: Viswanath 2015, Theorem 3.3): its privacy loss takes only the values +eps and -eps.
def _is_worst_case(event: Event) -> bool:
    if isinstance(event, ev.RandomizedResponse):
        return str(event.categories) == "2"
    return isinstance(event, ev.PureDP)


_OPTIMAL_CLASS = (
    "optimal composition (Kairouz, Oh, Viswanath 2015, Theorem 3.3) is the exact privacy "
    "profile of the worst k-fold composition of eps-DP mechanisms (k binary randomized "
    "responses), so no bound that holds for every eps-DP mechanism can be below it"
)


def _pld_vs_optimal(event: Event, pld_below: bool) -> str:
    if pld_below:
        return (
            "optimal composition is optimal over *all* eps-DP mechanisms: its worst case is "
            "binary randomized response, whose privacy loss takes only the values +eps and "
            "-eps.  The privacy loss distribution accounts for this mechanism alone"
            + (
                " (for the Laplace mechanism the loss is spread over [-Delta/b, Delta/b] with "
                "most of its mass strictly inside)"
                if isinstance(event, ev.Laplace)
                else ""
            )
            + "; a loss with less mass at the extremes concentrates better under composition, "
            "so the k-fold composition meets delta at a smaller epsilon.  A mechanism-specific "
            "bound can beat the worst-case optimum; it could not for randomized response itself"
        )
    if _is_worst_case(event):
        return (
            "this mechanism is the worst case of optimal composition (binary randomized "
            "response / a generic eps-DP mechanism), so optimal composition is already its "
            "exact value; the privacy loss distribution can only match it, and any excess is "
            "its certified discretisation error"
        )
    return (
        "here the privacy loss distribution's certified discretisation error outweighs what "
        "this mechanism gains over the worst case"
    )


def _basic_vs_advanced(advanced_below: bool, delta: str) -> str:
    try:
        threshold = 2 * math.log(1 / float(delta))
    except (ValueError, ZeroDivisionError, OverflowError):
        threshold = float("nan")
    shown = f"{threshold:.3g}" if math.isfinite(threshold) else "2 ln(1/delta')"
    core = (
        "advanced composition costs sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1) (Dwork, "
        "Rothblum, Vadhan 2010): its first term alone exceeds basic composition's k eps while "
        f"k <= 2 ln(1/delta') = {shown}, and its second term alone does when eps >= ln 2; "
    )
    if advanced_below:
        return core + "for many compositions of small-eps mechanisms it grows like sqrt(k) instead"
    return core + "so for few compositions or large eps basic composition is tighter"


def _gdp_exact(_: Event, __: str) -> str:
    return (
        "the Gaussian profile is exact for compositions of Gaussian mechanisms (a composition "
        "of mu_i-GDP mechanisms is sqrt(sum mu_i^2)-GDP with no slack, Dong, Roth, Su 2022, "
        "Corollary 3.3), so every other valid bound is at or above it"
    )


def _is_gaussian(event: Event) -> bool:
    return isinstance(event, ev.Gaussian)


_GAUSSIAN_LINE = (
    "for a Gaussian mechanism the Renyi curve is exactly the line tau(alpha) = rho alpha, "
    "rho = Delta^2/(2 sigma^2) (Mironov 2017, Proposition 7): RDP and zCDP hold the same "
    "information"
)

Reason = Callable[[Event, str], str]

#: (key of the method below, key of the method above) -> the reason, by event and delta.
REASONS: dict[tuple[str, str], Reason] = {
    ("optimal_composition", "basic_composition"): lambda e, d: (
        _OPTIMAL_CLASS + ", basic composition's k eps included (they agree at k = 1)"
    ),
    ("optimal_composition", "advanced_composition"): lambda e, d: (
        _OPTIMAL_CLASS
        + "; advanced composition is a closed-form (concentration-inequality) bound for the same "
        "class of mechanisms"
    ),
    ("pld_fft", "optimal_composition"): lambda e, d: _pld_vs_optimal(e, True),
    ("optimal_composition", "pld_fft"): lambda e, d: _pld_vs_optimal(e, False),
    ("advanced_composition", "basic_composition"): lambda e, d: _basic_vs_advanced(True, d),
    ("basic_composition", "advanced_composition"): lambda e, d: _basic_vs_advanced(False, d),
    ("pld_fft", "rdp_to_approx_bbgg20"): lambda e, d: (
        "the privacy loss distribution is the mechanism's exact privacy profile up to a "
        "certified discretisation error, while converting a Renyi curve to (eps, delta) "
        "(Balle et al. 2020, Theorem 21) is an inequality that is not tight"
    ),
    ("rdp_to_approx_bbgg20", "zcdp_to_approx"): lambda e, d: (
        _GAUSSIAN_LINE
        + "; the gap is the conversion: RDP's is optimised over the order (Balle et al. 2020, "
        "Theorem 21, at the best real order), rho + 2 sqrt(rho ln(1/delta)) (Bun and Steinke "
        "2016, Proposition 1.3) is a closed-form relaxation of it"
        if _is_gaussian(e)
        else "RDP keeps the mechanism's whole Renyi curve tau(alpha); zCDP keeps one number rho "
        "with tau(alpha) <= rho alpha for every alpha (a linear upper bound), so a conversion "
        "from zCDP cannot see where the curve lies below that line"
    ),
    ("rdp_to_approx_bbgg20", "zcdp_to_approx_cks20"): lambda e, d: (
        "RDP keeps the mechanism's whole Renyi curve tau(alpha); zCDP keeps only the line "
        "rho alpha above it, so even the best conversion from zCDP starts from a weaker "
        "statement"
    ),
    ("zcdp_to_approx_cks20", "zcdp_to_approx"): lambda e, d: (
        "both start from the same rho; Canonne, Kamath, Steinke 2020 (Proposition 12) "
        "optimise the Renyi order, while rho + 2 sqrt(rho ln(1/delta)) (Bun and Steinke "
        "2016, Proposition 1.3) is a closed-form relaxation of the same conversion"
    ),
    ("zcdp_to_approx", "basic_composition"): lambda e, d: (
        "eps-DP implies (eps^2/2)-zCDP and zCDP adds up under composition, so k-fold "
        "composition is about k eps^2/2 + eps sqrt(2k ln(1/delta)): it grows like sqrt(k) "
        "when eps is small, where basic composition grows like k"
    ),
    ("basic_composition", "zcdp_to_approx"): lambda e, d: (
        "converting to zCDP and back costs rho + 2 sqrt(rho ln(1/delta)) with rho = k eps^2/2: "
        "for few compositions or large eps that exceeds k eps"
    ),
}
_EXACT_PLD = (
    "the privacy loss distribution is this mechanism's exact privacy profile up to a "
    "certified discretisation error, so every valid bound is at or above it (up to that error)"
)
_GENERIC_PURE = (
    "; this bound too holds for every eps-DP mechanism (it uses only eps, through eps-DP => "
    "(eps^2/2)-zCDP)"
)
for _other in (
    "basic_composition",
    "advanced_composition",
    "zcdp_to_approx",
    "zcdp_to_approx_cks20",
):
    REASONS[("pld_fft", _other)] = lambda e, d: _EXACT_PLD
for _other in ("zcdp_to_approx", "zcdp_to_approx_cks20"):
    REASONS[("optimal_composition", _other)] = lambda e, d: _OPTIMAL_CLASS + _GENERIC_PURE
REASONS[("rdp_to_approx_bbgg20", "basic_composition")] = lambda e, d: (
    "Renyi divergences add up under composition, and the conversion to (eps, delta) costs "
    "about ln(1/delta)/(alpha - 1) once: a fixed price that basic composition does not pay, "
    "which the slower growth of the composed curve repays only for many compositions"
)
REASONS[("rdp_to_approx_bbgg20", "optimal_composition")] = lambda e, d: (
    "optimal composition is exact for the worst eps-DP mechanism; RDP uses this mechanism's "
    "own Renyi curve but loses in the conversion to (eps, delta): for few compositions that "
    "loss dominates, for many the mechanism-specific curve wins"
)
for _other in (
    "basic_composition",
    "zcdp_to_approx",
    "zcdp_to_approx_cks20",
    "rdp_to_approx_bbgg20",
    "pld_fft",
):
    REASONS[("gaussian_analytic", _other)] = _gdp_exact

#: Why two methods give the same number, by the pair of their theorem keys (either order).
SAME_REASONS: dict[frozenset[str], Reason] = {
    frozenset({"rdp_to_approx_bbgg20", "zcdp_to_approx_cks20"}): lambda e, d: (
        _GAUSSIAN_LINE + ", and the two conversions are one formula (Canonne, Kamath, Steinke "
        "2020, Corollary 13 is Balle et al. 2020, Theorem 21 at tau = rho alpha), both taken "
        "at the best real order"
        if _is_gaussian(e)
        else ""
    ),
}


def _relation(a: _Method, b: _Method, ks: Sequence[int]) -> list[tuple[int, int]]:
    """(k, sign of a - b) at the k values where both are finite (0: the same number)."""
    out = []
    for k in ks:
        x, y = a.epsilons.get(k), b.epsilons.get(k)
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            continue
        if abs(x - y) <= SAME * max(abs(x), abs(y), 1e-300):
            out.append((k, 0))
        else:
            out.append((k, -1 if x < y else 1))
    return out


def _pair_note(
    a: _Method, b: _Method, signs: list[tuple[int, int]], event: Event, delta: str
) -> tuple[str, bool] | None:
    """The note for one pair, and whether it has a reason."""
    if not signs:
        return None
    values = {s for _, s in signs}
    k_last = signs[-1][0]
    nums = f"k = {k_last}: {a.epsilons[k_last]:.6g} vs {b.epsilons[k_last]:.6g}"
    if values == {0}:
        text = f"{a.label} and {b.label} give the same epsilon at every k listed ({nums})."
        same = SAME_REASONS.get(frozenset({a.theorem.key, b.theorem.key}))
        why = same(event, delta) if same is not None else ""
        return (f"{text} Why: {why}.", True) if why else (text, False)
    if values <= {-1, 0} or values <= {0, 1}:
        low, high = (a, b) if -1 in values else (b, a)
        ties = [k for k, s in signs if s == 0]
        tie = f" (equal at k = {', '.join(map(str, ties))})" if ties else ""
        nums = f"k = {k_last}: {low.epsilons[k_last]:.6g} vs {high.epsilons[k_last]:.6g}"
        reason = REASONS.get((low.theorem.key, high.theorem.key))
        text = f"{low.label} is below {high.label} at every k listed{tie} ({nums})."
        if reason is not None:
            return f"{text} Why: {reason(event, delta)}.", True
        return text, False
    # they cross: describe by k ranges
    a_below = [k for k, s in signs if s < 0]
    b_below = [k for k, s in signs if s > 0]
    last_low = a if signs[-1][1] < 0 else b
    first_low = a if signs[0][1] < 0 else b
    text = (
        f"{a.label} and {b.label} cross: {a.label} is below at k = "
        f"{', '.join(map(str, a_below))}; {b.label} is below at k = "
        f"{', '.join(map(str, b_below))} ({nums})."
    )
    other = b if last_low is a else a
    reason = REASONS.get((last_low.theorem.key, other.theorem.key))
    if reason is not None and first_low is not last_low:
        return f"{text} Why: {reason(event, delta)}.", True
    return text, False


def ordering_notes(
    event: Event, methods: Sequence[_Method], ks: Sequence[int], delta: str
) -> list[str]:
    """Notes on the orderings that hold between ``methods`` over ``ks``.

    Args:
        event: the mechanism composed (some reasons depend on it).
        methods: the comparison's methods (label, theorem card, epsilon by k).
        ks: the k values, in the order shown.
        delta: the target delta as text.

    Returns:
        First the order at the largest k, then one note per pair that has a reason, then the
        other pairs' orderings, each with the numbers that show it.
    """
    ks = sorted(ks)
    notes: list[str] = []
    k_last = ks[-1]
    at_last = sorted(
        (m.epsilons[k_last], m.label)
        for m in methods
        if k_last in m.epsilons and math.isfinite(m.epsilons[k_last])
    )
    infinite = [m.label for m in methods if m.epsilons.get(k_last) == math.inf]
    if len(at_last) > 1:
        parts = []
        for i, (v, label) in enumerate(at_last):
            sep = ""
            if i:
                prev = at_last[i - 1][0]
                same = abs(v - prev) <= SAME * max(abs(v), abs(prev), 1e-300)
                sep = " = " if same else " < "
            parts.append(f"{sep}{label} {v:.6g}")
        notes.append(f"At k = {k_last}, tightest first: " + "".join(parts) + ".")
    if infinite:
        notes.append(f"No finite bound at k = {k_last} from: {', '.join(infinite)}.")
    explained: list[str] = []
    plain: list[str] = []
    for i, a in enumerate(methods):
        for b in methods[i + 1 :]:
            found = _pair_note(a, b, _relation(a, b, ks), event, delta)
            if found is not None:
                (explained if found[1] else plain).append(found[0])
    return notes + explained + plain
