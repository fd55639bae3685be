"""The app's pages by name: the URL path of each, the link that opens one (`page_url`), which page
the bare root opens (`default_page`), and the st.Page objects st.navigation was given (app_pages.py
fills them; st.switch_page takes them). Pages import this, never app_pages.py, which imports them.

Every page lives at one path, whatever its parameters: the root is a hidden page that opens the
page its parameters ask for at that page's own path. (When the root served the Viewer, or the
Compare page for `?compare=`, `/viewer?…` and a reloaded `/compare?run=A&compare=B` answered
"Page not found".) Every link a page or a render function makes comes from `page_url`.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

import streamlit as st

URL_PATHS = {"viewer": "viewer", "compare": "compare", "compile": "compile", "compiles": "compiles", "runs": "runs",
             "fleet": "fleet", "lessons": "lessons"}
ROOT_PATH = "start"  # the hidden page at the root (st.Page wants a path even for the page served at /)

_PAGES: dict = {}  # name -> st.Page


def default_page(params: Mapping[str, object]) -> str:
    """Return the name of the page the root opens for these query parameters: the Compare page for a
    comparison (`/?run=A&compare=B`, as `compile-viz diff` and older pages linked), else the Viewer."""
    return "compare" if params.get("compare") else "viewer"


def query(**params: object) -> str:
    """Return `k=v&…` of the parameters given, each value quoted whole; None and "" are left out."""
    return "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items() if v is not None and v != "")


def page_url(name: str, /, **params: object) -> str:
    """Return the link that opens page `name` with `params` (None and "" left out): `/<its path>?…`,
    under the server's base path. While projector mode is on (`present=1` in this page's URL) the
    link keeps it, unless `present` is given."""
    if name not in URL_PATHS:
        raise KeyError(f"no page {name!r}: one of {', '.join(URL_PATHS)}")
    if "present" not in params and presenting():
        params = {**params, "present": 1}
    base = "/" + "".join(f"{p}/" for p in str(st.get_option("server.baseUrlPath") or "").split("/") if p)
    q = query(**params)
    return f"{base}{URL_PATHS[name]}" + (f"?{q}" if q else "")


def presenting() -> bool:
    """Return whether this page is shown in projector mode (`?present=1`)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    # outside a running app (a test calling page_url) there is no page, so no projector
    return get_script_run_ctx(suppress_warning=True) is not None and st.query_params.get("present") == "1"


def switch(name: str, /, **params: object) -> None:
    """Open page `name` with `params` (st.switch_page), projector mode kept as page_url keeps it."""
    if "present" not in params and presenting():
        params = {**params, "present": 1}
    st.switch_page(page_object(name), query_params={k: str(v) for k, v in params.items() if v is not None and v != ""})


def register(pages: Mapping) -> None:
    """Record the st.Page objects st.navigation shows, by name."""
    _PAGES.update(pages)


def page_object(name: str):
    """Return the st.Page registered under `name` (for st.switch_page)."""
    return _PAGES[name]
