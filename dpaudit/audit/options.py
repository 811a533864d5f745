"""How an audit's options resolve: the share of samples that selects the event, the
certification that certifies it, and the event families searched (used by
:func:`~dpaudit.audit.monte_carlo.audit`, :func:`~dpaudit.audit.records.audit_records` and the
``dpaudit audit`` command)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dpaudit.audit.validation import check as _check

__all__ = [
    "APPROX_SELECTION_FLOOR",
    "APPROX_SELECTION_SAMPLES",
    "ARITHMETICS",
    "CERTIFICATIONS",
    "RECTANGLE_SELECTION_FLOOR",
    "SELECTION_FRACTION",
    "check_certification",
    "default_selection_fraction",
    "resolve_certification",
    "resolve_families",
]

#: Default share of the samples used for selection (``selection_fraction=None``).  With
#: ``delta > 0`` the share shrinks for large audits, to :data:`APPROX_SELECTION_FLOOR` (or
#: :data:`APPROX_SELECTION_SAMPLES` samples, if more): every sample moved to certification
#: raises the statistical limit (:mod:`dpaudit.audit.certifiable`), but the best event
#: is a tail threshold whose rarer side has tens of hits in the selection samples only if
#: they are a large share. Gaussian sigma 1 at delta 1e-5, 10^8 samples a side, 9 seeds:
#: median certified 4.029 with a share of 0.05, 4.116 with 0.1, 4.137 with 0.2 (the one-event
#: limit is 4.128); at 10^6, 10^7 and 10^9 the share 0.2 was as good as 0.05-0.1 or better
#: (bench/approx_dp_limit.md).
#: The Clopper-Pearson rectangle (``certification="clopper-pearson"``) at ``delta > 0``
#: shrinks to :data:`RECTANGLE_SELECTION_FLOOR` instead: its two one-sided bounds gain more
#: from certification samples than the joint test does.  Same Gaussian, paired on seeds,
#: rectangle: 10^6 samples a side, share 0.1 against 0.2: mean +0.035 (SD 0.16, 40 seeds,
#: better in 26); 10^7, 0.05 against 0.2: +0.051 (SD 0.15, 16 seeds); 10^5: 0.25 either way.
SELECTION_FRACTION = 0.25
APPROX_SELECTION_FLOOR = 0.2
RECTANGLE_SELECTION_FLOOR = 0.05
APPROX_SELECTION_SAMPLES = 100_000


def default_selection_fraction(samples: int, delta: float, certification: str = "joint") -> float:
    """The selection share an audit uses when ``selection_fraction`` is None, for its
    resolved ``certification`` (``"joint"`` or ``"clopper-pearson"``)."""
    if delta == 0:
        return SELECTION_FRACTION
    floor = APPROX_SELECTION_FLOOR if certification == "joint" else RECTANGLE_SELECTION_FLOOR
    return min(SELECTION_FRACTION, max(floor, APPROX_SELECTION_SAMPLES / samples))


#: The values of ``certification``: ``"auto"`` (the default) is ``"joint"`` when ``delta > 0``
#: and ``"clopper-pearson"`` when ``delta = 0`` (:func:`resolve_certification`);
#: ``"sequential"`` certifies on batches and stops early (:mod:`dpaudit.audit.sequential`).
CERTIFICATIONS = ("auto", "joint", "clopper-pearson", "sequential")
#: The values of ``arithmetic`` (and of a mechanism's ``arithmetic`` attribute).
ARITHMETICS = ("float", "real")


def check_certification(certification: Any) -> None:
    """Refuse a ``certification`` that is not one of :data:`CERTIFICATIONS` (ValueError)."""
    _check(
        "certification",
        certification,
        certification in CERTIFICATIONS,
        "'auto', 'clopper-pearson', 'joint' or 'sequential'",
    )


def resolve_certification(certification: str, delta: float) -> str:
    """The certification an audit at ``delta`` runs: ``"auto"`` is the joint test when
    ``delta > 0`` and the Clopper-Pearson rectangle when ``delta = 0``.

    Why: at ``delta > 0`` the best event's numerator count is mostly the ``n delta`` that the
    inequality subtracts, so the rectangle pays for both of its ends and the joint test
    certifies clearly more (Gaussian sigma 1, delta 1e-5: median +0.08 to +0.13 at 10^5-10^7
    samples a side, bench/approx_dp_limit.md); at ``delta = 0`` it gains +0.001 to +0.009 on
    a mechanism that is pure DP (Laplace at epsilon 1) and +0.04 to +0.12 on one that is not
    (the Gaussian), for 0.3-0.9 s more per audit: ``certification="joint"`` takes it there.
    """
    if certification == "auto":
        return "joint" if delta > 0 else "clopper-pearson"
    return certification


def resolve_families(
    mechanism: Any, families: Iterable[str], arithmetic: str | None
) -> tuple[str, ...]:
    """The event families an audit searches: ``families`` without ``bits`` when the claim is
    about real arithmetic (``arithmetic``, else ``mechanism.arithmetic``, else ``"float"``).

    Raises:
        ValueError: if ``arithmetic`` (or the mechanism's attribute) is not one of
            :data:`ARITHMETICS`.
    """
    if arithmetic is None:
        arithmetic = getattr(mechanism, "arithmetic", None) or "float"
    _check("arithmetic", arithmetic, arithmetic in ARITHMETICS, "'float', 'real' or None")
    families = tuple(families)
    return tuple(f for f in families if f != "bits") if arithmetic == "real" else families
