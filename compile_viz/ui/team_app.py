"""compile_viz on a team server: the script `compile-viz serve` runs (app.py with the sign-in gate)."""

import streamlit as st

from compile_viz.ui import loaders
from compile_viz.ui.app_pages import pages
from compile_viz.ui.present import projector
from compile_viz.ui.team import gate, team_mode, team_pages
from compile_viz.ui.team_notes import sidebar

st.set_page_config(page_title="compile_viz", layout="wide")
gate(loaders.get_store())
if team_mode():
    sidebar(loaders.get_store())
nav = st.navigation(team_pages(pages()))
projector()
nav.run()
