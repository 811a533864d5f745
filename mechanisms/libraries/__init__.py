"""Adapters that audit real DP libraries (OpenDP, IBM diffprivlib, PyDP, pipeline-dp, Opacus,
smartnoise-sql, tmlt.core) through dpaudit's public API.

Each adapter is a module-level object ``fn(data, rng)`` over a record dataset (a 2-D float
array, one row per record), as :func:`dpaudit.audit.audit_records` and
``dpaudit audit MODULE:NAME --records ...`` expect, with ``fn.batch(data, n, rng)`` for
vectorised sampling, and it carries what an audit needs: ``domain`` (the record domain),
``relation``, ``sizes``, and the library's own privacy claim ``epsilon``/``delta``.

The libraries are optional (test-only dependencies, the ``dev`` extra): importing this package
never imports them; an adapter imports its library the first time it runs and raises
:class:`LibraryUnavailableError` (an ImportError) saying what to install when it is missing.

Randomness: dpaudit injects a seeded ``numpy.random.Generator``.  diffprivlib accepts a
``random_state``, so its adapters derive one from ``rng`` and the audits are reproducible from
their seed.  OpenDP draws from the operating system's CSPRNG and offers no seed (by design:
its samplers must not be predictable); an audit of an OpenDP adapter is a valid audit of the
code, but it is not reproducible from its seed, and dpaudit says so (``reproducible=False``).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "LibraryAdapter",
    "LibraryUnavailableError",
    "adapter_maker",
    "by_name",
    "library_version",
]


class LibraryUnavailableError(ImportError):
    """The audited library is not installed or does not import here (the message says why)."""


def library_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``"not installed"``."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def import_library(module: str, install: str) -> Any:
    """Import ``module`` or raise :class:`LibraryUnavailableError` naming ``install``."""
    try:
        return importlib.import_module(module)
    except ImportError as err:  # missing, or broken by its own dependencies
        raise LibraryUnavailableError(
            f"{module} is needed to run this adapter but does not import here "
            f"({type(err).__name__}: {err}); install it with `pip install {install}` "
            "(or pip install -e '.[dev]' -c requirements/ci-constraints.txt)"
        ) from err


@dataclasses.dataclass(eq=False)
class LibraryAdapter:
    """One audited library API as a function over record datasets.

    Attributes:
        name: short name (``opendp-integer-laplace-sum``).
        library: the distribution audited (``opendp``, ``diffprivlib``).
        api: the library API audited, as a user would call it.
        summary: what is computed, and the privacy claim it is audited against.
        domain: the record domain (one entry per column), for ``audit_records``.
        relation: ``"replace-one"`` or ``"add-remove"``, the relation the claim is about.
        sizes: dataset sizes searched (a sized query fixes one size).
        epsilon: the claimed epsilon (the library's own accounting where it has one): a
            number, or a function of the dataset (2-D float array) where the library's claim
            depends on it (Opacus: on the dataset size).
        delta: the claimed delta.
        seedable: whether ``rng`` fixes the outputs (False: the library's own CSPRNG).
        release: ``release(data, rng)`` returning one output.
        release_batch: ``release_batch(data, n, rng)`` returning n outputs (None: loop).
        finding: a privacy bug found in this API by the audits, with its evidence ("" when
            none): its report then expects the audit to flag it.
        plan: zero-argument callable returning the event (:mod:`dpaudit.events`) the
            library's claim rests on, for the accountant's cross-check in the report (None
            where dpaudit has no event for the library's algorithm).
    """

    name: str
    library: str
    api: str
    summary: str
    domain: list[Any]
    relation: str
    sizes: tuple[int, int]
    epsilon: float | Callable[[np.ndarray], float]
    delta: float
    seedable: bool
    release: Callable[[np.ndarray, np.random.Generator], Any]
    release_batch: Callable[[np.ndarray, int, np.random.Generator], Any] | None = None
    finding: str = ""
    plan: Callable[[], Any] | None = None

    def __call__(self, data: np.ndarray, rng: np.random.Generator) -> Any:
        return self.release(np.asarray(data, dtype=float), rng)

    def batch(self, data: np.ndarray, n: int, rng: np.random.Generator) -> Any:
        """``n`` independent outputs on ``data`` (vectorised where the library allows)."""
        data = np.asarray(data, dtype=float)
        if self.release_batch is not None:
            return self.release_batch(data, n, rng)
        return [self.release(data, rng) for _ in range(n)]

    def audit_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`dpaudit.audit.audit_records` this adapter states."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "relation": self.relation,
            "sizes": self.sizes,
        }


def adapter_maker(
    library: str,
    prefix: str,
    *,
    epsilon: float = 1.0,
    relation: str = "add-remove",
    seedable: bool = False,
) -> Callable[..., LibraryAdapter]:
    """The constructor of one library's adapters: what they share (the library, the name's
    prefix, the relation, whether the seed fixes the outputs, the usual epsilon) given once.

    Args:
        library: the distribution audited (``python-dp``).
        prefix: the adapters' names start with ``prefix-`` (``pydp``).
        epsilon: the claimed epsilon, unless an adapter states its own.
        relation: the neighbouring relation of the adapters that state none.
        seedable: whether ``rng`` fixes the outputs (False: the library's own CSPRNG).

    Returns:
        ``make(name, api, summary, domain, sizes, release, *, epsilon=..., delta=0.0,
        relation=..., finding="", ...)`` returning the :class:`LibraryAdapter` named
        ``prefix-name`` (``relation`` overrides the library's for one adapter; further keywords
        are :class:`LibraryAdapter` fields).
    """

    def make(
        name: str,
        api: str,
        summary: str,
        domain: list[Any],
        sizes: tuple[int, int],
        release: Callable[[np.ndarray, np.random.Generator], Any],
        *,
        epsilon: float = epsilon,
        delta: float = 0.0,
        relation: str = relation,
        finding: str = "",
        **fields: Any,
    ) -> LibraryAdapter:
        return LibraryAdapter(
            name=f"{prefix}-{name}",
            library=library,
            api=api,
            summary=summary,
            domain=domain,
            relation=relation,
            sizes=sizes,
            epsilon=epsilon,
            delta=delta,
            seedable=seedable,
            release=release,
            finding=finding,
            **fields,
        )

    return make


def by_name(*adapters: LibraryAdapter) -> dict[str, LibraryAdapter]:
    """The adapters by their names (a module's ``ADAPTERS``)."""
    return {a.name: a for a in adapters}
