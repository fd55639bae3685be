"""The median of a few measurement rounds and a bootstrap 95% interval of it; stdlib only.

One round is a run of calls whose median is that round's figure. Rounds, not calls, are the
independent samples: calls in a round share the CPU's state, the clocks and the caches, and a
launch-bound call drifts from round to round (issue 17). The interval is the percentile bootstrap
of the median of the round figures, with a fixed seed so that a file reads the same every time.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

CONFIDENCE = 0.95
RESAMPLES = 2000
INTERVAL = f"bootstrap {CONFIDENCE:.0%} interval of the median of the round medians ({RESAMPLES} resamples)"


def median_interval(values: Sequence[float], *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                    seed: int = 0) -> tuple[float, float, float]:
    """Return (median, lower, upper): the median of `values` and a percentile-bootstrap interval of it.

    With one value the interval is that value; lower <= median <= upper always holds.
    """
    if not values:
        raise ValueError("median_interval needs at least one value")
    xs = sorted(values)
    mid = statistics.median(xs)
    if len(xs) == 1:
        return mid, mid, mid
    rng = random.Random(seed)
    n = len(xs)
    medians = sorted(statistics.median(rng.choices(xs, k=n)) for _ in range(resamples))
    tail = (1 - confidence) / 2
    lo = medians[int(tail * (resamples - 1))]
    hi = medians[int(round((1 - tail) * (resamples - 1)))]
    return mid, min(lo, mid), max(hi, mid)

