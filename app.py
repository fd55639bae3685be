"""compile_viz: `streamlit run app.py`."""

import streamlit as st

from compile_viz.ui.app_pages import pages

st.set_page_config(page_title="compile_viz", layout="wide")
st.navigation(pages()).run()
