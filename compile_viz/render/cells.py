"""A table cell as text, one rule for every table the pages show (Runs, Compiles): blank for what a
row does not have, which st.dataframe would show as "None"."""

from __future__ import annotations


def text_cell(value, float_format: str = "{:.1f}") -> str:
    """"" for None, a float by `float_format`, anything else by str()."""
    if value is None:
        return ""
    return float_format.format(value) if isinstance(value, float) else str(value)
