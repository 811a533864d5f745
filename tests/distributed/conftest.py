"""A small Dask cluster on the loopback interface, shared by the tests of this package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="package")
def cluster() -> Iterator[object]:
    """Two single-threaded in-process workers behind a TCP scheduler on 127.0.0.1."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address="127.0.0.1:0",  # loopback, any free port
    ) as local:
        yield local


@pytest.fixture()
def client(cluster: distributed.LocalCluster) -> Iterator[distributed.Client]:
    """A fresh client on the shared cluster, closed after the test."""
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c
