"""The team server's sidebar beside a run: its notes (with author, time and a link that reopens the
selection they are about) and this model's earlier runs, one click from a comparison."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from compile_viz.store import StoreError

SELECTION = ("run", "graph", "kernel", "launch", "node")
_MD = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()<>#+-.!|:~$"})


def md(text: str) -> str:
    """Text from a note, a URL or a run shown literally where Streamlit renders Markdown."""
    return str(text).translate(_MD)


def note_link(target: str, run_id: str, note_id: str) -> str:
    """The Viewer's URL that opens the note's run and selection, with the note shown."""
    params = {"run": run_id}
    kind, _, rest = target.partition(":")
    if kind == "graph":
        params["graph"] = rest
    elif kind == "node":
        params["graph"], _, params["node"] = rest.partition(":")
    elif kind == "launch":
        graph, launch, kernel = (rest.split(":", 2) + ["", ""])[:3]
        params.update(graph=graph, launch=launch, kernel=kernel)
    params["note"] = note_id
    return "/viewer?" + urlencode({k: v for k, v in params.items() if v})


def sidebar(store) -> None:
    """Notes and history of the run in ?run=, on a team server (nothing elsewhere)."""
    key = st.query_params.get("run")
    if not key or key.startswith(("bundled:", "path:")):
        return
    try:
        run = store.get(key)
    except StoreError:
        return
    from compile_viz.server.notes import add_note, notes_of, target_of

    me = str(st.user.get("email") or "?")
    project = run.meta.get("project")
    q = st.query_params
    here = target_of(q.get("graph"), q.get("launch"), q.get("kernel"), q.get("node"))
    with st.sidebar:
        st.subheader("Notes")
        shown = q.get("note")
        for note in notes_of(store.index, run.id, store.projects()):
            box = st.container(border=True)
            mark = " · linked" if note.id == shown else ""
            edited = f" · edited {note.edited}" if note.edited else ""
            box.caption(md(f"{note.author} · {note.created}{edited} · {note.target}{mark}"))
            box.text(note.body)  # plain text: nothing a note holds is rendered as markup or a link
            box.markdown(f"[open]({note_link(note.target, run.id, note.id)})")
            if note.author == me:
                _own_note(box, store, note, me)
        with st.form("add_note", clear_on_submit=True):
            body = st.text_area(md(f"Note on {here}"), max_chars=4000)
            if st.form_submit_button("Add note") and body.strip():
                try:
                    add_note(store.index, project=project, run_id=run.id, target=here,
                             author=str(st.user.get("email") or "?"), body=body)
                except StoreError as e:
                    st.error(str(e))
                st.rerun()
        history(store, run)


def _own_note(box, store, note, me: str) -> None:
    """Edit or delete, for the note's author alone (the server checks the author again)."""
    from compile_viz.server.notes import delete_note, edit_note

    with box.popover("Edit or delete"):
        with st.form(f"edit_note:{note.id}"):
            body = st.text_area("Text", value=note.body, max_chars=4000, key=f"note_body:{note.id}")
            saved = st.form_submit_button("Save")
        dropped = st.button("Delete this note", key=f"drop_note:{note.id}")
        if saved or dropped:
            try:
                if dropped:
                    delete_note(store.index, note.id, author=me)
                else:
                    edit_note(store.index, note.id, author=me, body=body)
            except StoreError as e:
                st.error(str(e))
                return
            st.rerun()


def history(store, run) -> None:
    """This model's earlier runs in the person's projects, each a link, with a compare link."""
    earlier = [r for r in store.list_runs(model=run.model, limit=6) if r.id != run.id]
    if not earlier:
        return
    st.subheader(md(f"Earlier runs of {run.model}"))
    st.markdown(f"[Compare with the previous run](/compare?{urlencode({'run': run.id, 'compare': earlier[0].id})})")
    for r in earlier[:5]:
        st.markdown(f"- [{md(r.id)}](/viewer?{urlencode({'run': r.id})}) · {md(r.status)}")
