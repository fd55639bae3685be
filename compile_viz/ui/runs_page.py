"""The Runs page: pick a stored run (searchable, newest first), a bundled run, an upload or a server
path (a run, a debug tree, or a TORCH_TRACE log or folder, which becomes a stored run)."""

from __future__ import annotations

import streamlit as st

from compile_viz.artifacts import DiscoveryError, parse_path
from compile_viz.store import StoreError, bundled_runs
from compile_viz.ui import loaders, page_registry
from compile_viz.ui.runs import (
    BUNDLED,
    PATH,
    SERVER_PATHS_OFF,
    first_page,
    run_row,
    save_upload,
    server_path_key,
    server_paths_allowed,
    upload_details,
)
from compile_viz.ui.tables import table

MAX_LISTED = 200


def _open(key: str) -> None:
    page_registry.switch(first_page(key, loaders.get_store()), run=key)


def _error(message: str, details: str) -> None:
    """One line: what happened and what to do; what we saw, in an expander under it."""
    st.error(message)
    with st.expander("Details"):
        st.code(details, language=None)


def page() -> None:
    store = loaders.get_store()
    st.subheader("Runs")
    query = st.text_input("Search runs", placeholder="model, id, status, device, reason…")
    runs = store.list_runs(query or None, limit=MAX_LISTED)
    if runs:
        rows = [run_row(r) for r in runs]
        event = table(rows, on_select="rerun", selection_mode="single-row", key="runs_table")
        picked = event.selection.rows if event is not None else []
        if picked:
            _open(runs[picked[0]].id)
    else:
        st.caption("No stored runs" + (" match." if query else " yet."))
    bundled = bundled_runs()
    if bundled:
        st.markdown("##### Bundled runs")  # H100 captures, and one CPU capture (compiled_differs)
        cols = st.columns(min(4, len(bundled)))
        for i, b in enumerate(bundled):
            if cols[i % len(cols)].button(b.meta.get("title") or b.name, key=f"bundled:{b.name}"):
                _open(BUNDLED + b.name)
    st.markdown("##### Load a run")
    up = st.file_uploader("Upload a run .zip (a compile-viz export or a zip of a torch_compile_debug folder), "
                          "a TORCH_TRACE log (.log, .gz, or a zip of the trace folder) or an AOTInductor .pt2",
                          type=["zip", "log", "gz", "txt", "pt2"])
    if up is not None:
        _open_upload(up.name, up.getvalue(), store)
    if not server_paths_allowed():
        st.caption(SERVER_PATHS_OFF)
        return
    path = st.text_input("…or a path on the server",
                         placeholder="/path/to/torch_compile_debug, run.zip, or a TORCH_TRACE log or folder")
    if path and st.button("Open path"):
        _open_path(path.strip(), store)


def _open_upload(name: str, data: bytes, store) -> None:
    try:
        key = save_upload(name, data, store)
        if key.startswith(PATH):
            parse_path(key[len(PATH):])  # refuse here, not in the viewer, a zip with no debug run
    except (StoreError, DiscoveryError, OSError) as e:
        _error(str(e), upload_details(name, data))
    else:
        _open(key)


def _open_path(path: str, store) -> None:
    try:
        key = server_path_key(path, store)
        if key.startswith(PATH):
            parse_path(path)
    except (StoreError, DiscoveryError, OSError) as e:
        _error(str(e), f"path on the server: {path}\nwhat it may be: a torch_compile_debug folder (or a zip "
                       "of one), a run zip from compile-viz export, a TORCH_TRACE log (plain or .gz) or the "
                       "folder holding one log per rank")
    else:
        _open(key)
