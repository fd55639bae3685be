"""One rank picker for every page, kept in the URL (`rank=1`; the Compare page's B side: `compare_rank=`).
A run of one rank shows none."""

from __future__ import annotations

import streamlit as st

from compile_viz.ui import state


def wanted_rank(param: str = "rank") -> int | None:
    """The rank the URL names (`rank=1`, or `rank=rank 1` as older links wrote it), else None."""
    text = state.get(param).removeprefix("rank ").strip()
    return int(text) if text.isdigit() else None


def pick_rank(ranks: list[int], *, param: str = "rank", label: str = "Rank", container=st,
              counts: dict[int, str] | None = None) -> int | None:
    """A picker of `ranks` kept in ?param=; returns the rank picked, or None when there are fewer than two."""
    ranks = sorted(set(ranks))
    if len(ranks) < 2:
        return None
    now = wanted_rank(param)
    now = now if now in ranks else ranks[0]
    picked = container.selectbox(label, ranks, index=ranks.index(now), key=f"{param}_pick:{now}",
                                 format_func=lambda r: f"rank {r}" + (f" ({counts[r]})" if counts and r in counts else ""))
    if picked != wanted_rank(param):
        state.update(**{param: picked})
        if picked != now:
            st.rerun()
    return picked
