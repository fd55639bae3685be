"""Every table the pages show, one way: no index column, the page's width, and a blank cell for what a
row does not have (st.dataframe would write "None"), while number columns stay numbers and sort as such."""

from __future__ import annotations

from typing import Any

import streamlit as st


def table(rows: Any, **kw: Any):
    """st.dataframe of `rows` (a list of dicts) with the pages' defaults; returns its selection event."""
    kw.setdefault("hide_index", True)
    kw.setdefault("width", "stretch")
    kw.setdefault("placeholder", "")
    return st.dataframe(rows, **kw)
