"""Report targets for the real libraries: one report per audited library API, in one index
section per library (``opendp/...``, ``diffprivlib/...``), each audited with no designed
pair (:class:`dpaudit.report.Records`: the neighbouring datasets are searched over the
adapter's record domain) against the library's own claim.

dpaudit finds them through the entry point ``libraries`` of the group
``dpaudit.report_targets`` (``pyproject.toml``).  Registering imports neither library; the
installed version (``importlib.metadata``) is part of each target's parameters, so the
reports' fingerprints change when the library version does, and the up-to-date check says so.

Reproducibility: diffprivlib's reports are functions of the seed (its ``random_state`` is
derived from the injected rng).  OpenDP samples from the OS CSPRNG and cannot be seeded, so
its reports carry ``reproducible: false`` and a warning; the slow regeneration test
(``tests/report/test_reports_up_to_date.py``) compares their seed-independent part (target,
fingerprint, and that the audit ran) rather than their bytes.
"""

from __future__ import annotations

from dpaudit.report import Records, Target, register_target
from mechanisms.libraries import LibraryAdapter, library_version
from mechanisms.libraries import diffprivlib_adapters as dpl
from mechanisms.libraries import opendp_adapters as odp

__all__ = ["SAMPLES", "library_targets", "register"]

#: Samples per dataset of each report's final audit, by adapter (each candidate pair of the
#: search gets an eighth, at least 200): chosen so that each report takes about a minute
#: (OpenDP's samplers and diffprivlib's Python-level loops are slower than NumPy's).
SAMPLES: dict[str, int] = {
    "opendp-integer-laplace-sum": 40_000,
    "opendp-geometric-sum": 8_000,
    "opendp-float-laplace-sum": 40_000,
    "opendp-gaussian-mean": 40_000,
    "opendp-discrete-gaussian-count": 40_000,
    "opendp-laplace-variance": 40_000,
    "opendp-histogram": 20_000,
    "opendp-randomized-response": 8_000,
    "diffprivlib-laplace-sum": 40_000,
    "diffprivlib-geometric-count": 40_000,
    "diffprivlib-gaussian-analytic-sum": 40_000,
    "diffprivlib-histogram": 8_000,
    "diffprivlib-mean": 8_000,
    "diffprivlib-variance": 8_000,
    "diffprivlib-gaussian-nb": 1_600,
}


def _target(module: str, variable: str, adapter: LibraryAdapter) -> Target:
    version = library_version(adapter.library)
    randomness = (
        "Its outputs are seeded from the audit's seed (diffprivlib's random_state)."
        if adapter.seedable
        else "OpenDP samples from the OS CSPRNG and cannot be seeded: this audit is not "
        "reproducible from its seed (re-running it gives other numbers; each bound holds at "
        "its confidence)."
    )
    short = adapter.name.split("-", 1)[1]
    return Target(
        name=f"{adapter.library}/{short}",
        title=f"{adapter.library} {version}: {adapter.api}",
        group=f"library {adapter.library}",
        epsilon=adapter.epsilon,
        delta=adapter.delta,
        summary=" ".join(filter(None, (adapter.summary, adapter.finding, randomness))),
        parameters={adapter.library: version},
        plan=adapter.plan,
        mechanism=lambda: adapter,
        records=Records(tuple(adapter.domain), adapter.relation, adapter.sizes),
        samples=SAMPLES[adapter.name],
        expect="broken" if adapter.finding else "private",
        source=f"{module}:{variable}",
    )


def library_targets() -> list[Target]:
    """The targets of every adapter with a report: all but diffprivlib's regressions, too slow
    to audit meaningfully in a report (LogisticRegression fits about 40 times a second;
    LinearRegression about 35, and 2 on datasets of equal records, where its noisy objective
    is not convex and its coefficients reach 1e155)."""
    out = []
    for mod in (odp, dpl):
        for variable in mod.__all__:
            adapter = getattr(mod, variable)
            if isinstance(adapter, LibraryAdapter) and adapter.name in SAMPLES:
                out.append(_target(mod.__name__, variable, adapter))
    return out


def register() -> list[Target]:
    """Register the library targets with :func:`dpaudit.report.register_target`."""
    return [register_target(t) for t in library_targets()]
