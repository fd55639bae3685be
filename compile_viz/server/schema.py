"""The team server's tables, as migrations of the component "server" (store_index.Migration):
projects and their members, tokens (a hash and a prefix, never the token), notes."""

from __future__ import annotations

from compile_viz.store_index import Migration

SERVER_MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "projects, members, tokens", (
        "CREATE TABLE projects (name TEXT PRIMARY KEY, created TEXT NOT NULL)",
        "CREATE TABLE members (project TEXT NOT NULL REFERENCES projects (name), email TEXT NOT NULL, "
        "PRIMARY KEY (project, email))",
        "CREATE TABLE tokens (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, project TEXT NOT NULL "
        "REFERENCES projects (name), user_name TEXT NOT NULL, created TEXT NOT NULL, revoked TEXT)",
    )),
    Migration(2, "notes", (
        "CREATE TABLE notes (id TEXT PRIMARY KEY, project TEXT NOT NULL, run_id TEXT NOT NULL, "
        "target TEXT NOT NULL, author TEXT NOT NULL, created TEXT NOT NULL, body TEXT NOT NULL)",
        "CREATE INDEX notes_run ON notes (run_id, created)",
    )),
    Migration(3, "notes edited by their author", (
        "ALTER TABLE notes ADD COLUMN edited TEXT",
    )),
)
