"""Kernel source -> highlighted HTML (Pygments, inline styles, line numbers of output_code.py)."""

from __future__ import annotations

import html

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, PythonLexer

STYLE = "default"
CODE_PX = 12  # the code's type size; projector mode asks for 18 or more
_WRAP = ('<div class="cv-code" style="overflow:auto;max-height:{h}px;font-size:{px}px;'
         'border:1px solid #ddd;border-radius:4px">{body}</div>')


def highlight_code(source: str, *, language: str = "python", first_line: int = 1,
                   marked: tuple[int, ...] = (), height_px: int = 560, font_px: int = CODE_PX) -> str:
    """Return `source` as highlighted HTML with line numbers from `first_line`; `marked` lines
    (numbered like the display) get a background and the class `cv-mark` (a pane scrolls to the
    first). Pygments escapes the text."""
    # stripnl=False: by default a lexer drops the source's leading blank lines, which moved every
    # number and mark of a file that starts with one a line off its text
    lexer = CppLexer(stripnl=False) if language in ("cpp", "c++", "c") else PythonLexer(stripnl=False)
    fmt = HtmlFormatter(style=STYLE, noclasses=True, linenos="inline", linenostart=first_line,
                        hl_lines=[n - first_line + 1 for n in marked], wrapcode=True)
    body = highlight(source, lexer, fmt)
    if marked:
        hll = f'<span style="background-color: {fmt.style.highlight_color}">'
        body = body.replace(hll, f'<span class="cv-mark" style="background-color: {fmt.style.highlight_color}">')
    return _WRAP.format(h=height_px, px=font_px, body=body)


def kernel_language(backend: str) -> str:
    """Return the Pygments language of a kernel backend."""
    return "cpp" if backend in ("cpp", "cpp_wrapper", "cuda") else "python"


def plain_lines_html(lines: list[tuple[int, str, bool]], *, height_px: int = 360, font_px: int = CODE_PX) -> str:
    """Return numbered lines (number, text, marked) as escaped HTML; marked lines highlighted."""
    rows = []
    for number, text, marked in lines:
        bg, mark = ("background:#fff3bf;", ' class="cv-mark"') if marked else ("", "")
        rows.append(f'<div{mark} style="{bg}white-space:pre"><span style="color:#999;display:inline-block;'
                    f'width:4em;text-align:right;margin-right:1em">{number}</span>{html.escape(text)}</div>')
    body = f'<div style="font-family:monospace;font-size:{font_px}px;padding:4px">' + "".join(rows) + "</div>"
    return _WRAP.format(h=height_px, px=font_px, body=body)


_BODY_STARTS = ("@triton.jit", "def triton_", 'extern "C"')


def kernel_body(source: str, first_line: int) -> tuple[str, int]:
    """Return a kernel's source from its `@triton.jit` (or C++ `extern "C"`) on, and that line's
    number: the imports and compile call above it are alike in every kernel. Unchanged without one."""
    lines = source.splitlines()
    at = next((i for i, line in enumerate(lines) if line.lstrip().startswith(_BODY_STARTS)), None)
    if not at:
        return source, first_line
    return "\n".join(lines[at:]), first_line + at
