"""Notes on a run, a graph, a kernel launch or an FX node, written by a signed-in member and shown
with author and time to everyone on the run's project. A note's target is text:
`run`, `graph:G`, `launch:G:N` (with its kernel), `node:G:NAME`; the dashboard keeps it in the URL."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from compile_viz.store import StoreError
from compile_viz.store_index import RunIndex

MAX_NOTE_CHARS = 4000


@dataclass(frozen=True)
class Note:
    id: str
    project: str
    run_id: str
    target: str
    author: str
    created: str
    body: str
    edited: str | None = None  # when its author last changed it


def target_of(graph: str | None = None, launch: str | None = None, kernel: str | None = None,
              node: str | None = None) -> str:
    """The note target a Viewer selection names (the most specific one)."""
    if graph and node:
        return f"node:{graph}:{node}"
    if graph and (launch or kernel):
        return f"launch:{graph}:{launch or ''}:{kernel or ''}"
    return f"graph:{graph}" if graph else "run"


def _checked(body: str) -> str:
    body = body.strip()
    if not body:
        raise StoreError("a note needs some text")
    if len(body) > MAX_NOTE_CHARS:
        raise StoreError(f"a note holds {MAX_NOTE_CHARS} characters at most")
    return body


def _now() -> str:
    stamp = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp)) + f".{int(stamp % 1 * 1e6):06d}Z"


def add_note(index: RunIndex, *, project: str, run_id: str, target: str, author: str, body: str) -> Note:
    """Keep a note; StoreError (one line) when it is empty or too long."""
    note = Note(secrets.token_hex(6), project, run_id, target[:500], author, _now(), _checked(body))
    index.tx(lambda cur: cur.execute(
        "INSERT INTO notes (id, project, run_id, target, author, created, body) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (note.id, note.project, note.run_id, note.target, note.author, note.created, note.body)))
    return note


def notes_of(index: RunIndex, run_id: str, projects: tuple[str, ...] | list[str]) -> list[Note]:
    """A run's notes, oldest first, if the run's project is one of `projects`."""
    if not projects:
        return []
    marks = ", ".join("?" for _ in projects)
    rows = index.tx(lambda cur: cur.execute(
        f"SELECT id, project, run_id, target, author, created, body, edited FROM notes WHERE run_id = ? "
        f"AND project IN ({marks}) ORDER BY created, id", (run_id, *projects)).fetchall())
    return [Note(*r) for r in rows]


def edit_note(index: RunIndex, note_id: str, *, author: str, body: str) -> None:
    """Change a note's text; only its author may (StoreError, one line, otherwise or when it is gone)."""
    body = _checked(body)
    _change(index, note_id, author, "UPDATE notes SET body = ?, edited = ? WHERE id = ? AND author = ?",
            (body, _now(), note_id, author))


def delete_note(index: RunIndex, note_id: str, *, author: str) -> None:
    """Remove a note; only its author may (StoreError, one line, otherwise or when it is gone)."""
    _change(index, note_id, author, "DELETE FROM notes WHERE id = ? AND author = ?", (note_id, author))


def _change(index: RunIndex, note_id: str, author: str, sql: str, args: tuple) -> None:
    def work(cur):
        found = cur.execute("SELECT author FROM notes WHERE id = ?", (note_id,)).fetchone()
        if found is None:
            raise StoreError("that note is gone: someone deleted it; reload the page")
        if found[0] != author:
            raise StoreError(f"only its author ({found[0]}) can change or delete a note")
        cur.execute(sql, args)

    index.tx(work)
