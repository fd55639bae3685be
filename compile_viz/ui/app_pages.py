"""The pages st.navigation shows, in order."""

from __future__ import annotations

import streamlit as st

from compile_viz.ui import compare_page, compile_page, compiles_page, fleet_page, page_registry, runs_page, viewer


def pages() -> list:
    comparing = bool(st.query_params.get("compare"))  # ?run=A&compare=B opens the comparison
    named = dict(
        viewer=st.Page(viewer.page, title="Viewer", icon=":material/account_tree:", url_path="viewer",
                       default=not comparing),
        compare=st.Page(compare_page.page, title="Compare", icon=":material/compare_arrows:", url_path="compare",
                        default=comparing),
        compile=st.Page(compile_page.page, title="Compile", icon=":material/play_arrow:", url_path="compile"),
        compiles=st.Page(compiles_page.page, title="Compiles", icon=":material/timeline:", url_path="compiles"),
        runs=st.Page(runs_page.page, title="Runs", icon=":material/folder_open:", url_path="runs"),
        fleet=st.Page(fleet_page.page, title="Fleet", icon=":material/lan:", url_path="fleet"),
    )
    page_registry.register(named)
    return list(named.values())
