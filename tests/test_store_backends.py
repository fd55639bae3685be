"""The store's index behind one interface: the same tests on SQLite (the embedded default) and a
real PostgreSQL (started by the session's `postgres` fixture); migrations recorded and applied once."""

from __future__ import annotations

import sqlite3

import pytest
from test_store import fake_run

from compile_viz.server.open import open_store
from compile_viz.server.projects import add_project, projects_of
from compile_viz.server.schema import SERVER_MIGRATIONS
from compile_viz.server.tokens import check_token, create_token, revoke_token
from compile_viz.store import RunStore, StoreError
from compile_viz.store_index import STORE_MIGRATIONS


@pytest.fixture(params=["sqlite", "postgresql"])
def team_store(request, tmp_path):
    """A store with the server's tables, its index in SQLite or in a fresh PostgreSQL database."""
    db = request.getfixturevalue("postgres").new_db() if request.param == "postgresql" else None
    store = open_store(str(tmp_path / "store"), db)
    yield store
    store.index.close()


def test_list_search_delete_on_both_backends(team_store):
    a = fake_run(team_store, "mlp_gelu", created="2026-01-01")
    b = fake_run(team_store, "pointwise_chain", status="failed", created="2026-02-01")
    assert [r.id for r in team_store.list_runs()] == [b.id, a.id]
    assert [r.id for r in team_store.list_runs("MLP")] == [a.id]  # case-insensitive on both
    assert [r.id for r in team_store.list_runs(status="failed")] == [b.id]
    assert [r.id for r in team_store.list_runs(model="mlp_gelu")] == [a.id]
    assert [r.id for r in team_store.list_runs(limit=1)] == [b.id]
    team_store.delete(a.id)
    assert [r.id for r in team_store.list_runs()] == [b.id]


def test_index_follows_folders_and_projects_filter(team_store):
    run_id, tmp = team_store.begin("m")
    mine = team_store.commit(run_id, tmp, {"model": "m", "status": "complete", "created": "2026-03-01",
                                           "project": "vision"})
    other = fake_run(team_store, "m", created="2026-03-02")
    assert [r.id for r in team_store.list_runs(projects=["vision"])] == [mine.id]
    assert team_store.list_runs(projects=[]) == []
    assert {r.id for r in team_store.list_runs(projects=None)} == {mine.id, other.id}
    team_store.index.remove([mine.id])  # a row lost: the folder is the truth
    assert [r.id for r in team_store.list_runs(projects=["vision"])] == [mine.id]


def test_migrations_are_recorded_and_applied_once(team_store):
    index = team_store.index
    assert index.applied("store") == [(m.version, m.name) for m in STORE_MIGRATIONS]
    assert index.applied("server") == [(m.version, m.name) for m in SERVER_MIGRATIONS]
    assert index.migrate("store", STORE_MIGRATIONS) is False  # nothing left to do
    assert index.migrate("server", SERVER_MIGRATIONS) is False


def test_projects_and_tokens(team_store):
    index = team_store.index
    assert add_project(index, "vision", ["Ann@example.com", "bob@example.com"]) == ["ann@example.com",
                                                                                   "bob@example.com"]
    add_project(index, "audio", ["ann@example.com"])
    assert projects_of(index, "ANN@example.com") == ["audio", "vision"]
    assert projects_of(index, "eve@example.com") == []
    token_id, token = create_token(index, "vision", "ci-bot")
    grant = check_token(index, token)
    assert grant and (grant.project, grant.user, grant.token_id) == ("vision", "ci-bot", token_id)
    assert check_token(index, token[:-1] + ("A" if token[-1] != "A" else "B")) is None  # a wrong secret
    assert check_token(index, "") is None and check_token(index, "Bearer x") is None
    assert revoke_token(index, token_id) == token_id
    assert check_token(index, token) is None
    with pytest.raises(StoreError, match="no live token"):
        revoke_token(index, token_id)
    with pytest.raises(StoreError, match="no project"):
        create_token(index, "nope", "u")


def test_only_the_hash_of_a_token_is_kept(tmp_path):
    store = open_store(str(tmp_path))
    add_project(store.index, "p")
    _, token = create_token(store.index, "p", "u")
    assert token.encode() not in store.index_path.read_bytes()


def test_a_legacy_sqlite_index_is_migrated_not_dropped(tmp_path):
    store = RunStore(tmp_path)
    run = fake_run(store)
    with sqlite3.connect(store.index_path) as db:  # as the release before migrations left it
        db.execute("DROP TABLE schema_migrations")
        db.execute("DROP TABLE runs")
        db.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, model TEXT, status TEXT, created TEXT, device TEXT, "
                   "mode TEXT, dtype TEXT, train INTEGER, reason TEXT, graph_breaks INTEGER, compile_s REAL, "
                   "kind TEXT, command TEXT)")
        db.execute("INSERT INTO runs (id, model) VALUES (?, 'kept')", (run.id,))
        db.execute("PRAGMA user_version = 2")
    db.close()
    again = RunStore(tmp_path)
    assert again.index.applied("store")[-1] == (3, STORE_MIGRATIONS[-1].name)
    assert [r.id for r in again.list_runs(run.model)] == [run.id]  # re-read from the folder (step 3 reindexes)


def test_notes_are_kept_per_run_and_shown_to_the_runs_project_only(team_store):
    from compile_viz.server.notes import add_note, notes_of, target_of

    index = team_store.index
    target = target_of("model__0_forward_1.0", "3", "triton_poi_fused_add_0")
    first = add_note(index, project="vision", run_id="r1", target=target, author="ann@example.com", body=" slow? ")
    add_note(index, project="vision", run_id="r1", target="run", author="bob@example.com", body="second")
    add_note(index, project="vision", run_id="r2", target="run", author="ann@example.com", body="other run")
    notes = notes_of(index, "r1", ["vision"])
    assert [(n.author, n.body, n.target) for n in notes] == [
        ("ann@example.com", "slow?", "launch:model__0_forward_1.0:3:triton_poi_fused_add_0"),
        ("bob@example.com", "second", "run")]
    assert notes[0].id == first.id and notes[0].created
    assert notes_of(index, "r1", ["audio"]) == [] and notes_of(index, "r1", []) == []
    with pytest.raises(StoreError, match="some text"):
        add_note(index, project="vision", run_id="r1", target="run", author="a", body="  ")


def test_a_note_is_edited_or_deleted_by_its_author_alone(team_store):
    from compile_viz.server.notes import add_note, delete_note, edit_note, notes_of

    index = team_store.index
    note = add_note(index, project="vision", run_id="r9", target="run", author="ann@example.com", body="slow?")
    with pytest.raises(StoreError, match=r"only its author \(ann@example.com\)"):
        edit_note(index, note.id, author="bob@example.com", body="mine now")
    with pytest.raises(StoreError, match="only its author"):
        delete_note(index, note.id, author="bob@example.com")
    with pytest.raises(StoreError, match="some text"):
        edit_note(index, note.id, author="ann@example.com", body=" ")
    assert [(n.body, n.edited) for n in notes_of(index, "r9", ["vision"])] == [("slow?", None)]
    edit_note(index, note.id, author="ann@example.com", body=" fast after the fix ")
    (edited,) = notes_of(index, "r9", ["vision"])
    assert edited.body == "fast after the fix" and edited.edited and edited.created == note.created
    delete_note(index, note.id, author="ann@example.com")
    assert notes_of(index, "r9", ["vision"]) == []
    with pytest.raises(StoreError, match="that note is gone"):
        edit_note(index, note.id, author="ann@example.com", body="again")
