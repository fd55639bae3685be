"""The Lessons page (a guided path through torch.compile on the bundled runs) and the bar a lesson's
step shows above the Viewer (`?lesson=ID&step=N`). The lessons themselves are data: lessons_data.py."""

from __future__ import annotations

from html import escape

import streamlit as st

from compile_viz.render.lessons import inline_markdown, step_bar_html
from compile_viz.store import bundled_runs
from compile_viz.ui import state
from compile_viz.ui.lessons_data import LESSONS, Lesson, lesson
from compile_viz.ui.page_registry import page_url
from compile_viz.ui.runs import BUNDLED


def step_url(les: Lesson, k: int) -> str:
    """Return the link that opens step `k` (1-based) of a lesson: its view, with the lesson and step."""
    step = les.steps[k - 1]
    return page_url(step.page, **step.params(), lesson=les.id, step=k)


def ready(les: Lesson, bundled: set[str] | None = None) -> bool:
    """Return whether every run the lesson's steps open is bundled here."""
    bundled = {b.name for b in bundled_runs()} if bundled is None else bundled
    return all(s.run.removeprefix(BUNDLED) in bundled for s in les.steps)


def page() -> None:
    st.title("Lessons")
    st.caption("A path through torch.compile, one idea a lesson, each step a view of a bundled run with one "
               "thing selected. Turn on Projector mode (sidebar) for a room; every step links to the next.")
    bundled = {b.name for b in bundled_runs()}
    for i, les in enumerate(LESSONS, 1):
        st.markdown(f"#### {i}. {les.title}")
        st.html(f'<div class="cv-lessons">{inline_markdown(les.idea)}</div>')
        if not ready(les, bundled):
            st.caption(f"Waiting for a GPU capture of {', '.join(les.needs)} to be bundled.")
            continue
        items = "".join(f'<li><a class="cv-lesson-step" href="{escape(step_url(les, k))}" target="_self">'
                        f"{inline_markdown(s.title)}</a></li>" for k, s in enumerate(les.steps, 1))
        st.html(f'<ol class="cv-lessons">{items}</ol>')
        if les.needs:
            st.caption(f"More once {', '.join(les.needs)} is captured on a GPU and bundled (sample_models/).")


def lesson_bar() -> bool:
    """Above a page opened from a lesson (`?lesson=ID&step=N`): the step's title and text, back and
    next. Return whether one was shown."""
    les, k = lesson(state.get("lesson")), state.get_int("step")
    if les is None or k is None or not 1 <= k <= len(les.steps):
        return False
    step = les.steps[k - 1]
    st.html(step_bar_html(lesson=les.title, k=k, n=len(les.steps), title=step.title, text=step.text,
                          back=step_url(les, k - 1) if k > 1 else None,
                          forward=step_url(les, k + 1) if k < len(les.steps) else None,
                          index=page_url("lessons")))
    return True
