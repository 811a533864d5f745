"""Audits on Dask give the local result for the same seed, through failures and lost workers."""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import dask
import numpy as np
import pytest

from dpaudit.audit import audit
from dpaudit.audit.distributed import DaskExecutor, is_dask_target
from dpaudit.audit.errors import MechanismError

distributed = pytest.importorskip("distributed")

import _dask_mechanisms as mech  # noqa: E402  (tests/distributed is on sys.path)

cloudpickle.register_pickle_by_value(mech)

#: One audit configuration for every comparison: 3 + 8 batches per dataset.
SEED = 20240901
CONFIG: dict[str, Any] = dict(epsilon=1.0, samples=200_000, seed=SEED, batch_size=20_000)


def _comparable(result: Any) -> dict[str, Any]:
    """Everything in a result except the wall time."""
    out = result.to_dict()
    out.pop("wall_time")
    return out


@pytest.fixture(scope="module")
def local_result() -> dict[str, Any]:
    """The in-process audit every Dask run must reproduce."""
    return _comparable(audit(mech.Laplace(1.0), 0.0, 1.0, **CONFIG))


def test_local_reference_is_sound(local_result: dict[str, Any]) -> None:
    # Laplace(1) has epsilon 1: the bound is close below it and no violation is reported.
    assert 0.8 < local_result["epsilon_lower"] <= 1.0
    assert local_result["violation"] is False


def test_client_gives_local_result(client: Any, local_result: dict[str, Any]) -> None:
    result = audit(mech.Laplace(1.0), 0.0, 1.0, executor=client, **CONFIG)
    assert _comparable(result) == local_result


def test_address_gives_local_result(cluster: Any, local_result: dict[str, Any]) -> None:
    address = cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    result = audit(mech.Laplace(1.0), 0.0, 1.0, executor=address, **CONFIG)
    assert _comparable(result) == local_result


def test_result_does_not_depend_on_batch_scheduling(client: Any) -> None:
    # Pairs searched and a discrete mechanism: more phases and keys, still the local result.
    kwargs: dict[str, Any] = dict(epsilon=0.5, samples=40_000, seed=7, batch_size=3_000)

    def run(**extra: Any) -> dict[str, Any]:
        return _comparable(audit(mech.Laplace(2.0), 0.0, 1.0, **kwargs, **extra))

    assert run(executor=client) == run()


def test_failed_task_is_retried_and_counted_once(
    client: Any, tmp_path: Path, local_result: dict[str, Any]
) -> None:
    marker = tmp_path / "failed"
    mechanism = mech.FailingOnce(1.0, marker, how="raise")
    result = audit(mechanism, 0.0, 1.0, executor=client, **CONFIG)
    assert marker.exists(), "the injected failure did not happen"
    assert _comparable(result) == local_result


def test_task_failing_every_time_fails_the_audit(client: Any) -> None:
    with (
        DaskExecutor(client, retries=1) as executor,
        pytest.raises(MechanismError, match="raised RuntimeError: injected permanent failure"),
    ):
        audit(mech.AlwaysFailing(1.0), 0.0, 1.0, executor=executor, **CONFIG)
    assert client.status == "running"  # a client passed in is never closed


#: Imported once by the fork server, so that each worker process (and the one a nanny starts
#: after a death) is forked ready instead of importing for seconds.
_PRELOAD = ["distributed", "numpy", "cloudpickle", "dpaudit.audit.runner"]


@contextlib.contextmanager
def _process_cluster() -> Iterator[tuple[Any, Any]]:
    """Two worker processes (with nannies that restart them) on 127.0.0.1, and a client.

    Workers come from a fork server where the platform has one: forking this multi-threaded
    test process directly could deadlock a child, and a fresh interpreter per worker costs
    seconds of imports.
    """
    methods = multiprocessing.get_all_start_methods()
    method = "forkserver" if "forkserver" in methods else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        if method == "forkserver":
            distributed.utils.get_mp_context().set_forkserver_preload(_PRELOAD)
        with (
            distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                scheduler_port=0,
                dashboard_address="127.0.0.1:0",  # loopback, any free port
            ) as cluster,
            distributed.Client(cluster, set_as_default=False) as client,
        ):
            yield cluster, client


@pytest.mark.slow
def test_worker_dying_mid_audit_keeps_the_certified_result(
    tmp_path: Path, local_result: dict[str, Any]
) -> None:
    marker = tmp_path / "died"
    mechanism = mech.FailingOnce(1.0, marker, how="die")
    with _process_cluster() as (_cluster, client):
        result = audit(mechanism, 0.0, 1.0, executor=client, **CONFIG)
    assert marker.exists(), "no worker died"
    assert _comparable(result) == local_result


@pytest.mark.slow
def test_worker_killed_from_outside_mid_audit(tmp_path: Path) -> None:
    # A worker process is killed by its nanny while batches are running and held.
    kwargs: dict[str, Any] = dict(epsilon=1.0, samples=2_000_000, seed=3, batch_size=50_000)
    expected = _comparable(audit(mech.Laplace(1.0), 0.0, 1.0, **kwargs))
    with _process_cluster() as (cluster, client):
        victim = next(iter(cluster.workers.values()))

        def kill_soon() -> None:
            while not client.has_what().get(victim.worker_address):
                time.sleep(0.01)
            cluster.sync(victim.kill)

        killer = threading.Thread(target=kill_soon, daemon=True)
        killer.start()
        result = audit(mech.Laplace(1.0), 0.0, 1.0, executor=client, **kwargs)
        killer.join(timeout=30)
    assert _comparable(result) == expected


def test_tasks_are_named_by_batch_position(client: Any) -> None:
    seed = np.random.SeedSequence(5, spawn_key=(1, 0, 1, 7))
    data = np.arange(1000.0)
    with DaskExecutor(client) as executor:
        first = executor.submit(np.add, data, seed.spawn_key[-1])
        second = executor.submit(_tagged, data, seed)
        assert second.key.startswith("dpaudit-_tagged-1.0.1.7-")
        assert first.key != second.key
        np.testing.assert_array_equal(first.result(), data + 7)
        assert second.result() == (1000, (1, 0, 1, 7))


def _tagged(data: np.ndarray, seed: np.random.SeedSequence) -> tuple[int, tuple[int, ...]]:
    return len(data), tuple(seed.spawn_key)


def test_executor_opened_from_address_is_closed(cluster: Any) -> None:
    executor = DaskExecutor(cluster.scheduler_address)
    assert executor.submit(abs, -3).result() == 3
    executor.shutdown()
    assert executor.client.status == "closed"


def test_is_dask_target(client: Any) -> None:
    assert is_dask_target(client)
    assert is_dask_target("tcp://127.0.0.1:8786")
    assert not is_dask_target(None)
    assert not is_dask_target(object())
    with DaskExecutor(client) as executor:
        assert not is_dask_target(executor)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(target=""), r"executor must be a distributed.Client or a scheduler address"),
        (dict(target=3), r"executor must be .* got int"),
        (dict(target="tcp://127.0.0.1:8786", retries=-1), r"retries must be .*\[0, inf\).*-1"),
        (dict(target="tcp://127.0.0.1:8786", retries=1.5), r"retries must be .*1\.5"),
        (dict(target="tcp://127.0.0.1:8786", timeout=0), r"timeout must be .*\(0, inf\).*0"),
    ],
)
def test_bad_input_is_rejected(kwargs: dict[str, Any], match: str) -> None:
    target = kwargs.pop("target")
    with pytest.raises(ValueError, match=match):
        DaskExecutor(target, **kwargs)


def test_bad_address_through_audit_is_rejected() -> None:
    with pytest.raises(ValueError, match="executor must be"):
        audit(mech.Laplace(1.0), 0.0, 1.0, executor="  ", **CONFIG)


def test_unreachable_scheduler_fails_fast() -> None:
    with pytest.raises(OSError):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1.0)


@pytest.mark.parametrize("streamed", [False, True])
def test_selection_parts_run_on_the_workers(
    client: Any, local_result: dict[str, Any], monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    """The selection's search (every selection sample held) or proposal (a streamed
    selection, forced by a small pilot) runs part by part as Dask tasks, each drawing the
    pilot itself, not in this process; the result is the local one."""
    from dpaudit.audit import streaming

    if streamed:
        monkeypatch.setattr(streaming, "HELD_SELECTION_SAMPLES", 20_000)
        expected = _comparable(audit(mech.Laplace(1.0), 0.0, 1.0, **CONFIG))
    else:
        expected = local_result
    with distributed.get_task_stream(client) as stream:
        result = audit(mech.Laplace(1.0), 0.0, 1.0, executor=client, **CONFIG)
    assert _comparable(result) == expected
    names = {t["key"].split("-")[1] for t in stream.data if t["key"].startswith("dpaudit-")}
    part = "_propose_task" if streamed else "_search_task"
    assert part in names, sorted(names)


@pytest.mark.parametrize(
    ("mechanism", "d0", "d1", "extra"),
    [
        (mech.GroupBy(), ["a", "b"], ["a", "b", "c"], {}),
        (mech.RaisesOnEmpty(), [], [1.0], {"on_error": "output"}),
    ],
)
def test_structured_outputs_and_exceptions_give_the_local_result(
    client: Any, mechanism: Any, d0: Any, d1: Any, extra: dict[str, Any]
) -> None:
    """Dict outputs (a layout fixed in the client, converted on the workers) and exceptions
    as outputs (the wrapped mechanism pickled to the workers): the same result as locally,
    flagged (a zero-count witness: 2,250 certification samples, bound about 6.2)."""
    config: dict[str, Any] = dict(epsilon=1.0, samples=3_000, seed=SEED, batch_size=500)
    local = audit(mechanism, d0, d1, **config, **extra)
    on_dask = audit(mechanism, d0, d1, executor=client, **config, **extra)
    assert _comparable(on_dask) == _comparable(local)
    assert local.violation
