"""The graph SVG as a clickable widget (st.components.v2: inline, no iframe), opened fitted to its pane.

st.html strips SVG, and plain links would reload the page and start a new session; this widget
shows the SVG and turns a click on a node or kernel box into a trigger value (the link's
kernel / launch / node parameters), so selection is an ordinary rerun. The links stay real,
so a middle click still opens the view in a new tab.

Graphviz puts a drawing where its ranks fall: a wide backward's first boxes can sit thousands of
pixels right of the pane's corner, and a pane that opened at the drawing's natural size showed
white. So a drawing opens scaled to fit its pane (never above its natural size); one too flat or
too tall to read whole at that scale (under 40%: a 275-node forward in one row fits at 5%) opens
filling the pane's other side instead ("fit height", "fit width"), at most at 40% ("readable"),
from its start, and pans along;
the bar's `fit` shows it whole. The zoom bar,
Ctrl/⌘ + wheel (a trackpad's pinch) and dragging zoom and pan it, and a zoom the user chose is kept
while the same graph is redrawn (a selection, a module opened).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

_JS = """
const MIN = 0.02, MAX = 4, PT = 96 / 72, READABLE = 0.4;

function natural(svg) {  // the drawing's size in CSS pixels (Graphviz writes points)
  const px = (v) => { const n = parseFloat(v); return /pt$/.test(v || '') ? n * PT : n; };
  let w = px(svg.getAttribute('width')), h = px(svg.getAttribute('height'));
  if (!(w > 0 && h > 0)) {
    const vb = (svg.getAttribute('viewBox') || '').split(/[ ,]+/).map(Number);
    w = vb[2] * PT; h = vb[3] * PT;
  }
  return [w, h];
}

function fitScales(box) {  // {all: the whole drawing in the pane, open: what a drawing opens at}
  const panel = box.querySelector('.cv-graph'), [w, h] = box.cvSize;
  const availW = panel.clientWidth - 2, availH = (parseFloat(panel.dataset.height) || 640) - 2;
  if (availW <= 0 || !(w > 0 && h > 0)) return null;  // not laid out yet: the resize observer fits it
  const all = Math.min(1, availW / w, availH / h);
  if (all >= READABLE) return {all, open: all, side: ''};
  // too flat or too tall to read whole (a 275-node graph in one row opens at 5%): fill the pane's
  // other side up to a readable size instead, and pan along the long one; `fit` shows it whole
  const byW = availW / w, byH = availH / h, open = Math.max(all, Math.min(1, Math.max(byW, byH), READABLE));
  return {all, open, side: open >= READABLE * 0.9999 ? 'readable' : byW > byH ? 'fit width' : 'fit height'};
}

function apply(box) {  // draw at the user's zoom, else fitted
  const svg = box.querySelector('.cv-graph svg');
  if (!svg || !box.cvSize) return;
  const fit = fitScales(box);
  if (fit === null) return;
  const scale = box.cvZoom ?? (box.cvWhole ? fit.all : fit.open);
  box.cvScale = scale;
  svg.style.width = (box.cvSize[0] * scale) + 'px';
  svg.style.height = (box.cvSize[1] * scale) + 'px';
  svg.style.maxWidth = 'none';
  svg.style.display = 'block';  // no inline gap under it: a fitted drawing needs no scroll bar
  const pct = box.querySelector('.cv-zoom-pct');
  const how = box.cvZoom != null ? '' : scale <= fit.all * 1.0001 ? ' (fit)' : ` (${fit.side})`;
  if (pct) pct.textContent = Math.round(scale * 100) + '%' + how;
}

function zoomAt(box, scale, cx, cy) {  // keep the drawing's point under (cx, cy) of the pane in place
  const panel = box.querySelector('.cv-graph'), old = box.cvScale || 1;
  const x = (panel.scrollLeft + cx) / old, y = (panel.scrollTop + cy) / old;
  box.cvZoom = Math.min(MAX, Math.max(MIN, scale));
  apply(box);
  panel.scrollLeft = x * box.cvScale - cx;
  panel.scrollTop = y * box.cvScale - cy;
}

const BAR = '<div class="cv-zoombar"><button data-z="out" title="Zoom out">−</button>' +
  '<button data-z="fit" title="Fit the whole graph in the pane">fit</button>' +
  '<button data-z="in" title="Zoom in">+</button><button data-z="one" title="Natural size">100%</button>' +
  '<span class="cv-zoom-pct"></span><span class="cv-zoom-hint">Ctrl/⌘ + wheel zooms, drag pans</span></div>';

export default function(component) {
  const { data, setTriggerValue, parentElement } = component;
  let box = parentElement.querySelector('.cv-graph-host');
  if (!box) {
    box = document.createElement('div');
    box.className = 'cv-graph-host';
    box.cvZoom = null;  // null: fitted to the pane; a number: the scale the user chose
    parentElement.appendChild(box);
  }
  const changed = box.cvHtml !== data.html;  // a rerun that changed nothing here keeps the parsed SVG
  if (changed) {
    const old = box.querySelector('.cv-graph');
    const kept = old ? [old.scrollLeft, old.scrollTop, box.cvViewBox] : null;
    box.innerHTML = BAR + data.html;  // Graphviz SVG: labels are XML-escaped by Graphviz, names escaped in DOT
    box.cvHtml = data.html;
    const svg = box.querySelector('.cv-graph svg');
    box.cvSize = svg ? natural(svg) : null;
    box.cvViewBox = svg ? svg.getAttribute('viewBox') : null;
    apply(box);
    const panel = box.querySelector('.cv-graph');
    const sel = box.querySelector('.cv-sel, .cv-sel-cluster');
    if (panel && kept && box.cvZoom != null && kept[2] === box.cvViewBox) {  // the same drawing, re-marked
      panel.scrollLeft = kept[0];
      panel.scrollTop = kept[1];
    }
    if (panel && sel && box.cvZoom != null) {  // zoomed in: bring the selection to the middle
      const p = panel.getBoundingClientRect(), r = sel.getBoundingClientRect();
      panel.scrollTop += r.top - p.top - p.height / 2 + r.height / 2;
      panel.scrollLeft += r.left - p.left - p.width / 2 + r.width / 2;
    }
  }
  const panel = box.querySelector('.cv-graph');
  let drag = null;
  const onClick = (e) => {
    if (box.cvDragged) { box.cvDragged = false; e.preventDefault(); return; }  // the end of a pan
    const bar = e.target.closest('.cv-zoombar button');
    if (bar && panel) {
      const z = bar.dataset.z, cx = panel.clientWidth / 2, cy = panel.clientHeight / 2;
      if (z === 'fit') { box.cvZoom = null; box.cvWhole = true; apply(box); panel.scrollLeft = 0; panel.scrollTop = 0; }
      else zoomAt(box, z === 'one' ? 1 : (box.cvScale || 1) * (z === 'in' ? 1.25 : 0.8), cx, cy);
      return;
    }
    const a = e.target.closest('a');
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const href = a.getAttribute('xlink:href') || a.getAttribute('href') || '';
    const q = new URLSearchParams(href.split('?')[1] || '');
    e.preventDefault();
    box.cvTrigger('select', {kernel: q.get('kernel') || '', launch: q.get('launch') || '', node: q.get('node') || '',
                             open: q.get('open') || '', close: q.get('close') || ''});
  };
  const onWheel = (e) => {
    if (!panel || !(e.ctrlKey || e.metaKey) || !panel.contains(e.target)) return;
    e.preventDefault();
    const p = panel.getBoundingClientRect();
    zoomAt(box, (box.cvScale || 1) * Math.exp(-e.deltaY * 0.002), e.clientX - p.left, e.clientY - p.top);
  };
  const onDown = (e) => {
    box.cvDragged = false;  // a drag's own click may not come (released elsewhere): never eat the next one
    if (panel && e.button === 0 && panel.contains(e.target))
      drag = {x: e.clientX, y: e.clientY, left: panel.scrollLeft, top: panel.scrollTop, moved: false};
  };
  const onMove = (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 5) return;
    drag.moved = true;
    panel.classList.add('cv-panning');
    panel.scrollLeft = drag.left - dx;
    panel.scrollTop = drag.top - dy;
  };
  const onUp = () => {
    if (drag && drag.moved) { box.cvDragged = true; panel.classList.remove('cv-panning'); }
    drag = null;
  };
  box.cvTrigger = setTriggerValue;
  box.addEventListener('click', onClick);
  box.addEventListener('wheel', onWheel, {passive: false});
  box.addEventListener('pointerdown', onDown);
  window.addEventListener('pointermove', onMove);
  window.addEventListener('pointerup', onUp);
  let width = panel ? panel.clientWidth : 0;
  const resized = new ResizeObserver(() => {  // laid out late (an expander opened) or resized: fit again
    if (!panel || panel.clientWidth === width) return;
    width = panel.clientWidth;
    if (box.cvZoom == null) apply(box);
  });
  if (panel) resized.observe(panel);
  return () => {
    box.removeEventListener('click', onClick);
    box.removeEventListener('wheel', onWheel);
    box.removeEventListener('pointerdown', onDown);
    window.removeEventListener('pointermove', onMove);
    window.removeEventListener('pointerup', onUp);
    resized.disconnect();
  };
}
"""
_CSS = """
.cv-graph-host a { cursor: pointer; }
.cv-graph-host .cv-graph { cursor: grab; }
.cv-graph-host .cv-graph.cv-panning { cursor: grabbing; user-select: none; }
.cv-graph-host .node:not(.cv-sel):hover polygon, .cv-graph-host .node:not(.cv-sel):hover path { stroke-width: 2; }
.cv-zoombar { display: flex; gap: 4px; align-items: center; justify-content: flex-end; font-size: 12px;
  margin-bottom: 2px; color: #555; }
.cv-zoombar button { font-size: 12px; line-height: 16px; padding: 0 7px; border: 1px solid #ccc; border-radius: 4px;
  background: #fff; cursor: pointer; }
.cv-zoombar button:hover { border-color: #888; }
.cv-zoom-pct { min-width: 64px; text-align: right; }
.cv-zoom-hint { color: #999; margin-left: 6px; }
"""

_component = st.components.v2.component("compile_viz.fx_graph", js=_JS, css=_CSS)


def graph_widget(panel_html: str, *, key: str, on_select: Callable[[dict], None]) -> None:
    """Show `panel_html` (svg.svg_panel) fitted to its pane; call `on_select({kernel, launch, node,
    open, close})` on a click."""

    result = _component(data={"html": panel_html}, key=key, on_select_change=lambda: None)
    value = getattr(result, "select", None)
    if value:
        on_select(dict(value))
