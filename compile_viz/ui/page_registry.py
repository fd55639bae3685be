"""The st.Page of each page, by name: app_pages.py fills it, a page that opens another looks it up
(st.switch_page takes the st.Page that st.navigation was given). Pages import this, never
app_pages.py, which imports them."""

from __future__ import annotations

_PAGES: dict = {}  # name -> st.Page


def register(pages: dict) -> None:
    """Record the st.Page objects st.navigation shows, by name."""
    _PAGES.update(pages)


def page_object(name: str):
    """Return the st.Page registered under `name` (for st.switch_page)."""
    return _PAGES[name]
