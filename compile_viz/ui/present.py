"""Projector mode (`?present=1`): a toggle in the sidebar, kept in the URL (page_url carries it on
every link while it is on), and the page's type set for the back of a room."""

from __future__ import annotations

import streamlit as st

from compile_viz.ui import state
from compile_viz.ui.page_registry import presenting

CODE_PX = 18  # code in projector mode: kernel source and the user's source
CODE_HEIGHT_PX = 340  # both code boxes side by side, under the title, a lesson's step and a wrong run's one-line banner, in 720 px
GRAPH_HEIGHT_PX = 460  # a graph fitted to what is left of a 720-pixel screen

# Labels, text and tables larger; less padding above the page, so the code starts high enough to
# be seen whole at 1280 x 720.
_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding: 3.2rem 1.5rem 2rem 1.5rem; }
.cv-lesson, .cv-lessons { font-size: 20px; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 20px; }
[data-testid="stWidgetLabel"] p { font-size: 18px; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 17px; }
[data-testid="stMain"] h3 { font-size: 26px; padding: 0.2rem 0; }
.cv-kname { font-size: 22px; font-weight: 600; }
.cv-kname small { font-size: 17px; font-weight: 400; color: #555; }
</style>"""


def on() -> bool:
    """Return whether projector mode is on for this page."""
    return presenting()


def projector() -> None:
    """The sidebar's toggle (`present=1` in the URL while on) and, while on, the larger type."""
    now = on()
    picked = st.sidebar.toggle("Projector mode", value=now, key=f"present_sel:{now}",
                               help="Larger type, short kernel names, code and source side by side: for a "
                                    "room. Kept in the URL (present=1), and in every link while on.")
    if picked != now:
        state.update(present=1 if picked else None)
        st.rerun()
    if now:
        st.html(_CSS)
