"""Open the store a team command names: `--store DIR` for the run folders, `--db URL` for the
index (PostgreSQL when `postgresql://...`, else SQLite in the store), the server's tables migrated."""

from __future__ import annotations

from compile_viz.server.schema import SERVER_MIGRATIONS
from compile_viz.store import RunStore, StoreError
from compile_viz.store_index import IndexDbError, RunIndex


def open_index(db: str | None) -> RunIndex | None:
    """The index a `--db` names; None for the store's own SQLite."""
    if not db:
        return None
    if db.startswith(("postgresql://", "postgres://")):
        from compile_viz.server.pg import PostgresIndex

        return PostgresIndex(db)
    raise StoreError(f"--db {db.split(':', 1)[0]}:... is not supported: give postgresql://USER@HOST:PORT/DB "
                     "or leave --db out for the store's SQLite index")


def open_store(store: str | None, db: str | None = None) -> RunStore:
    """The RunStore over `store` with the index `db` names, the server's tables migrated;
    StoreError (one line) when the database cannot be reached."""
    try:
        run_store = RunStore(store, index=open_index(db))
        run_store.index.migrate("server", SERVER_MIGRATIONS)
    except IndexDbError as e:
        raise StoreError(str(e)) from None
    return run_store
