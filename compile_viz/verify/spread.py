"""The median of a few measurement rounds and the range the middle rounds fall in; stdlib only.

One round is a run of calls whose median is that round's figure. Rounds, not calls, are the
independent samples: calls in a round share the CPU's state, the clocks and the caches, and a
launch-bound call drifts from round to round (issue 17).

The interval is the range of the rounds once the lowest and the highest are dropped (5 of 7
rounds fall in it): where a round of this capture typically lands, not how precisely the median
is known. A bootstrap interval of the median (what captures before this change wrote, and say so
in their method) shrinks as rounds are added, while two captures of the same model differ by more
than that: on this project's CI machine two CPU captures of pointwise_chain gave speedups of
1.45-1.48x and 1.54-1.62x by the bootstrap, disjoint. A speedup whose range holds 1.0 is "no clear
difference": a team comparing two runs should not read round-to-round noise as a win.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

TRIM_FROM = 5  # rounds: from this many on, the lowest and the highest are left out of the range
INTERVAL = "range of the round medians without the lowest and the highest (5 of 7 rounds in it)"
# On a CPU one process cannot see how far the next will land: six captures of pointwise_chain on
# this project's 2-core VM, each steady within +-2%, gave speedups from 1.32x to 1.60x. The range is
# widened to at least this share either side of the median there (a speedup within about 10% of
# 1.0 is then "no clear difference"). GPU captures keep the rounds' range (bench/RESULTS.md).
CPU_FLOOR = 0.10
INTERVAL_CPU = INTERVAL + f", at least {CPU_FLOOR:.0%} either side of the median (a CPU: processes differ by that)"


def median_interval(values: Sequence[float], *, floor: float = 0.0) -> tuple[float, float, float]:
    """Return (median, lower, upper): the median of `values` and the range of the values without
    the lowest and the highest (all of them below TRIM_FROM values), widened to at least `floor`
    (a share of the median) either side.

    With one value and no floor the interval is that value; lower <= median <= upper always holds.
    """
    if not values:
        raise ValueError("median_interval needs at least one value")
    xs = sorted(values)
    mid = statistics.median(xs)
    inner = xs[1:-1] if len(xs) >= TRIM_FROM else xs
    return mid, min(inner[0], mid / (1 + floor)), max(inner[-1], mid * (1 + floor))
