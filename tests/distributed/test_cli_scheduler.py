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


def test_workers_that_cannot_import_the_mechanism_fail_in_one_line(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # The certification batches run on the workers, which cannot import the object's module:
    # one line naming the missing module, exit code 2 (not 1, the violation code), no trace.
    argv = [
        "audit",
        "_dask_mechanisms:UNIMPORTABLE",
        "--d0",
        "0",
        "--d1",
        "1",
        "--epsilon",
        "1",
        "--samples",
        "20000",
        "--seed",
        "3",
        "--no-progress",
        "--scheduler",
        cluster.scheduler_address,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "cannot import the mechanism" in err and "dpaudit_test_module_missing" in err
    assert "Traceback" not in err
    assert main([*argv, "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["exit_code"] == 2 and error["type"] == "bad_input"


def test_engine_failure_is_exit_3_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The engine itself fails (not the mechanism): exit code 3, one line, no traceback.
    from dpaudit.audit import runner

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionResetError("scheduler connection lost")

    monkeypatch.setattr(runner.DaskExecutor, "submit", broken)
    argv = [
        "audit",
        "_dask_mechanisms:UNIMPORTABLE",
        "--d0",
        "0",
        "--d1",
        "1",
        "--epsilon",
        "1",
        "--samples",
        "20000",
        "--seed",
        "3",
        "--no-progress",
        "--scheduler",
        "tcp://127.0.0.1:1",
    ]
    monkeypatch.setattr(runner.DaskExecutor, "__init__", lambda self, target: None)
    monkeypatch.setattr(runner.DaskExecutor, "shutdown", lambda self, wait=True: None)
    monkeypatch.setattr(runner.DaskExecutor, "check_importable", lambda self, obj: None)
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "engine failure" in err and "scheduler connection lost" in err


def test_workers_are_checked_before_any_sampling(
    cluster: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every worker must rebuild the mechanism before the audit samples: no batch is submitted
    # and none is drawn in the client process (only the two probe runs, which never leave it).
    from dpaudit.audit import runner

    def no_batches(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a batch ran before the workers were checked")

    monkeypatch.setattr(runner.DaskExecutor, "submit", no_batches)
    monkeypatch.setattr(runner, "draw", no_batches)
    argv = [
        "audit",
        "_dask_mechanisms:UNIMPORTABLE",
        "--d0",
        "0",
        "--d1",
        "1",
        "--epsilon",
        "1",
        "--samples",
        "2000",
        "--seed",
        "3",
        "--scheduler",
        cluster.scheduler_address,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "cannot import the mechanism" in err and "dpaudit_test_module_missing" in err
