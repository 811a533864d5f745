"""``dpaudit report all`` runs for minutes: it shows progress with an estimate of the time left,
weighted by each target's expected work (a 3,000,000-sample audit is not a one-bit one)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from dpaudit.cli import main
from dpaudit.report import OneRun, Records, Target
from dpaudit.report.progress import ReportProgress, duration_text, expected_work


def _target(name: str, **kwargs: object) -> Target:
    return Target(name=name, title=name, group="t", epsilon=1.0, **kwargs)  # type: ignore[arg-type]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_estimate_weighs_the_work_left() -> None:
    mech = lambda: lambda d, rng: 0.0  # noqa: E731
    small = _target("a/small", mechanism=mech, samples=100_000)
    big = _target("a/big", mechanism=mech, samples=900_000)
    none = _target("a/none")
    assert expected_work(small) == 2.0 and expected_work(big) == 10.0 and expected_work(none) == 1
    assert expected_work(big, audit=False) == 1.0
    records = _target("a/rec", mechanism=mech, records=Records(((0, 1),)))
    one_run = _target("a/one", one_run=OneRun(lambda: lambda inc, rng: inc, 10))
    assert expected_work(records) > expected_work(one_run) > expected_work(small)

    clock, out = _Clock(), io.StringIO()
    progress = ReportProgress([small, big, none], True, stream=out, clock=clock)
    assert progress.mode == "lines" and progress.remaining() is None
    progress.begin(small)
    clock.now = 20.0  # 2 units in 20 s: 10 s per unit
    progress.end(small)
    assert progress.remaining() == pytest.approx(110.0)  # 11 units left, not 2 targets x 20 s
    line = out.getvalue().strip()
    assert line == "[a/small: 20 s] 1/3 targets, 20 s, about 1 min 50 s left"


def test_no_progress_when_asked_or_when_quiet_by_default() -> None:
    out = io.StringIO()
    for show in (False, None):  # None: a bar on a terminal only; a StringIO is none
        progress = ReportProgress([_target("a/x")], show, stream=out)
        progress.begin(_target("a/x"))
        progress.end(_target("a/x"))
        progress.close()
    assert out.getvalue() == ""


def test_durations_read_as_people_write_them() -> None:
    assert [duration_text(s) for s in (0, 42.4, 425, 3725)] == [
        "0 s",
        "42 s",
        "7 min 05 s",
        "1 h 02 min",
    ]


@pytest.mark.slow
def test_the_command_shows_progress_in_a_log_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", "catalogue/laplace-count", "catalogue/randomized-response"]
    assert main([*argv, "--out", str(tmp_path), "--no-audit"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert re.fullmatch(r"\[catalogue/laplace-count: \d+ s\] 1/2 targets, .* left", err[0]), err
    assert err[1].startswith("[catalogue/randomized-response: ") and "2/2 targets" in err[1]
    assert main([*argv, "--out", str(tmp_path), "--no-audit", "--no-progress"]) == 0
    assert "targets" not in capsys.readouterr().err.split("reports in")[0]
