"""Opacus training histories to dpaudit events, without importing opacus or torch.

Opacus (``pytorch/opacus``) records every optimiser step in its accountant's ``history``: a
list of ``(noise_multiplier, sample_rate, num_steps)`` triples, consecutive steps with equal
parameters merged into one triple (``RDPAccountant``, ``PRVAccountant`` and
``GaussianAccountant`` all keep it; ``accountant.state_dict()`` returns ``{"history": [...],
"mechanism": ...}``; a ``PrivacyEngine`` holds its accountant as ``.accountant``).  This module
reads any of these, or a plain list of triples, and builds the event Opacus accounts::

    Composed([SelfComposed(PoissonSampled(Gaussian(sigma_i), q_i), T_i), ...])

What the numbers mean (Opacus ``optimizers/optimizer.py``, ``accountants/accountant.py``):
each example's gradient is clipped to L2 norm ``max_grad_norm`` C, the clipped gradients of a
batch are summed and Gaussian noise of standard deviation ``noise_multiplier * C`` is added,
so adding or removing one example moves the sum by at most C: ``Gaussian(sigma =
noise_multiplier, sensitivity = 1)`` under the add/remove relation.  ``sample_rate`` q is the
probability with which each example joins a batch (Poisson sampling, the DP data loader's
default), so the step is ``PoissonSampled(..., q)``, whose amplification theorems (Balle,
Barthe, Gaboardi 2018, Theorem 8; Mironov, Talwar, Zhang 2019 for the RDP Opacus uses) hold
under add/remove, the relation of the whole event.

Caveats that are Opacus's, not this reader's: with ``poisson_sampling=False`` Opacus still
records ``sample_rate = 1/len(data_loader)`` and accounts the run as Poisson-sampled, which it
is not; with gradient accumulation its hook records ``sample_rate * accumulated_iterations``.
dpaudit accounts what the history records.

Every value is read exactly (a float is its binary value, the number the training used) and
checked: a bad entry raises ``ValueError`` naming the entry, the parameter, the admissible
range and the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.deferred_imports import sympy
from dpaudit.events import ApproxDP, Composed, Event, Gaussian, PoissonSampled, SelfComposed
from dpaudit.numeric import exact

if TYPE_CHECKING:
    from dpaudit.accountant.guarantee import Guarantee

__all__ = ["from_opacus", "load_opacus_history", "opacus_guarantee", "opacus_history"]

#: The most history entries read (Opacus merges equal consecutive steps; a schedule that
#: changes every step for a million steps is still far below this).
MAX_ENTRIES = 1_000_000
#: The largest history file read by :func:`load_opacus_history`.
MAX_FILE_BYTES = 50_000_000


def opacus_history(source: Any) -> list[tuple[sympy.Expr, sympy.Expr, int]]:
    """The validated history of an Opacus accountant, as exact ``(sigma, q, steps)`` triples.

    Args:
        source: an Opacus accountant (anything with a ``history`` list; also an Opacus < 1.2
            ``RDPAccountant``, whose list was called ``steps``), a ``PrivacyEngine`` (anything
            with an ``accountant``), a ``state_dict()`` mapping with a ``"history"`` key, or a
            sequence of ``(noise_multiplier, sample_rate, num_steps)`` triples.

    Returns:
        One ``(noise_multiplier, sample_rate, num_steps)`` per entry: exact rationals in
        (0, inf) and (0, 1], and an int >= 1.

    Raises:
        TypeError: if ``source`` is none of the above.
        ValueError: naming the entry index, the parameter, its admissible range and the value.
    """
    entries = _entries(source)
    if len(entries) > MAX_ENTRIES:
        raise ValueError(
            f"opacus history: at most {MAX_ENTRIES} entries are read, got {len(entries)}"
        )
    return [_entry(i, e) for i, e in enumerate(entries)]


def _entries(source: Any) -> Sequence[Any]:
    if isinstance(source, Mapping):
        if "history" not in source:
            raise ValueError(
                "opacus state_dict: expected a 'history' key (accountant.state_dict()), got "
                f"the keys {sorted(map(str, source))}"
            )
        return _as_list(source["history"], "state_dict['history']")
    if hasattr(source, "accountant") and not isinstance(source, (str, bytes)):
        return _entries(source.accountant)  # a PrivacyEngine
    if isinstance(getattr(source, "history", None), (list, tuple)):
        return list(source.history)
    if isinstance(getattr(source, "steps", None), (list, tuple)):
        return list(source.steps)  # RDPAccountant before Opacus 1.2
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes)):
        return list(source)
    raise TypeError(
        "opacus history: expected an Opacus accountant (with .history), a PrivacyEngine (with "
        ".accountant), a state_dict with 'history' or a list of (noise_multiplier, "
        f"sample_rate, num_steps) triples, got {type(source).__name__}"
    )


def _as_list(value: Any, what: str) -> Sequence[Any]:
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    raise TypeError(f"opacus {what}: expected a list of triples, got {type(value).__name__}")


def _entry(i: int, entry: Any) -> tuple[sympy.Expr, sympy.Expr, int]:
    where = f"opacus history[{i}]"
    if not isinstance(entry, Sequence) or isinstance(entry, (str, bytes)) or len(entry) != 3:
        raise ValueError(
            f"{where}: expected a (noise_multiplier, sample_rate, num_steps) triple, got {entry!r}"
        )
    sigma_in, rate_in, steps_in = entry
    sigma = _real(where, "noise_multiplier", sigma_in, "a real number > 0")
    if not sigma > 0:
        raise ValueError(
            f"{where}: noise_multiplier must be a real number > 0 (0 adds no noise: not "
            f"private), got {sigma_in!r}"
        )
    rate = _real(where, "sample_rate", rate_in, "a real number in (0, 1]")
    if not 0 < rate <= 1:
        raise ValueError(f"{where}: sample_rate must be in (0, 1], got {rate_in!r}")
    if isinstance(steps_in, bool) or not isinstance(steps_in, Integral) or steps_in < 1:
        raise ValueError(f"{where}: num_steps must be an integer >= 1, got {steps_in!r}")
    return sigma, rate, int(steps_in)


def _real(where: str, name: str, value: Any, expected: str) -> sympy.Expr:
    if isinstance(value, str):  # Opacus stores numbers; text is not read as one here
        raise ValueError(f"{where}: {name} must be {expected}, got the string {value!r}")
    try:
        return exact(value, name)
    except (ValueError, TypeError):
        raise ValueError(f"{where}: {name} must be {expected}, got {value!r}") from None


def from_opacus(source: Any) -> Event:
    """The dpaudit event of an Opacus training history (see the module docstring).

    Args:
        source: as :func:`opacus_history`.

    Returns:
        ``Composed`` of one ``SelfComposed(PoissonSampled(Gaussian(sigma), q), steps)`` per
        entry (without the wrappers that would be trivial), under add/remove; an empty
        history (no step taken) is ``ApproxDP(0, 0)``.

    Raises:
        TypeError, ValueError: as :func:`opacus_history`.

    Privacy: Opacus's DP-SGD step is the Poisson-subsampled Gaussian mechanism with L2
    sensitivity 1 relative to the noise multiplier, under add/remove (module docstring).
    """
    parts: list[Event] = []
    for sigma, rate, steps in opacus_history(source):
        step: Event = Gaussian(sigma)
        if rate != 1:
            step = PoissonSampled(step, rate)
        parts.append(step if steps == 1 else SelfComposed(step, steps))
    if not parts:
        return ApproxDP(0, 0)
    return parts[0] if len(parts) == 1 else Composed(parts)


def opacus_guarantee(source: Any, delta: Any) -> Guarantee:
    """dpaudit's guarantee at ``delta`` for an Opacus history: ``guarantee.epsilon_upper`` is
    the certified upper bound on epsilon (rounded up), ``guarantee.epsilon_lower_float`` a
    certified lower bound on the optimal epsilon of the event (None when no rule certifies
    one).  A thin wrapper: ``Accountant().guarantee(from_opacus(source), delta)``.

    Compared with ``accountant.get_epsilon(delta)``: Opacus's ``RDPAccountant`` is an upper
    bound loosened by the RDP-to-DP conversion, so dpaudit's upper bound is at most it; its
    ``PRVAccountant`` returns an upper bound up to its ``eps_error``; its
    ``GaussianAccountant`` is a CLT approximation that Opacus warns can under-estimate.

    Raises:
        TypeError, ValueError: as :func:`opacus_history`, or for delta outside [0, 1).
    """
    from dpaudit.accountant import Accountant

    return Accountant().guarantee(from_opacus(source), delta)


def load_opacus_history(path: str | Path) -> list[tuple[sympy.Expr, sympy.Expr, int]]:
    """The validated history in a JSON file: what ``json.dump(accountant.history, f)`` or
    ``json.dump(accountant.state_dict(), f)`` writes (a list of ``[noise_multiplier,
    sample_rate, num_steps]``, or an object with ``"history"``).

    The file is untrusted data: read as JSON (``NaN``/``Infinity`` refused), at most
    :data:`MAX_FILE_BYTES` bytes, then validated as :func:`opacus_history`.  A JSON float is
    read as the binary float it spells, which is the value Python's ``json`` wrote.

    Raises:
        ValueError: for a file too large, not UTF-8 JSON, or a bad entry.
        OSError: if the file cannot be read.
    """
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"opacus history file {p}: at most {MAX_FILE_BYTES} bytes, got {size}")

    def no_constant(name: str) -> Any:
        raise ValueError(f"expected a finite number, got {name}")

    try:
        data = json.loads(p.read_bytes().decode("utf-8"), parse_constant=no_constant)
    except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError, ...
        raise ValueError(f"opacus history file {p}: not valid JSON ({err})") from None
    try:
        return opacus_history(data)
    except TypeError as err:
        raise ValueError(f"opacus history file {p}: {err}") from None
