"""DOT text -> SVG through Graphviz's `dot` binary, made to fit a page."""

from __future__ import annotations

import re
import shutil
import subprocess

_XML_HEAD = re.compile(r"^.*?(?=<svg\b)", re.S)
_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


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


def svg_panel(svg: str, *, height_px: int = 640, zoom: float = 1.0) -> str:
    """Return HTML that shows `svg` in a scrollable box at `zoom` times its natural size."""
    m = _SIZE.search(svg)
    if m:
        w, h = float(m.group(1)) * zoom, float(m.group(2)) * zoom
        svg = svg[: m.start()] + f'<svg width="{w:.0f}pt" height="{h:.0f}pt"' + svg[m.end():]
    return (f'<div class="cv-graph" style="overflow:auto;max-height:{height_px}px;border:1px solid #ddd;'
            f'border-radius:4px;background:#fff">{svg}</div>')
