"""Benchmark: the calibration search's forecast and constants, on 42 DP-SGD schedules.

Run ``python bench/calibration_search.py > bench/calibration_search.md``.  For the search from
the saddle-point forecast (:mod:`dpaudit.accountant.calibration_forecast`, the default), then
without it for each setting of the search's constants
(:data:`~dpaudit.accountant.calibration_search.QUICK_WIDTH`, where the coarse phase stops, and
:data:`~dpaudit.accountant.calibration_search.FIRST_SLOPE`, the slope its first step assumes),
every schedule ``SelfComposed(PoissonSampled(Gaussian(sigma), q), k)``
with q in {256/60000, 1/100}, k in {300, 1000, 3000, 10^4, 3 10^4, 10^5, 10^6} and an epsilon
target in {1, 3, 8} at delta 1e-5 is calibrated for sigma: the table gives the coarse and full
evaluations the searches made (deterministic), how many schedules one full evaluation settled,
their CPU seconds in all (one run each, the PLD memo cleared before each calibration: noisy,
the counts are the measure), and how many answers are larger and smaller than the first
row's (each is certified; a different one is a different point within the search's 1e-4
tolerance: a smaller sigma is better).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

from dpaudit.accountant import calibrate, calibration_forecast, currencies
from dpaudit.accountant import calibration_search as search

SCHEDULES = [
    (f"SelfComposed(PoissonSampled(Gaussian(sigma), {q}), {k})", eps)
    for q in ("256/60000", "1/100")
    for k in (300, 1000, 3000, 10_000, 30_000, 100_000, 1_000_000)
    for eps in (1.0, 3.0, 8.0)
]

#: (forecast, QUICK_WIDTH, FIRST_SLOPE): the current setting first (from the forecast; the
#: constants are those of the search without it), then without the forecast: the current
#: constants, the previous ones and neighbours.
SETTINGS = [
    (True, 2e-2, 3.0),
    (False, 2e-2, 3.0),
    (False, 3e-3, 2.0),
    (False, 1e-2, 2.0),
    (False, 1e-2, 3.0),
    (False, 2e-2, 4.0),
]


@contextmanager
def _constants(forecast: bool, width: float, slope: float) -> Iterator[dict[str, int]]:
    saved = search.QUICK_WIDTH, search.FIRST_SLOPE, calibration_forecast.ENABLED
    search.QUICK_WIDTH, search.FIRST_SLOPE = width, slope
    calibration_forecast.ENABLED = forecast
    counts = {"quick": 0, "full": 0}
    real = search._Search.probe

    def counted(self: search._Search, v: object, full: bool) -> search.Probe:
        seen = len(self.probes)
        found = real(self, v, full)  # type: ignore[arg-type]
        if len(self.probes) > seen:
            counts["full" if full else "quick"] += 1
        return found

    search._Search.probe = counted  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        search._Search.probe = real  # type: ignore[method-assign]
        search.QUICK_WIDTH, search.FIRST_SLOPE, calibration_forecast.ENABLED = saved


def main() -> None:
    calibrate(SCHEDULES[0][0], epsilon=1.0, delta="1e-5", parameter="sigma")  # warm-up
    first: list[Fraction] | None = None
    print(
        "| forecast | QUICK_WIDTH | FIRST_SLOPE | coarse evaluations | full evaluations | all |"
        " schedules settled by one full evaluation | CPU s |"
        " answers larger / smaller than the first row's (most relative difference) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for forecast, width, slope in SETTINGS:
        answers = []
        settled = 0
        with _constants(forecast, width, slope) as counts:
            start = time.process_time()
            for expression, eps in SCHEDULES:
                with currencies._PLD_MEMO_LOCK:
                    currencies._PLD_MEMO.clear()
                before = counts["quick"] + counts["full"]
                found = calibrate(expression, epsilon=eps, delta="1e-5", parameter="sigma")
                answers.append(found.value_exact)
                settled += counts["quick"] + counts["full"] - before == 1
            spent = time.process_time() - start
        pairs = list(zip(answers, first or answers, strict=True))
        larger = sum(a > b for a, b in pairs)
        smaller = sum(a < b for a, b in pairs)
        worst = max((abs(a / b - 1) for a, b in pairs), default=0)
        differ = "-" if first is None else f"{larger} / {smaller} (at most {float(worst):.1e})"
        first = first or answers
        total = counts["quick"] + counts["full"]
        print(
            f"| {'yes' if forecast else 'no'} | {width:g} | {slope:g} | {counts['quick']} |"
            f" {counts['full']} | {total} | {settled} | {spent:.1f} | {differ} |"
        )


if __name__ == "__main__":
    main()
