"""The result of an audit: a certified lower bound, and everything needed to trust it."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["AuditResult"]


@dataclass(frozen=True)
class AuditResult:
    """What an audit certified, and how.

    Attributes:
        epsilon_lower: certified lower bound on the mechanism's epsilon (at ``delta``), rounded
            down; 0.0 when nothing was found. Holds with probability >= ``confidence``.
        epsilon_estimate: plug-in estimate of the privacy loss of the same event on the same
            certification samples. An *estimate*, not a bound; may exceed the truth.
        epsilon_claimed: the epsilon the mechanism claims.
        delta: the delta of the claim (used in the bound).
        violation: ``epsilon_lower > epsilon_claimed``.
        event: the certified event, in words.
        direction: which dataset's probability is the numerator.
        pair: the neighbouring pair, in words.
        hits_d0: certification samples on d0 inside the event.
        hits_d1: certification samples on d1 inside the event.
        samples_d0: certification samples drawn on d0 (and on d1: equal).
        p_numerator_lower: Clopper-Pearson lower bound on the numerator probability.
        p_denominator_upper: Clopper-Pearson upper bound on the denominator probability.
        confidence: the family-wise confidence of the bound.
        tests: number of (event, direction) tests certified.
        correction: how the confidence was split across the tests.
        seed: entropy of the root ``SeedSequence``; passing it as ``seed=`` repeats the audit.
        selection_samples: selection samples per dataset on the certified pair.
        pairs_searched: number of candidate pairs searched.
        wall_time: seconds.
        method: ``"monte-carlo"`` or ``"exact"``.
        mechanism: the mechanism's name.
        family: the event search family that found the event.
        screening_samples: samples per dataset used to screen each candidate pair (0: the
            pairs were not screened separately).
        samples_drawn: mechanism runs over the whole audit, both datasets, every phase.
        reproducible: False when the probe runs found that the audit's seed does not fix the
            mechanism's outputs (it draws from NumPy's global random state or Python's
            ``random``, or from another source: the warning names the cause found); None
            when its outputs repeat too often for the probe to tell; the bound still holds
            at its confidence, but the audit may not be repeatable from its seed.
        warnings: why the audit is not (or may not be) reproducible, and other notes of the
            probe (empty when there are none).
        epsilon_limit: the estimated statistical limit of this audit: the most one threshold
            event on the certified event's feature certifies at the audit's certification
            samples, tests and confidence when counts equal their expectations
            (:mod:`dpaudit.audit.certifiable`), with the expectations estimated from the
            selection samples' frequencies. An *estimate*, not a bound; None when unknown. The
            tails' frequencies come from few selection hits and the best of many thresholds is
            kept, so it can exceed the mechanism's true epsilon (Gaussian sigma 1, delta 1e-5,
            10^9 samples a side, seed 0: 4.625 against the true 4.377).
        limit_scaling: the same estimated limit at more certification samples (text).
    """

    epsilon_lower: float
    epsilon_estimate: float
    epsilon_claimed: float
    delta: float
    violation: bool
    event: str
    direction: str
    pair: str
    hits_d0: int
    hits_d1: int
    samples_d0: int
    p_numerator_lower: float
    p_denominator_upper: float
    confidence: float
    tests: int
    correction: str
    seed: int | None
    selection_samples: int
    pairs_searched: int
    wall_time: float
    method: str = "monte-carlo"
    mechanism: str = ""
    family: str = ""
    screening_samples: int = 0
    samples_drawn: int = 0
    reproducible: bool | None = True
    warnings: tuple[str, ...] = ()
    epsilon_limit: float | None = None
    limit_scaling: str = ""

    def _pair_text(self) -> str:
        """The pair in words (subclasses holding the datasets themselves say it otherwise)."""
        return self.pair

    @property
    def samples_d1(self) -> int:
        """Certification samples drawn on d1 (equal to ``samples_d0``)."""
        return self.samples_d0

    @property
    def verdict(self) -> str:
        """One line: violation or not, and what that does (not) mean."""
        if self.violation:
            return (
                f"VIOLATION: epsilon >= {_down(self.epsilon_lower)} certified, above the "
                f"claimed {self.epsilon_claimed:g}"
            )
        return (
            f"no violation found: certified lower bound {_down(self.epsilon_lower)} <= "
            f"claimed {self.epsilon_claimed:g} (a lower bound cannot prove the claim)"
        )

    def __str__(self) -> str:
        conf = (
            f"{self.confidence:.4g} ({self.correction})"
            if self.method == "monte-carlo"
            else "exact (no sampling error)"
        )
        counts = (
            f"{self.hits_d0:,} of {self.samples_d0:,} on d0, {self.hits_d1:,} of "
            f"{self.samples_d1:,} on d1 (fresh samples)"
            if self.method == "monte-carlo"
            else "exact probabilities"
        )
        lines = [
            f"audit of {self.mechanism or 'mechanism'}: {self.verdict}",
            f"  epsilon lower bound : {_down(self.epsilon_lower)} (certified, rounded down)",
            f"  epsilon estimate    : {_fmt(self.epsilon_estimate)} (point estimate, not a bound)",
            *(
                [
                    f"  statistical limit   : about {_down(self.epsilon_limit)} at these samples "
                    "(an estimate from the selection samples, not a bound: the most one "
                    "threshold event certifies at expected counts; noisy tail frequencies can "
                    "put it above the true epsilon)"
                    + (f"; {self.limit_scaling}" if self.limit_scaling else "")
                ]
                if self.epsilon_limit is not None
                else []
            ),
            f"  claim               : epsilon={self.epsilon_claimed:g}, delta={self.delta:g}",
            f"  event               : {self.event}",
            f"  direction           : {self.direction}",
            f"  pair                : {self._pair_text()}",
            f"  counts              : {counts}",
            f"  confidence          : {conf}",
            f"  seed                : {self.seed}",
            f"  wall time           : {self.wall_time:.2f} s",
        ]
        lines += [f"  warning             : {w}" for w in self.warnings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The result as an HTML table (shown by Jupyter), with an inline plot of the
        certified lower bound against the claim when matplotlib is available."""
        esc = html.escape
        rows = "".join(
            f"<tr><th style='text-align:left'>{esc(k.strip())}</th><td style='text-align:left'>"
            f"{esc(v.strip())}</td></tr>"
            for k, _, v in (line.partition(":") for line in str(self).splitlines()[1:])
        )
        head = f"audit of {self.mechanism or 'mechanism'}: {self.verdict}"
        return (
            f"<div class='dpaudit-audit'><p><b>{esc(head)}</b></p><table>{rows}</table>"
            f"{_bound_plot(self)}</div>"
        )

    def _repr_latex_(self) -> str:
        """The certified bound as a LaTeX math string."""
        rel = ">" if self.violation else r"\le"
        return (
            rf"$\varepsilon \ge {_down(self.epsilon_lower)}\ \text{{(certified lower bound, "
            rf"confidence {self.confidence:.4g})}}\ {rel}\ {self.epsilon_claimed:g}\ "
            r"\text{(claimed)}$"
        )

    def to_dict(self) -> dict[str, Any]:
        """All fields plus the verdict, JSON-ready (infinite estimates become strings)."""
        data = asdict(self)
        data["verdict"] = self.verdict
        data["samples_d1"] = self.samples_d1
        data["warnings"] = list(self.warnings)
        for key, value in data.items():
            if isinstance(value, float) and not math.isfinite(value):
                data[key] = str(value)
        return data

    def to_json(self, **kwargs: Any) -> str:
        """The result as a JSON object (``kwargs`` go to ``json.dumps``)."""
        return json.dumps(self.to_dict(), **kwargs)


def _bound_plot(result: AuditResult) -> str:
    """An inline PNG: the certified lower bound and the estimate against the claimed
    epsilon ("" without matplotlib)."""
    try:
        from matplotlib.figure import Figure  # outside pyplot: no backend is switched
    except ImportError:  # plots are optional in a notebook
        return ""
    fig = Figure(figsize=(5, 1.6))
    ax = fig.add_subplot()
    lower = math.floor(result.epsilon_lower * 1e4) / 1e4
    ax.barh([0], [lower], color="tab:red" if result.violation else "tab:blue")
    ax.axvline(result.epsilon_claimed, color="black", linestyle="--", label="claimed")
    if math.isfinite(result.epsilon_estimate):
        ax.plot([result.epsilon_estimate], [0], "k^", label="estimate (not a bound)")
    ax.set_yticks([0], ["certified\nlower bound"])
    ax.set_xlabel("epsilon")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f"<img alt='certified lower bound against the claim' src='data:image/png;base64,{data}'>"


def _down(x: float) -> str:
    """Four decimals, rounded down (a lower bound must not be printed larger than it is)."""
    return f"{math.floor(x * 1e4) / 1e4:.4f}"


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4f}"
