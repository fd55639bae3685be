"""Code as HTML in a pane that opens on its first marked line (st.components.v2: inline, no iframe).

st.html runs no script, so a long file whose marked lines are far down opened on line 1 and the
marks were out of sight; this shows the same HTML (render/code_html.py: a `.cv-code` box, marked
lines with the class `cv-mark`) and scrolls the box so the first mark sits near its top.
"""

from __future__ import annotations

import streamlit as st

_JS = """
export default function(component) {
  const { data, parentElement } = component;
  let host = parentElement.querySelector('.cv-code-host');
  if (!host) {
    host = document.createElement('div');
    host.className = 'cv-code-host';
    parentElement.appendChild(host);
  }
  if (host.cvHtml === data.html) return;  // a rerun that changed nothing keeps where the user scrolled
  host.innerHTML = data.html;  // escaped by render/code_html.py (Pygments, or html.escape)
  host.cvHtml = data.html;
  const mark = host.querySelector('.cv-mark');
  const box = mark && mark.closest('.cv-code');
  if (box) {
    const b = box.getBoundingClientRect(), m = mark.getBoundingClientRect();
    box.scrollTop += m.top - b.top - b.height / 4;
  }
}
"""

_component = st.components.v2.component("compile_viz.code_view", js=_JS)


def code_view(html: str, *, key: str) -> None:
    """Show `html` (a render/code_html.py box) scrolled to its first `.cv-mark` line."""
    _component(data={"html": html}, key=key)
