"""What a comparison of two runs returns: graphs paired, launches grouped across them, classified.

A group is the smallest set of launches of run A and of run B that cover the same FX nodes (found
by what the nodes compute and where in the user's source they come from, never by kernel name).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

SAME, MERGED, SPLIT, MOVED, ONLY_A, ONLY_B, REGROUPED = (
    "same", "merged", "split", "moved", "only_in_a", "only_in_b", "regrouped")
# In the order a reader wants them: what changed first, what stayed last.
CLASSES = (MERGED, SPLIT, REGROUPED, MOVED, ONLY_A, ONLY_B, SAME)
CLASS_NOTES = {
    SAME: "one launch in each run, of the same kernel kind, over the same nodes",
    MERGED: "several launches in A became one in B (more fusion)",
    SPLIT: "one launch in A became several in B (less fusion)",
    REGROUPED: "several launches in A and several in B share the nodes differently",
    MOVED: "one launch in each run, but of another kernel kind (e.g. pointwise to template, extern to template)",
    ONLY_A: "launches of A whose nodes no launch of B covers",
    ONLY_B: "launches of B whose nodes no launch of A covers",
}


@dataclass(frozen=True, slots=True)
class LaunchRef:
    """One launch of one run, as a comparison names it."""

    index: int  # position in call()
    kernel: str
    kind: str


@dataclass(frozen=True, slots=True)
class MatchGroup:
    """Launches of A and B that cover the same FX nodes, with what became of them."""

    cls: str  # one of CLASSES
    fx_nodes: tuple[str, ...]  # A's names of the nodes covered, then B's names of nodes only B covers
    a: tuple[LaunchRef, ...]
    b: tuple[LaunchRef, ...]
    a_time_ms: float | None = None  # GPU time per call of these launches, when the run was measured
    b_time_ms: float | None = None
    basis: str = "nodes"  # nodes | lines | name: what the match rests on (name: no node or line to go by)


@dataclass(frozen=True)
class GraphMatch:
    """One pair of graphs (either side None when a graph has no counterpart) and its groups."""

    a: str | None  # graph id in run A
    b: str | None
    kind: str  # the graphs' kind (inference, forward, backward...), A's when they differ
    groups: tuple[MatchGroup, ...]

    def counts(self) -> Counter:
        """Return class -> number of groups."""
        return Counter(g.cls for g in self.groups)

    def group_of(self, side: str, launch: int) -> MatchGroup | None:
        """Return the group holding launch `launch` of side "a" or "b", or None."""
        for g in self.groups:
            if any(ref.index == launch for ref in (g.a if side == "a" else g.b)):
                return g
        return None

    def launch_classes(self, side: str) -> dict[int, str]:
        """Return launch index -> class of its group, for one side."""
        return {ref.index: g.cls for g in self.groups for ref in (g.a if side == "a" else g.b)}
