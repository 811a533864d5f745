"""``dpaudit audit --scheduler ADDRESS`` runs the sampling on Dask with the local result."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dpaudit.cli import main

pytest.importorskip("distributed")

ARGS = [
    "audit",
    "mechanisms.broken:BrokenLaplaceTooLittleNoise",
    "--samples",
    "20000",
    "--seed",
    "11",
    "--no-progress",
    "--json",
]


def _run(capsys: pytest.CaptureFixture[str], extra: list[str]) -> tuple[int, dict[str, Any]]:
    status = main([*ARGS, *extra])
    result = json.loads(capsys.readouterr().out)
    result.pop("wall_time")
    return status, result


def test_scheduler_option_gives_local_result(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _run(capsys, [])
    remote = _run(capsys, ["--scheduler", cluster.scheduler_address])
    assert remote == local
    assert local[0] == 1  # the broken mechanism is flagged either way


def test_scheduler_with_exact_is_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    status = main([*ARGS, "--exact", "--scheduler", "tcp://127.0.0.1:8786"])
    assert status == 2
    assert "--scheduler must not be combined with --exact" in capsys.readouterr().err
