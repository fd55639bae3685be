"""One rank picker for every page, kept in the URL (`rank=1`; the Compare page's B side: `compare_rank=`).
A run of one rank shows none; a rank the run does not have is said, with the nearest one linked."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from compile_viz.ui import state
from compile_viz.ui.unknown import nearest_number, say_unknown


def wanted_rank(param: str = "rank") -> int | None:
    """The rank the URL names (`rank=1`, or `rank=rank 1` as older links wrote it), else None."""
    text = state.get(param).removeprefix("rank ").strip()
    return int(text) if text.isdigit() else None


def pick_rank(ranks: list[int], *, page: str, param: str = "rank", label: str = "Rank", container=st,
              counts: dict[int, str] | None = None, implied: int | None = None,
              reset: Sequence[str] = ()) -> int | None:
    """A picker of `ranks` kept in ?param= on `page`; returns the rank picked, or None when there are
    fewer than two. `implied`: the rank that what else the URL names belongs to (a graph's), which
    wins over ?param=; `reset`: the parameters a new pick clears (a graph of the rank left)."""
    ranks = sorted(set(ranks))
    if len(ranks) < 2:
        return None
    now = implied if implied in ranks else wanted_rank(param)
    if now not in ranks:
        asked = state.get(param)
        if asked:
            known = {str(r): f"rank {r}" for r in ranks}
            say_unknown(page, param, asked, known, noun="rank", where="this run", showing=f"rank {ranks[0]}",
                        near=nearest_number(asked, known))
        now = ranks[0]
    picked = container.selectbox(label, ranks, index=ranks.index(now), key=f"{param}_pick:{now}",
                                 format_func=lambda r: f"rank {r}" + (f" ({counts[r]})" if counts and r in counts else ""))
    if picked != wanted_rank(param):
        state.update(**{param: picked}, **(dict.fromkeys(reset) if picked != now else {}))
        if picked != now:
            st.rerun()
    return picked
