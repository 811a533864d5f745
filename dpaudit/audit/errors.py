"""Errors of the auditor that name who failed: the mechanism under audit or the engine.

* :class:`MechanismError` (a ``ValueError``): the mechanism under audit raised, returned
  outputs the auditor cannot handle, cannot be sent to worker processes (not picklable) or
  cannot be imported there.  The command line reports it as bad input (exit code 2).
* :class:`EngineError` (a ``RuntimeError``): the execution engine failed (a worker process
  died, a Dask task failed for a reason other than the mechanism).  The command line reports
  it as an engine failure (exit code 3).

:data:`ON_ERROR` names what the record search does when the mechanism raises (here, where
the command line reads it without importing NumPy).
"""

from __future__ import annotations

__all__ = ["ON_ERROR", "EngineError", "MechanismError"]

#: What the record search does when the function raises on a candidate pair: refuse the
#: pair and go on, abort, or (passed on to the final audit) treat the exception as an outcome.
ON_ERROR = ("skip", "raise", "output")


class MechanismError(ValueError):
    """The mechanism under audit failed or returned something the auditor cannot handle.

    Attributes:
        raised: when the mechanism itself raised, the exception's type name and its message
            (``("ZeroDivisionError", "mean of no records")``); None for any other failure.
            Kept when the error crosses from a worker process (pickled with the instance).
    """

    def __init__(self, message: str, *, raised: tuple[str, str] | None = None) -> None:
        super().__init__(message)
        self.raised = raised


class EngineError(RuntimeError):
    """The engine running the audit's batches (process pool, Dask) failed."""
