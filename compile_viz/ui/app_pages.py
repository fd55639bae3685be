"""The pages st.navigation shows, in order, each at its path in page_registry (which every link is
made from), and the hidden page at the root that opens the one its parameters ask for."""

from __future__ import annotations

import streamlit as st

from compile_viz.ui import (
    compare_page,
    compile_page,
    compiles_page,
    fleet_page,
    lessons_page,
    page_registry,
    runs_page,
    viewer,
)
from compile_viz.ui.page_registry import ROOT_PATH, URL_PATHS, default_page


def root() -> None:
    """The root (`/?…`): the page its parameters ask for, at that page's own path, parameters kept."""
    st.switch_page(page_registry.page_object(default_page(st.query_params)), query_params=st.query_params.to_dict())


def pages() -> list:
    shown = dict(
        viewer=(viewer.page, "Viewer", ":material/account_tree:"),
        compare=(compare_page.page, "Compare", ":material/compare_arrows:"),
        compile=(compile_page.page, "Compile", ":material/play_arrow:"),
        compiles=(compiles_page.page, "Compiles", ":material/timeline:"),
        runs=(runs_page.page, "Runs", ":material/folder_open:"),
        fleet=(fleet_page.page, "Fleet", ":material/lan:"),
        lessons=(lessons_page.page, "Lessons", ":material/school:"),
    )
    named = {name: st.Page(fn, title=title, icon=icon, url_path=URL_PATHS[name]) for name, (fn, title, icon) in shown.items()}
    page_registry.register(named)
    start = st.Page(root, title="compile_viz", url_path=ROOT_PATH, default=True, visibility="hidden")
    return [start, *named.values()]
