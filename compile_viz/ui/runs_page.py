"""The Runs page: pick a stored run (searchable, newest first), a bundled run, an upload or a server path."""

from __future__ import annotations

import streamlit as st

from compile_viz.artifacts import DiscoveryError, parse_path
from compile_viz.store import StoreError, bundled_runs
from compile_viz.ui import loaders
from compile_viz.ui.runs import BUNDLED, PATH, SERVER_PATHS_OFF, save_upload, server_paths_allowed

MAX_LISTED = 200


def _open(key: str) -> None:
    from compile_viz.ui.app_pages import page_object

    st.switch_page(page_object("viewer"), query_params={"run": key})


def page() -> None:
    store = loaders.get_store()
    st.subheader("Runs")
    query = st.text_input("Search runs", placeholder="model, id, device, reason…")
    runs = store.list_runs(query or None, limit=MAX_LISTED)
    if runs:
        rows = [{"id": r.id, "model": r.model, "status": r.status, "created": r.meta.get("created", ""),
                 "device": (r.meta.get("resolved") or r.meta.get("options") or {}).get("device", ""),
                 "reason": r.reason or ""} for r in runs]
        event = st.dataframe(rows, hide_index=True, on_select="rerun", selection_mode="single-row",
                             width="stretch", key="runs_table")
        picked = event.selection.rows if event is not None else []
        if picked:
            _open(runs[picked[0]].id)
    else:
        st.caption("No stored runs" + (" match." if query else " yet."))
    bundled = bundled_runs()
    if bundled:
        st.markdown("##### Bundled GPU runs")
        cols = st.columns(min(4, len(bundled)))
        for i, b in enumerate(bundled):
            if cols[i % len(cols)].button(b.meta.get("title") or b.name, key=f"bundled:{b.name}"):
                _open(BUNDLED + b.name)
    st.markdown("##### Load a run")
    up = st.file_uploader("Upload a run .zip (a compile-viz export, or a zip of a torch_compile_debug folder)",
                          type=["zip"])
    if up is not None:
        try:
            key = save_upload(up.name, up.getvalue(), store)
            if key.startswith(PATH):
                parse_path(key[len(PATH):])  # refuse here, not in the viewer, a zip with no debug run
        except (StoreError, DiscoveryError) as e:
            st.error(str(e))
        else:
            _open(key)
    if not server_paths_allowed():
        st.caption(SERVER_PATHS_OFF)
        return
    path = st.text_input("…or a path on the server", placeholder="/path/to/torch_compile_debug or run.zip")
    if path and st.button("Open path"):
        try:
            parse_path(path)
        except DiscoveryError as e:
            st.error(str(e))
        else:
            _open(PATH + path)
