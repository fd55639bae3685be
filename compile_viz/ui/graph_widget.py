"""The graph SVG as a clickable widget (st.components.v2: inline, no iframe).

st.html strips SVG, and plain links would reload the page and start a new session; this widget
shows the SVG and turns a click on a node or kernel box into a trigger value (the link's
kernel / launch / node parameters), so selection is an ordinary rerun. The links stay real,
so a middle click still opens the view in a new tab.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

_JS = """
export default function(component) {
  const { data, setTriggerValue, parentElement } = component;
  let box = parentElement.querySelector('.cv-graph-host');
  if (!box) {
    box = document.createElement('div');
    box.className = 'cv-graph-host';
    parentElement.appendChild(box);
  }
  const changed = box.cvHtml !== data.html;  // a rerun that changed nothing here keeps the parsed SVG
  if (changed) {
    box.innerHTML = data.html;  // Graphviz SVG: labels are XML-escaped by Graphviz, names escaped in DOT
    box.cvHtml = data.html;
  }
  const onClick = (e) => {
    const a = e.target.closest('a');
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const href = a.getAttribute('xlink:href') || a.getAttribute('href') || '';
    const q = new URLSearchParams(href.split('?')[1] || '');
    e.preventDefault();
    setTriggerValue('select', {kernel: q.get('kernel') || '', launch: q.get('launch') || '', node: q.get('node') || '',
                               open: q.get('open') || '', close: q.get('close') || ''});
  };
  box.addEventListener('click', onClick);
  const sel = box.querySelector('.cv-sel, .cv-sel-cluster');
  const panel = box.querySelector('.cv-graph');
  if (changed && sel && panel) {
    const p = panel.getBoundingClientRect(), r = sel.getBoundingClientRect();
    panel.scrollTop += r.top - p.top - p.height / 2 + r.height / 2;
    panel.scrollLeft += r.left - p.left - p.width / 2 + r.width / 2;
  }
  return () => box.removeEventListener('click', onClick);
}
"""
_CSS = """
.cv-graph-host a { cursor: pointer; }
.cv-graph-host .node:not(.cv-sel):hover polygon, .cv-graph-host .node:not(.cv-sel):hover path { stroke-width: 2; }
"""

_component = st.components.v2.component("compile_viz.fx_graph", js=_JS, css=_CSS)


def graph_widget(panel_html: str, *, key: str, on_select: Callable[[dict], None]) -> None:
    """Show `panel_html` (svg.svg_panel); call `on_select({kernel, launch, node, open, close})` on a click."""

    result = _component(data={"html": panel_html}, key=key, on_select_change=lambda: None)
    value = getattr(result, "select", None)
    if value:
        on_select(dict(value))
