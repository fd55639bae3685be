"""The team server's dashboard (compile-viz serve): the store it reads and the sign-in gate.

Local mode (`streamlit run app.py`, `make app`) is untouched: store() is the plain RunStore and
gate() returns at once. On a team server (COMPILE_VIZ_TEAM=1) nothing of a run shows before an
OpenID Connect sign-in (st.login); then the person's projects (the server's database, by e-mail)
scope every listing, and a run key in the URL outside them stops the page."""

from __future__ import annotations

import os

import streamlit as st

from compile_viz.store import RunStore, StoreError

TEAM_ENV, DB_ENV = "COMPILE_VIZ_TEAM", "COMPILE_VIZ_DB"
RUN_PARAMS = ("run", "compare")  # query parameters that name a run


def team_mode() -> bool:
    return os.environ.get(TEAM_ENV) == "1"


def make_store() -> RunStore:
    """The dashboard's store: local, a served one over the server's database, or a scoped one."""
    db = os.environ.get(DB_ENV)
    if not team_mode() and not db:
        return RunStore()
    from compile_viz.server.open import open_index
    from compile_viz.server.scoped import ScopedStore

    if team_mode():
        return ScopedStore(None, index=open_index(db))
    return RunStore(None, index=open_index(db))


def gate(store: RunStore) -> None:
    """On a team server: sign-in first, the person's projects set on the store, run keys checked;
    st.stop() where nothing may be shown."""
    if not team_mode():
        return
    store.set_projects(None)
    if not st.user.is_logged_in:
        st.title("compile_viz")
        st.write("This is a team server: sign in to see your projects' runs.")
        st.button("Sign in", type="primary", on_click=st.login)
        st.stop()
    from compile_viz.server.projects import projects_of

    email = str(st.user.get("email") or "")
    projects = projects_of(store.index, email) if email and st.user.get("email_verified", True) else []
    store.set_projects(projects)
    with st.sidebar:
        st.caption(f"Signed in as {email or 'someone with no e-mail'} · "
                   f"{', '.join(projects) if projects else 'no projects'}")
        st.button("Sign out", on_click=st.logout)
    for param in RUN_PARAMS:
        key = st.query_params.get(param)
        if key and not visible(store, key):
            st.error(f"No run {key!r} in your projects.")
            st.stop()


def visible(store, key: str) -> bool:
    """Whether the signed-in person may open this run key (a bundled sample, or a run of theirs)."""
    if key.startswith("bundled:"):
        return True
    if key.startswith("path:"):
        return False
    try:
        store.get(key)
    except StoreError:
        return False
    return True


# Not on a team server: Compile would run models on the server; Fleet reads sweep records, which
# belong to no project yet.
HIDDEN_PAGES = ("compile", "fleet")


def team_pages(pages: list) -> list:
    """The pages a team server shows (all but HIDDEN_PAGES)."""
    if not team_mode():
        return pages
    return [p for p in pages if getattr(p, "url_path", "") not in HIDDEN_PAGES]
