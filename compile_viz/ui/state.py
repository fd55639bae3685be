"""The selection in the URL: ?run=…&graph=…&view=…&kernel=…&launch=…&node=…"""

from __future__ import annotations

import streamlit as st

SELECTION_KEYS = ("kernel", "launch", "node")


def get(name: str, default: str = "") -> str:
    return st.query_params.get(name, default)


def get_int(name: str) -> int | None:
    try:
        return int(st.query_params.get(name, ""))
    except ValueError:
        return None


def update(**params: object) -> None:
    """Set (or, for None and "", remove) query parameters."""
    for k, v in params.items():
        if v is None or v == "":
            if k in st.query_params:
                del st.query_params[k]
        else:
            st.query_params[k] = str(v)


def clear_selection() -> None:
    update(**dict.fromkeys(SELECTION_KEYS))


def link_prefix() -> str:
    """Return the Viewer's link that keeps the run, graph and view ("/viewer?run=..&graph=..&view=.."), for
    the links of the nodes drawn."""
    from compile_viz.ui.page_registry import page_url

    return page_url("viewer", **{k: get(k) for k in ("run", "graph", "view", "layout", "hops", "open")})
