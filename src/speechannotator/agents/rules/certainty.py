"""How sure a class read off a measurement is: the chance that the measurement's true value lies
on the same side of the nearest class edge, under Gaussian noise of a given spread. It is 0.5 on
an edge (a coin flip between two neighbouring classes) and nears 1 far from every edge; a rule's
confidence is its evidence's ceiling times this, so two turns with the same word no longer share
one constant confidence, and the turns nearest a boundary sort first in a review by doubt.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

# The standard normal cut into 0.05-wide bins over -4..4: each bin's centre and exact mass. The
# share of a measurement's noise under which a decision stays the same is summed over them, the
# same on every machine (no sampling); a bin that straddles an edge costs at most 0.01.
_STEP = 0.05
_EDGES = [-4.0 + _STEP * i for i in range(161)]
_CENTRES = [a + _STEP / 2 for a in _EDGES[:-1]]
_MASSES = [0.5 * (math.erf(b / math.sqrt(2.0)) - math.erf(a / math.sqrt(2.0))) for a, b in zip(_EDGES, _EDGES[1:])]


def side_probability(margin: float, spread: float) -> float:
    """P(the true value is on the measured side of the nearest edge) for a measurement ``margin``
    from that edge with noise of standard deviation ``spread`` (same units).

    >>> side_probability(0.0, 1.0)
    0.5
    >>> round(side_probability(1.0, 1.0), 3)
    0.841
    """
    if spread <= 0:
        return 1.0
    return 0.5 * (1.0 + math.erf(abs(margin) / (spread * math.sqrt(2.0))))


def trusted(ceiling: float, reliability: float) -> float:
    """A claim's confidence from its ceiling and how far the extractor behind it trusts its value
    on this segment (0..1): half the ceiling for an untrusted value, all of it for a trusted one.

    >>> round(trusted(0.6, 0.5), 3)
    0.45
    """
    return ceiling * (0.5 + 0.5 * max(0.0, min(1.0, reliability)))


def rate_spread(units: int) -> float:
    """Noise of a log speaking rate over ``units`` transcript units: counts of syllables or
    characters in a span vary as a Poisson count would, so the relative spread is 1/sqrt(n)."""
    return 1.0 / math.sqrt(max(1, units))


def stable_share(decide: Callable[[float], Hashable], x: float, spread: float) -> float:
    """The share of Gaussian noise (standard deviation ``spread``) on ``x`` under which
    ``decide`` gives what it gives at ``x``: ``side_probability`` for a decision with any number
    of edges, including edges whose two sides give the same label.

    >>> round(stable_share(lambda a: a >= 1.0, 0.0, 1.0), 2)  # one edge a spread away
    0.84
    >>> stable_share(lambda a: "same", 0.3, 1.0)
    1.0
    """
    here = decide(x)
    kept = sum(m for z, m in zip(_CENTRES, _MASSES) if decide(x + spread * z) == here)
    return min(1.0, kept / sum(_MASSES))
