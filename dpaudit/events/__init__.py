"""Events: immutable, self-validating descriptions of what an algorithm does (layer 2).

Leaves are primitive mechanisms, inner nodes are combinators.  Parameters are exact sympy
numbers or symbols.  See :mod:`dpaudit.events.base` for the conventions.
"""

from dpaudit.events.base import Event, Relation, as_relation, parameter
from dpaudit.events.combinators import (
    Composed,
    Group,
    Parallel,
    PoissonSampled,
    PostProcessed,
    SampledWithoutReplacement,
    SelfComposed,
)
from dpaudit.events.cover import EMCover
from dpaudit.events.primitives import (
    NOISES,
    ZCDP,
    AboveThreshold,
    ApproxDP,
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    Gaussian,
    Laplace,
    Leaf,
    PureDP,
    RandomizedResponse,
    ReportNoisyMax,
)
from dpaudit.events.stability import (
    LabelFlipped,
    RelabeledSubsampleSelection,
    SubsampledCandidates,
    UniformlyStable,
)

#: Every event class by the name used in event expressions (the CLI's parser and plan files
#: read this).  Complete on import of this package, whatever was imported before: the cover
#: and stability events are registered below with the primitives and combinators.
#: Code outside the package that adds event classes registers them with :func:`register_event`.
EVENT_TYPES: dict[str, type[Event]] = {}


def register_event(cls: type[Event]) -> type[Event]:
    """Make an event class available to the expression parser under its class name."""
    EVENT_TYPES[cls.__name__] = cls
    return cls


for _cls in (
    Laplace,
    Gaussian,
    DiscreteLaplace,
    DiscreteGaussian,
    Exponential,
    RandomizedResponse,
    ReportNoisyMax,
    AboveThreshold,
    PureDP,
    ApproxDP,
    ZCDP,
    Composed,
    SelfComposed,
    Parallel,
    PostProcessed,
    Group,
    PoissonSampled,
    SampledWithoutReplacement,
    EMCover,
    UniformlyStable,
    SubsampledCandidates,
    LabelFlipped,
    RelabeledSubsampleSelection,
):
    register_event(_cls)

__all__ = [
    "EVENT_TYPES",
    "NOISES",
    "ZCDP",
    "AboveThreshold",
    "ApproxDP",
    "Composed",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Event",
    "Exponential",
    "Gaussian",
    "Group",
    "Laplace",
    "Leaf",
    "Parallel",
    "PoissonSampled",
    "PostProcessed",
    "PureDP",
    "RandomizedResponse",
    "Relation",
    "ReportNoisyMax",
    "SampledWithoutReplacement",
    "SelfComposed",
    "as_relation",
    "parameter",
    "register_event",
]
