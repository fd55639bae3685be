"""compile_viz: `streamlit run app.py`."""

import streamlit as st

from compile_viz.ui.app_pages import pages
from compile_viz.ui.present import projector

st.set_page_config(page_title="compile_viz", layout="wide")
nav = st.navigation(pages())
projector()  # ?present=1: the sidebar's toggle, and the type for a room
nav.run()
