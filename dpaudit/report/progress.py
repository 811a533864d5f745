"""Progress of a report run, with an estimate of the time left.

``dpaudit report all`` runs about sixty audits of very different lengths (a one-run training,
a record search over a library, three million samples of a private predictor), so the time
left is estimated from the work done, not from the number of targets: each target weighs
:func:`expected_work` (its audit's samples, or a fixed share for a record search or a one-run
training; measured on the committed reports, see docs/reports.md), and the seconds per unit
of work so far, times the work left, is the estimate.  It is an estimate (``about``), shown
once the first target is done.

On a terminal the progress is a bar (tqdm); elsewhere (a CI log, a pipe) one line per target
on stderr, so a long run is never silent.  Nothing of it reaches the reports.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from dpaudit.report.target import Target

__all__ = ["ReportProgress", "duration_text", "expected_work"]

#: Work units of the parts of a report other than its audit (the accountant's privacy curve,
#: the verification of the claim, the plots).
BASE_WORK = 1.0
#: Samples per dataset of a Monte Carlo audit worth one work unit.
SAMPLES_PER_UNIT = 100_000
#: Work units of an audit whose neighbouring pair is searched over a record domain (the
#: library reports: about a minute each) and of a one-run audit of a training algorithm.
RECORDS_WORK = 12.0
ONE_RUN_WORK = 6.0


def expected_work(target: Target, audit: bool = True) -> float:
    """The relative cost of a target's report (work units; see the module docstring)."""
    if not audit or (target.mechanism is None and target.one_run is None):
        return BASE_WORK
    if target.one_run is not None:
        return BASE_WORK + ONE_RUN_WORK
    if target.records is not None:
        return BASE_WORK + RECORDS_WORK
    return BASE_WORK + target.samples / SAMPLES_PER_UNIT


def duration_text(seconds: float) -> str:
    """``42 s``, ``7 min 05 s`` or ``1 h 02 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class ReportProgress:
    """Progress of :func:`dpaudit.report.generate` on stderr.

    Args:
        targets: the targets, in the order they run.
        show: True: always (a bar on a terminal, a line per target elsewhere); None: a bar on
            a terminal only; False: never.
        audit: whether the audits run (their work then counts).
        stream: where to write (default ``sys.stderr``).
        clock: seconds, monotonic (for tests).
    """

    def __init__(
        self,
        targets: Sequence[Target],
        show: bool | None,
        *,
        audit: bool = True,
        stream: TextIO | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.work = [expected_work(t, audit) for t in targets]
        self.total = len(targets)
        self.done = 0
        self.work_done = 0.0
        self.start = clock()
        self.target_start = self.start
        terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.mode = None if show is False else ("bar" if terminal else "lines" if show else None)
        self.bar: Any = None
        if self.mode == "bar":
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=sum(self.work),
                file=self.stream,
                dynamic_ncols=True,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {postfix}",
            )

    def remaining(self) -> float | None:
        """Estimated seconds left (None before the first target is done)."""
        if self.done == 0 or self.work_done <= 0:
            return None
        rate = (self.clock() - self.start) / self.work_done
        return rate * sum(self.work[self.done :])

    def _status(self) -> str:
        left = self.remaining()
        elapsed = duration_text(self.clock() - self.start)
        return f"{self.done}/{self.total} targets, {elapsed}" + (
            f", about {duration_text(left)} left" if left is not None else ""
        )

    def begin(self, target: Target) -> None:
        """A target starts."""
        self.target_start = self.clock()
        if self.bar is not None:
            self.bar.set_description(target.name)
            self.bar.set_postfix_str(self._status(), refresh=True)

    def step(self, label: str) -> None:
        """A stage of the current target starts (describe, verify, curve, audit, plots)."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self._status()}; {label}", refresh=True)

    def end(self, target: Target) -> None:
        """A target is done."""
        work = self.work[self.done]
        self.done += 1
        self.work_done += work
        if self.bar is not None:
            self.bar.update(work)
            self.bar.set_postfix_str(self._status(), refresh=True)
        elif self.mode == "lines":
            took = duration_text(self.clock() - self.target_start)
            print(f"[{target.name}: {took}] {self._status()}", file=self.stream, flush=True)

    def close(self) -> None:
        """The run is over (or failed)."""
        if self.bar is not None:
            self.bar.close()
