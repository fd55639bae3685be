"""One line for a URL parameter that names nothing here (`graph=`, `kernel=`, `rank=`, `compile=`…):
what was asked for, what is shown instead, and a link to the nearest thing that is here. A page
never shows something else without saying so."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

import streamlit as st

from compile_viz.ui.page_registry import page_url

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$<>~])")


def md_text(text: str) -> str:
    """Return `text` escaped for st.markdown: shown as written, never as a link, emphasis or LaTeX."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def nearest(asked: str, known: Mapping[str, str]) -> str | None:
    """Return the key of `known` ({value: label}) whose value or label is nearest `asked` by difflib's
    ratio (the first key when none is near); None when `known` is empty."""
    if not known:
        return None
    texts: dict[str, str] = {}
    for value, label in known.items():
        texts.setdefault(label, value)
        texts.setdefault(value, value)
    close = difflib.get_close_matches(asked, list(texts), n=1, cutoff=0.0)
    return texts[close[0]] if close else next(iter(known))


def nearest_number(asked: str, known: Mapping[str, str]) -> str | None:
    """Return the key of `known` nearest `asked` as a number (rank 7 of ranks 0-3: 3); by text otherwise."""
    digits = re.sub(r"\D", "", asked)
    numeric = {k: int(k) for k in known if k.lstrip("-").isdigit()}
    if not digits or not numeric:
        return nearest(asked, known)
    return min(numeric, key=lambda k: (abs(numeric[k] - int(digits)), numeric[k]))


def say_unknown(page: str, param: str, asked: str, known: Mapping[str, str], *, noun: str, where: str,
                showing: str, also: Mapping[str, object] | None = None, near: str | None = None) -> str | None:
    """Warn, in one line, that `param`=`asked` names no `noun` in `where`, that `showing` is shown
    instead, with a link to the nearest entry of `known` ({value: label}): this page, this URL with
    `param` set to it and `also` (None removes a parameter). Return that nearest value."""
    best = near if near is not None else nearest(asked, known)
    line = f"No {noun} “{md_text(asked)}” in {where}: showing {md_text(showing)}."
    if best is not None:
        params = {**st.query_params.to_dict(), **(also or {}), param: best}
        line += f" Nearest: [{md_text(known.get(best, best))}]({page_url(page, **params)}); or pick one below."
    st.warning(line, icon=":material/link_off:")
    return best
