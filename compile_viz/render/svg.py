"""DOT text -> SVG through Graphviz's `dot` binary, made to fit a page."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Collection

from compile_viz.render.palette import SELECTED

_XML_HEAD = re.compile(r"^.*?(?=<svg\b)", re.S)
_MARKABLE = re.compile(r'<g id="(cv[nLC]\d+)" class="([^"]*)">')  # ids from fx_dot.node_id / launch_ids
_SHAPE = re.compile(r'<(?:polygon|path|ellipse)\b[^>]*>')
_STROKE = re.compile(r' stroke(?:-width)?="[^"]*"')


class LayoutError(Exception):
    """Graphviz failed or timed out; str() is one line."""


def have_dot() -> bool:
    """Return whether Graphviz's `dot` binary is on PATH."""
    return shutil.which("dot") is not None


def dot_to_svg(dot: str, *, timeout_s: float = 60.0) -> str:
    """Return the SVG of `dot` laid out by Graphviz, without the XML prologue.

    Raises LayoutError when `dot` is missing, fails or runs past `timeout_s`.
    """
    exe = shutil.which("dot")
    if exe is None:
        raise LayoutError("Graphviz's `dot` is not installed (apt-get install graphviz)")
    try:
        proc = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"Graphviz took more than {timeout_s:g} s; collapse the graph or pick fewer hops") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"Graphviz failed: {msg[-1] if msg else proc.returncode}")
    return _XML_HEAD.sub("", proc.stdout.decode("utf-8", "replace"), count=1)


def svg_panel(svg: str, *, height_px: int = 640) -> str:
    """Return HTML that shows `svg` in a scrollable pane at most `height_px` high (`data-height`:
    the graph widget fits the drawing to the pane's width and this height, and zooms it)."""
    return (f'<div class="cv-graph" data-height="{height_px}" style="overflow:auto;max-height:{height_px}px;'
            f'border:1px solid #ddd;border-radius:4px;background:#fff">{svg}</div>')


def mark_svg(svg: str, ids: Collection[str]) -> str:
    """Return `svg` with the nodes and clusters whose <g id> is in `ids` marked as selected:
    outlined (stroke and width of the selection colour) and classed `cv-sel` (`cv-sel-cluster`).

    Restyling the cached SVG instead of laying the graph out again keeps a new selection cheap.
    """
    if not ids:
        return svg
    out, at = [], 0
    for m in _MARKABLE.finditer(svg):
        if m.group(1) not in ids:
            continue
        classes = m.group(2).replace("&#45;", "-").split()  # Graphviz writes a DOT class's "-" as &#45;
        mark = "cv-sel-cluster" if "cluster" in classes else "cv-sel"
        if mark not in classes:
            classes.append(mark)
        out += [svg[at:m.start()], f'<g id="{m.group(1)}" class="{" ".join(classes)}">']
        at = m.end()
        shape = _SHAPE.search(svg, at)
        if shape is not None:
            tag = _STROKE.sub("", shape.group(0))
            name_end = tag.index(" ") if " " in tag else len(tag) - 1
            tag = f'{tag[:name_end]} stroke="{SELECTED}" stroke-width="3"{tag[name_end:]}'
            out += [svg[at:shape.start()], tag]
            at = shape.end()
    out.append(svg[at:])
    return "".join(out)
