"""Privacy loss distributions: certified upper and lower privacy profiles by FFT composition.

Build a :class:`PLDPair` with a mechanism builder, compose with :meth:`PLDPair.compose` and
:meth:`PLDPair.self_compose`, and read certified bounds with :meth:`PLDPair.epsilon_bounds` and
:meth:`PLDPair.delta_bounds`.
"""

from dpaudit.pld.distribution import LowerPLD, PrivacyLossDistribution, UpperPLD
from dpaudit.pld.mechanisms import (
    DEFAULT_DISCRETIZATION,
    bounded_range,
    discrete_gaussian,
    discrete_laplace,
    from_atoms,
    gaussian,
    gaussian_direction,
    generic,
    laplace,
    randomized_response,
)
from dpaudit.pld.pair import PLDPair

__all__ = [
    "DEFAULT_DISCRETIZATION",
    "LowerPLD",
    "PLDPair",
    "PrivacyLossDistribution",
    "UpperPLD",
    "bounded_range",
    "discrete_gaussian",
    "discrete_laplace",
    "from_atoms",
    "gaussian",
    "gaussian_direction",
    "generic",
    "laplace",
    "randomized_response",
]
