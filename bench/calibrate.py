"""Benchmark: calibrating DP-SGD's noise multiplier, dpaudit against dp_accounting and Opacus.

Run ``python bench/calibrate.py > bench/calibrate.md`` (Opacus needs torch: ``pip install
torch==2.13.0 opacus``, bench dependencies only; without it its columns read "n/a").  For each
DP-SGD schedule and (epsilon, delta) target, in the same run:

* dpaudit: ``calibrate(expr, epsilon=, delta=, parameter="sigma")``: the smallest sigma whose
  *certified* epsilon upper bound meets the target, with the certified [lower, upper] there;
* dp_accounting: ``calibrate_dp_mechanism`` with a fresh ``PLDAccountant`` (its default grid,
  value_discretization_interval 1e-4), its default tolerance (1e-6 in sigma) and its default
  bracket (``LowerEndpointAndGuess(0, 1)``: sigma = 0 costs nothing, epsilon is infinite; a
  lower end of 0.1 made it evaluate a PLD at sigma = 0.1, 84 CPU seconds of a 1,000-step
  calibration): the smallest sigma at which its PLD *estimate* meets the target (the reference
  of the issue: dpaudit's sigma must be within 0.1% of it);
* Opacus: ``get_noise_multiplier(..., accountant="rdp")`` (its default epsilon_tolerance 0.01),
  for homogeneous schedules only (it takes one sample rate and a step count).

Columns: each library's sigma and seconds; dpaudit's sigma relative to dp_accounting's; the
epsilon dpaudit certifies at dp_accounting's and at Opacus's sigma (an upper bound: a peer's
sigma whose certified epsilon exceeds the target is not proven to meet it); time ratios.
Times are CPU seconds of this process (``time.process_time``: every library here computes in
one thread, and the machine is shared, so wall-clock time would measure the neighbours); one
run per cell for dp_accounting (its calibrations take 5-50 CPU seconds each), the median of
:data:`REPEATS` runs for dpaudit (its PLD memo cleared before each) and Opacus, taken in turn,
and the Opacus / dpaudit column is the median of the pairs' ratios.  Imports happen before
any timer starts.  ``python bench/calibrate.py 0 3`` runs only the schedules
of those indices.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpaudit.accountant import Accountant, calibrate
from dpaudit.accountant import currencies as _currencies
from dpaudit.parse import parse_event


@dataclass(frozen=True)
class Case:
    """One DP-SGD schedule: phases of (sample rate as text, steps), the epsilon target, delta."""

    name: str
    phases: tuple[tuple[str, int], ...]
    epsilon: float
    delta: str

    def expression(self, sigma: str = "sigma") -> str:
        parts = [
            f"SelfComposed(PoissonSampled(Gaussian({sigma}), {q}), {k})" for q, k in self.phases
        ]
        return parts[0] if len(parts) == 1 else "Composed([" + ", ".join(parts) + "])"


MNIST = "256/60000"
CASES = [
    Case("1,000 steps", ((MNIST, 1000),), 1.0, "1e-5"),
    Case("10,000 steps", ((MNIST, 10000),), 3.0, "1e-5"),
    Case("100,000 steps", ((MNIST, 100000),), 3.0, "1e-5"),
    Case("1,000,000 steps", ((MNIST, 1000000),), 8.0, "1e-5"),
    Case(
        "heterogeneous: batch 128/256/512 x 2000/4000/2000",
        (("128/60000", 2000), ("256/60000", 4000), ("512/60000", 2000)),
        3.0,
        "1e-5",
    ),
]


def _rate(text: str) -> float:
    num, _, den = text.partition("/")
    return float(Fraction(int(num), int(den) if den else 1))


#: dpaudit's and Opacus's calibrations are timed this many times, in turn (dpaudit, Opacus,
#: dpaudit, ...), and the medians reported, with the median of the pairs' time ratios (they
#: take tenths of a second, and a shared machine's speed drifts by tens of percent between
#: minutes: taking them in turn lets a drift hit both); dp_accounting's, taking 5-50 s each,
#: once.
REPEATS = 9


def ours_once(case: Case) -> tuple[Any, float]:
    _currencies._PLD_MEMO.clear()  # nothing reused from an earlier case or run
    start = time.process_time()
    result = calibrate(case.expression(), epsilon=case.epsilon, delta=case.delta, parameter="sigma")
    return result, time.process_time() - start


def dp_accounting_sigma(case: Case) -> tuple[float | None, float, int]:
    import dp_accounting
    from dp_accounting import mechanism_calibration
    from dp_accounting.pld import pld_privacy_accountant

    def event(sigma: float) -> Any:
        parts = [
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(_rate(q), dp_accounting.GaussianDpEvent(sigma)),
                k,
            )
            for q, k in case.phases
        ]
        return parts[0] if len(parts) == 1 else dp_accounting.ComposedDpEvent(parts)

    calls: list[float] = []

    def counted(sigma: float) -> Any:
        calls.append(sigma)
        return event(sigma)

    start = time.process_time()
    try:
        sigma = mechanism_calibration.calibrate_dp_mechanism(
            pld_privacy_accountant.PLDAccountant, counted, case.epsilon, float(case.delta)
        )
    except Exception:  # a peer failing is a result to report
        return None, time.process_time() - start, len(calls)
    return float(sigma), time.process_time() - start, len(calls)


def opacus_once(case: Case, get: Callable[..., float] | None) -> tuple[float | None, float]:
    if get is None or len(case.phases) != 1:
        return None, 0.0
    ((q, k),) = case.phases
    start = time.process_time()
    sigma = get(
        target_epsilon=case.epsilon,
        target_delta=float(case.delta),
        sample_rate=_rate(q),
        steps=k,
        accountant="rdp",
    )
    return float(sigma), time.process_time() - start


def in_turn(
    case: Case, get: Callable[..., float] | None
) -> tuple[Any, float, float | None, float, float | None]:
    """dpaudit and Opacus, :data:`REPEATS` times each in turn: dpaudit's result and median
    time, Opacus's sigma and median time, and the median of the pairs' ratios Opacus /
    dpaudit (None without Opacus)."""
    ours_t, op_t, ratios = [], [], []
    result, op = None, None
    for _ in range(REPEATS):
        result, t = ours_once(case)
        op, t_op = opacus_once(case, get)
        ours_t.append(t)
        if op is not None:
            op_t.append(t_op)
            ratios.append(t_op / t)
    return (
        result,
        statistics.median(ours_t),
        op,
        statistics.median(op_t) if op_t else 0.0,
        statistics.median(ratios) if ratios else None,
    )


def certified_at(case: Case, sigma: float | None) -> str:
    """dpaudit's certified epsilon upper bound at a peer's sigma (the float taken exactly)."""
    if sigma is None:
        return "-"
    event = parse_event(case.expression(repr(sigma)))
    g = Accountant().guarantee(event, Fraction(case.delta))
    mark = "" if g.epsilon_upper <= case.epsilon else " (above the target)"
    return f"{g.epsilon_upper:.4f}{mark}"


def _opacus() -> Callable[..., float] | None:
    try:
        import warnings

        warnings.filterwarnings("ignore", module="opacus")
        from opacus.accountants.utils import get_noise_multiplier
    except Exception:  # torch or opacus absent: its columns read n/a
        return None
    return get_noise_multiplier


def main() -> None:
    import dp_accounting  # noqa: F401  (imported before the timers)

    get = _opacus()
    calibrate("Gaussian(sigma)", epsilon=1, delta="1e-5", parameter="sigma")  # warm imports
    print(
        "| schedule | target (eps, delta) | dpaudit sigma [eps lower, upper] | CPU s (evals) "
        "| dp_accounting sigma | CPU s (evals) | dpaudit / dp_accounting sigma - 1 "
        "| dpaudit's certified eps at dp_accounting's sigma "
        "| Opacus (RDP) sigma | CPU s | dpaudit's certified eps at Opacus's sigma "
        "| time: dp_accounting / dpaudit | time: Opacus / dpaudit |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    chosen = [CASES[int(i)] for i in sys.argv[1:]] or CASES
    for case in chosen:
        peer, t_peer, n_peer = dp_accounting_sigma(case)
        result, t_ours, op, t_op, ratio = in_turn(case, get)
        rel = f"{result.value / peer - 1:+.4%}" if peer else "-"
        peer_text = f"{peer:.6f}" if peer else "failed"
        op_text, op_time = (f"{op:.6f}", f"{t_op:.2f}") if op else ("n/a", "-")
        op_ratio = f"{ratio:.2f}" if ratio is not None else "-"
        phases = ", ".join(f"{q} x {k}" for q, k in case.phases)
        print(
            f"| {case.name} ({phases}) | ({case.epsilon:g}, {case.delta}) "
            f"| {result.to_dict()['value_exact']} "
            f"[{result.epsilon_lower:.4f}, {result.epsilon_upper:.4f}] "
            f"| {t_ours:.2f} ({result.evaluations}) | {peer_text} | {t_peer:.2f} ({n_peer}) "
            f"| {rel} "
            f"| {certified_at(case, peer)} | {op_text} | {op_time} "
            f"| {certified_at(case, op)} | {t_peer / t_ours:.1f} | {op_ratio} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
