"""Which graph of run A goes with which graph of run B: same kind, same order, unless the user says."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence


def pair_graphs(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]],
                overrides: Mapping[str, str | None] | None = None) -> list[tuple[str | None, str | None]]:
    """Return (A graph id, B graph id) pairs; a graph with no counterpart is paired with None.

    `a` and `b` are (graph id, kind) in run order. The n-th forward of A goes with the n-th forward
    of B, and so on per kind; `overrides` (A id -> B id, or None to leave it alone) re-pairs first,
    and the graphs it does not name are paired by kind and order among the rest. Pairs follow A's
    order, B's unpaired graphs last.
    """
    overrides = {k: v for k, v in (overrides or {}).items() if k in dict(a) and (v is None or v in dict(b))}
    taken_b = {v for v in overrides.values() if v is not None}
    free_b: dict[str, list[str]] = defaultdict(list)
    for gid, kind in b:
        if gid not in taken_b:
            free_b[kind].append(gid)
    pairs: list[tuple[str | None, str | None]] = []
    for gid, kind in a:
        if gid in overrides:
            pairs.append((gid, overrides[gid]))
        else:
            pairs.append((gid, free_b[kind].pop(0) if free_b[kind] else None))
    paired_b = {p[1] for p in pairs}
    pairs += [(None, gid) for gid, _ in b if gid not in paired_b]
    return pairs


def parse_pairs(text: str) -> dict[str, str | None]:
    """Return the overrides written in a URL or on the command line: "A_ID:B_ID,A_ID:-" (- for none)."""
    out: dict[str, str | None] = {}
    for item in text.split(","):
        a, sep, b = item.strip().rpartition(":")
        if sep and a:
            out[a] = None if b in ("", "-") else b
    return out


def format_pairs(overrides: Mapping[str, str | None]) -> str:
    """Return the overrides as parse_pairs reads them."""
    return ",".join(f"{a}:{b or '-'}" for a, b in overrides.items())
