"""The Viewer's Share button: the run as one self-contained HTML file (render/share.py, what
`compile-viz share` writes), made when the button is clicked and cached per run."""

from __future__ import annotations

import re

import streamlit as st

from compile_viz.render.share import collect_run, share_html
from compile_viz.ui.runs import RunInfo, path_stamp


@st.cache_data(max_entries=8, show_spinner=False)
def _share_file(path: str, stamp: float, _meta: dict) -> bytes:
    # runs on the download's own thread (no page to draw on): library calls only, no cached loaders
    return share_html(collect_run(path, _meta)).encode()


def share_button(info: RunInfo) -> None:
    """A download button for the shared file of the run `info` names."""
    path = str(info.run_dir or info.debug_path)
    name = re.sub(r"[^\w.-]+", "_", str(info.meta.get("id") or info.meta.get("model") or "run")).strip("_") or "run"
    st.download_button("Share", data=lambda: _share_file(path, path_stamp(info.key), info.meta), file_name=f"{name}.html",
                       mime="text/html", on_click="ignore", icon=":material/share:", key="share_run",
                       help="Download this run as one HTML file that opens anywhere, offline: drawings, kernels' code, "
                            "FX nodes and source lines, linked (compile-viz share does the same)")
