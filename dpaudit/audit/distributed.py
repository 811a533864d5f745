"""Run an audit's sampling batches as Dask (``dask.distributed``) tasks.

The runner (:mod:`dpaudit.audit.runner`) cuts sampling into fixed-size batches and seeds
each batch from its *position* (phase, pair, dataset, batch index) with
``numpy.random.SeedSequence``. This module hands those batches to a Dask scheduler: one task
per batch, the seed travelling with the task, never derived from the worker that runs it. An
audit's result therefore depends on its seed and batch size only, and is bit-for-bit the one
the in-process run gives.

Failures: a task that raises is retried (``retries`` times) with the *same* seed, so a retry
draws the same samples; a task lost with a dying worker is recomputed by the scheduler (up to
Dask's ``distributed.scheduler.allowed-failures``). Each batch is one future, at one fixed
position of the runner's result list, and its result is read exactly once, so no batch is
counted twice and none is lost; a task that keeps failing fails the audit instead of
shrinking it.

Large arguments (the mechanism, the datasets, the events) are sent to the cluster once per
audit as small *recomputable* tasks rather than with every batch, so a worker that dies
holding them does not lose them.  They travel as pickled bytes that a worker unpickles in a
task (:func:`_loads`): the scheduler never needs the user's modules, and a worker that cannot
import the mechanism's module fails that task with an ``ImportError`` naming the module,
which the runner reports in one line (:class:`~dpaudit.audit.errors.MechanismError`). The
runner checks this up front (:meth:`DaskExecutor.check_importable`, on every worker) before
it draws any sample.

Dask is an optional dependency (``pip install 'dpaudit[dask]'``); it is imported only when a
Dask executor is made.

Public API:
    DaskExecutor(target, *, retries=DEFAULT_RETRIES, timeout=DEFAULT_TIMEOUT)
    is_dask_target(executor) -> bool
"""

from __future__ import annotations

import itertools
import sys
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["DEFAULT_RETRIES", "DEFAULT_TIMEOUT", "DaskExecutor", "is_dask_target"]

#: Times a batch task that raised is run again (same seed, same samples) before the audit fails.
DEFAULT_RETRIES = 3
#: Seconds to wait for a scheduler given by address.
DEFAULT_TIMEOUT = 30.0

#: Arguments small enough to travel with every task; anything else is shared once.
_INLINE = (bool, int, float, str, np.integer, np.floating, np.random.SeedSequence)


def is_dask_target(executor: Any) -> bool:
    """Whether ``executor`` is something :class:`DaskExecutor` wraps.

    Args:
        executor: the ``executor`` argument of :func:`dpaudit.audit.audit`.

    Returns:
        True for a scheduler address (a string) or a ``distributed.Client``; False otherwise
        (``None``, a ``concurrent.futures.Executor``, a :class:`DaskExecutor`, ...).
    """
    if isinstance(executor, str):
        return True
    distributed = sys.modules.get("distributed")  # a Client exists only if this is imported
    return distributed is not None and isinstance(executor, distributed.Client)


def _loads(payload: bytes) -> Any:
    """Task body that holds a shared argument on the cluster (recomputable if lost).

    Raises:
        ImportError: if this worker cannot rebuild the object (its module is missing, or
            differs from the client's).
    """
    import cloudpickle

    try:
        return cloudpickle.loads(payload)
    except ImportError:
        raise
    except (AttributeError, TypeError, EOFError) as err:  # a module other than the client's
        raise ImportError(
            f"a worker cannot rebuild an argument of the audit ({type(err).__name__}: {err}); "
            "the worker's modules differ from the client's"
        ) from err


def _can_load(payload: bytes) -> bool:
    """Run on every worker by :meth:`DaskExecutor.check_importable`."""
    _loads(payload)
    return True


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError(
            "running an audit on Dask needs dask.distributed: pip install 'dpaudit[dask]'"
        ) from err
    return distributed


class DaskExecutor:
    """An executor (``submit(fn, *args) -> future``) that runs batch tasks on Dask.

    :func:`dpaudit.audit.audit` builds one for you when given ``executor=client`` or
    ``executor="tcp://127.0.0.1:8786"``; build one yourself to choose ``retries``, and then
    use it as a context manager (or call :meth:`shutdown`) so the arguments it shared with
    the cluster are released.

    Args:
        target: a ``distributed.Client``, used as is and never closed here, or a scheduler
            address such as ``"tcp://127.0.0.1:8786"``, for which a client is opened (and
            closed by :meth:`shutdown`).
        retries: times a task that raised is retried with the same seed, in [0, inf).
        timeout: seconds to wait when connecting to an address, in (0, inf).

    Raises:
        ValueError: if ``target`` is neither a client nor a non-empty address, or ``retries``
            or ``timeout`` is out of range.
        OSError: if no scheduler answers at the address within ``timeout``.
    """

    def __init__(
        self,
        target: Any,
        *,
        retries: int = DEFAULT_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if isinstance(retries, bool) or not isinstance(retries, (int, np.integer)) or retries < 0:
            raise ValueError(f"retries must be an integer in [0, inf), got {retries!r}")
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not timeout > 0
            or timeout == float("inf")
        ):
            raise ValueError(f"timeout must be a number of seconds in (0, inf), got {timeout!r}")
        if isinstance(target, str):
            if not target.strip():
                raise ValueError(
                    "executor must be a distributed.Client or a scheduler address "
                    f"such as 'tcp://127.0.0.1:8786', got {target!r}"
                )
            distributed = _import_distributed()
            self.client = distributed.Client(target.strip(), timeout=timeout, set_as_default=False)
            self._owns_client = True
        elif is_dask_target(target):
            self.client = target
            self._owns_client = False
        else:
            raise ValueError(
                "executor must be a distributed.Client or a scheduler address such as "
                f"'tcp://127.0.0.1:8786', got {type(target).__name__}"
            )
        self.retries = int(retries)
        self._token = uuid.uuid4().hex[:12]
        self._counter = itertools.count()
        self._shared: dict[int, tuple[Any, Any]] = {}

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def _share(self, value: Any) -> Any:
        """The value itself if small, else a future holding it on the cluster (made once)."""
        if value is None or isinstance(value, _INLINE):
            return value
        held = self._shared.get(id(value))
        if held is None:
            key = f"dpaudit-data-{self._token}-{len(self._shared)}"
            import cloudpickle

            payload = cloudpickle.dumps(value)
            future = self.client.submit(_loads, payload, key=key, retries=self.retries)
            # Keep ``value`` alive with its future so that its id() is never reused.
            held = self._shared[id(value)] = (value, future)
        return held[1]

    def check_importable(self, obj: Any) -> None:
        """Check, before any task runs, that every worker can rebuild ``obj`` (the mechanism):
        import its module and whatever that module needs.

        Raises:
            ImportError: from the first worker that cannot (the runner turns it into a
                one-line :class:`~dpaudit.audit.errors.MechanismError`).
        """
        import cloudpickle

        self.client.run(_can_load, cloudpickle.dumps(obj))

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Submit one batch task.

        Args:
            fn: the task body (the runner's sampling or counting function).
            *args: its arguments; the batch's ``SeedSequence`` travels with the task, and its
                position (``spawn_key``) names the task, e.g.
                ``dpaudit-tally_task-1.0.1.7-<audit token>-<n>``.

        Returns:
            A ``distributed.Future`` whose ``result()`` is the batch's result.
        """
        position = next((a.spawn_key for a in args if isinstance(a, np.random.SeedSequence)), ())
        name = getattr(fn, "__name__", "task")
        key = f"dpaudit-{name}-{'.'.join(map(str, position))}-{self._token}-{next(self._counter)}"
        shared = [self._share(a) for a in args]
        return self.client.submit(fn, *shared, key=key, retries=self.retries, pure=False)

    def shutdown(self, wait: bool = True) -> None:
        """Release the shared arguments; close the client if it was opened from an address.

        Args:
            wait: accepted for compatibility with ``concurrent.futures.Executor``.
        """
        del wait
        futures = [future for _, future in self._shared.values()]
        self._shared.clear()
        if futures and self.client.status == "running":
            self.client.cancel(futures)
        if self._owns_client:
            self.client.close()
