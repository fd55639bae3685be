"""A lesson's step as HTML: the bar above the Viewer that says what the class is looking at, with
one link back and one forward (the links are made by the page, with page_registry.page_url)."""

from __future__ import annotations

import re
from html import escape

_BAR = ('<div class="cv-lesson" style="border-left:4px solid #4c6ef5;background:#f1f3ff;padding:6px 12px;'
        'border-radius:4px;line-height:1.35">'
        '<div style="display:flex;gap:1em;align-items:baseline;flex-wrap:wrap">'
        '<span style="font-weight:600">{title}</span>'
        '<span style="color:#555">{lesson} · step {k} of {n}</span>'
        '<span style="margin-left:auto;white-space:nowrap">{links}</span></div>'
        '<div class="cv-lesson-text">{text}</div></div>')


def inline_markdown(text: str) -> str:
    """Return `text` escaped, its `code` spans as <code>: the little Markdown a step's text uses."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def _link(href: str | None, label: str, cls: str) -> str:
    if not href:
        return f'<span style="color:#aaa">{escape(label)}</span>'
    return f'<a class="{cls}" href="{escape(href)}" target="_self">{escape(label)}</a>'


def step_bar_html(*, lesson: str, k: int, n: int, title: str, text: str, back: str | None, forward: str | None,
                  index: str) -> str:
    """Return the bar of step `k` (1-based) of `n` of a lesson: its title, text, and links to the step
    before (`back`), the step after (`forward`; None at either end) and the list of lessons."""
    links = " · ".join((_link(back, "← back", "cv-lesson-back"), _link(forward, "next →", "cv-lesson-next"),
                        _link(index, "lessons", "cv-lesson-index")))
    return _BAR.format(title=inline_markdown(title), lesson=escape(lesson), k=k, n=n, links=links,
                       text=inline_markdown(text))
