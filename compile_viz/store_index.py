"""The run store's index behind one interface: a table of each run folder's meta.json, in SQLite
(the embedded default, `home/index.sqlite`) or PostgreSQL (compile_viz/server/pg.py).

The SQL here is what both speak (`?` placeholders, rewritten for psycopg; ON CONFLICT; COALESCE).
Schema changes are named, recorded steps (`Migration`), applied once per database under a lock
and listed in `schema_migrations`; a step marked `reindex` has the store re-read every folder,
which stay the truth for runs. Other tables (the team server's projects, tokens and notes) are
migrated the same way under their own component name. Stdlib only.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Migration:
    """One schema change: its number (1, 2, ... per component), a name, its statements."""

    version: int
    name: str
    statements: tuple[str, ...]
    reindex: bool = False  # the rows must be re-read from the run folders afterwards


# The runs table. Never edit a step that has shipped: add one.
STORE_MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs", ("""CREATE TABLE runs (
        id TEXT PRIMARY KEY, model TEXT, status TEXT, created TEXT, device TEXT, mode TEXT, dtype TEXT,
        train INTEGER, reason TEXT, graph_breaks INTEGER, compile_s REAL)""",), reindex=True),
    Migration(2, "runs: kind and command (recorded jobs)",
              ("ALTER TABLE runs ADD COLUMN kind TEXT", "ALTER TABLE runs ADD COLUMN command TEXT"), reindex=True),
    Migration(3, "runs: project (team server)", ("ALTER TABLE runs ADD COLUMN project TEXT",
                                                  "CREATE INDEX runs_project ON runs (project, created)"),
              reindex=True),
)
SCHEMA_VERSION = STORE_MIGRATIONS[-1].version
COLUMNS = ("id", "model", "status", "created", "device", "mode", "dtype", "train", "reason", "graph_breaks",
           "compile_s", "kind", "command", "project")
# what list_runs(query) looks in: the Runs page's search and `compile-viz runs QUERY`
SEARCHED = ("id", "model", "status", "device", "mode", "dtype", "reason", "kind", "command")

_LEDGER = """CREATE TABLE IF NOT EXISTS schema_migrations (
    component TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied TEXT NOT NULL,
    PRIMARY KEY (component, version))"""


class IndexDbError(Exception):
    """The index's database cannot be reached or refused a statement; str() is one line."""


class RunIndex:
    """The index interface. A backend gives `_connect()` (a DB-API connection), its placeholder,
    the errors that mean "the connection is gone" and a lock for migrations; the rest is shared."""

    placeholder = "?"
    name = "index"
    lost_errors: tuple[type[BaseException], ...] = ()  # retried once on a fresh connection
    keep_connection = True  # one connection per thread, kept between transactions

    def __init__(self) -> None:
        self._local = threading.local()

    # -- a backend's part ------------------------------------------------------------------
    def _connect(self) -> Any:
        raise NotImplementedError

    def _lock(self, cur: Any) -> None:
        """Hold the migration lock until the transaction ends."""
        raise NotImplementedError

    def _legacy_version(self, cur: Any, component: str) -> int | None:
        """A version recorded before the ledger existed, or None."""
        return None

    def _reset_legacy(self, cur: Any, component: str) -> None:
        """Called for a component the ledger lacks, before its first step."""

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001  (closing a dead connection)
                pass

    # -- shared ----------------------------------------------------------------------------
    def sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("%", "%%").replace("?", self.placeholder)

    def tx(self, work: Callable[[Any], T]) -> T:
        """Run work(cursor) in one transaction, committed if it returns; one retry on a fresh
        connection when the old one was lost (a database restarted under a long-lived server)."""
        for attempt in (0, 1):
            conn = getattr(self._local, "conn", None)
            try:
                if conn is None:
                    conn = self._local.conn = self._connect()
                cur = conn.cursor()
                try:
                    out = work(_Cursor(cur, self))
                    conn.commit()
                    return out
                except BaseException:
                    conn.rollback()
                    raise
                finally:
                    cur.close()
                    if not self.keep_connection:
                        self.close()
            except self.lost_errors as e:
                self.close()
                if attempt:
                    raise IndexDbError(f"the {self.name} cannot be reached: {str(e).strip().splitlines()[0]}") from e
                time.sleep(0.2)
        raise AssertionError("unreachable")

    def migrate(self, component: str, steps: Sequence[Migration]) -> bool:
        """Apply the steps of `component` not applied yet, in order; return whether one asks
        for a reindex."""

        def work(cur) -> bool:
            self._lock(cur)
            cur.execute(_LEDGER)
            rows = cur.execute("SELECT version FROM schema_migrations WHERE component = ?", (component,)).fetchall()
            done = max((r[0] for r in rows), default=0)
            if not rows:
                legacy = self._legacy_version(cur, component)
                if legacy is None:
                    self._reset_legacy(cur, component)
                else:
                    done = legacy
                    for step in steps[:legacy]:
                        self._record(cur, component, step)
            if done > len(steps):
                raise IndexDbError(f"the {self.name} was migrated by a newer compile_viz ({component} "
                                  f"version {done}, this one knows {len(steps)}): upgrade compile_viz")
            reindex = False
            for step in steps[done:]:
                for statement in step.statements:
                    cur.execute(statement)
                self._record(cur, component, step)
                reindex |= step.reindex
            return reindex

        return self.tx(work)

    def applied(self, component: str) -> list[tuple[int, str]]:
        """(version, name) of each applied step of `component`, in order."""
        return self.tx(lambda cur: [tuple(r) for r in cur.execute(
            "SELECT version, name FROM schema_migrations WHERE component = ? ORDER BY version", (component,))])

    @staticmethod
    def _record(cur, component: str, step: Migration) -> None:
        cur.execute("INSERT INTO schema_migrations (component, version, name, applied) VALUES (?, ?, ?, ?)",
                    (component, step.version, step.name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))

    # -- the runs table --------------------------------------------------------------------
    def open(self) -> bool:
        """Bring the runs table to this release's schema; return whether every row must be re-read."""
        return self.migrate("store", STORE_MIGRATIONS)

    def ids(self) -> set[str]:
        return self.tx(lambda cur: {r[0] for r in cur.execute("SELECT id FROM runs")})

    def put(self, rows: Sequence[tuple]) -> None:
        """Insert or replace rows laid out as COLUMNS."""
        if not rows:
            return
        cols = ", ".join(COLUMNS)
        marks = ", ".join("?" for _ in COLUMNS)
        update = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:])
        sql = f"INSERT INTO runs ({cols}) VALUES ({marks}) ON CONFLICT (id) DO UPDATE SET {update}"

        def work(cur) -> None:
            for row in rows:
                cur.execute(sql, row)

        self.tx(work)

    def remove(self, ids: Sequence[str]) -> None:
        def work(cur) -> None:
            for run_id in ids:
                cur.execute("DELETE FROM runs WHERE id = ?", (run_id,))

        if ids:
            self.tx(work)

    def select(self, query: str | None = None, *, status: str | None = None, limit: int | None = None,
               projects: Sequence[str] | None = None, model: str | None = None,
               after: str | None = None) -> list[str]:
        """Ids of the matching runs, newest first. `projects` (when given) keeps runs of those
        projects only; an empty sequence keeps none. `after`: only the runs listed after that run
        (a page's last id: the next page, steady while runs are added; an unknown id gives none)."""
        sql, args = "SELECT id FROM runs WHERE 1=1", []
        if after is not None:
            sql += (" AND EXISTS (SELECT 1 FROM runs AS a WHERE a.id = ? AND (runs.created < a.created"
                    " OR (runs.created = a.created AND runs.id < a.id)))")
            args.append(after)
        if query:
            # `||` with a NULL is NULL: every column is wrapped, or a run without (say) a device
            # recorded in its meta could never be found.
            text = " || ' ' || ".join(f"COALESCE({c}, '')" for c in SEARCHED)
            sql += f" AND LOWER({text}) LIKE ?"
            args.append(f"%{query.lower()}%")
        if status:
            sql += " AND status = ?"
            args.append(status)
        if model:
            sql += " AND model = ?"
            args.append(model)
        if projects is not None:
            if not projects:
                return []
            sql += f" AND project IN ({', '.join('?' for _ in projects)})"
            args += list(projects)
        sql += " ORDER BY created DESC, id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self.tx(lambda cur: [r[0] for r in cur.execute(sql, args)])


class _Cursor:
    """A cursor whose execute() takes `?` placeholders on every backend and returns itself."""

    def __init__(self, cur: Any, index: RunIndex):
        self._cur, self._index = cur, index

    def execute(self, sql: str, args: Sequence[Any] = ()) -> _Cursor:
        self._cur.execute(self._index.sql(sql), tuple(args))
        return self

    def fetchone(self):
        return self._cur.fetchone()

    def fetchall(self):
        return self._cur.fetchall()

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    def __iter__(self):
        return iter(self._cur.fetchall())


class SqliteIndex(RunIndex):
    """The embedded index: `path` (home/index.sqlite), one connection per thread."""

    name = "SQLite index"
    keep_connection = False  # a fresh one per transaction, as cheap as a file open, and never stale

    def __init__(self, path: str | Path):
        super().__init__()
        self.path = Path(path)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        return _SqliteTx(conn)

    def _lock(self, cur) -> None:
        pass  # _SqliteTx begins every transaction IMMEDIATE: one writer at a time already

    def _legacy_version(self, cur, component: str) -> int | None:
        if component != "store":
            return None
        # Releases before the ledger kept the layout in PRAGMA user_version (2: kind and command);
        # that layout is step 2. Any other version is dropped (the folders are the truth).
        return 2 if cur.execute("PRAGMA user_version").fetchone()[0] == 2 else None

    def _reset_legacy(self, cur, component: str) -> None:
        if component == "store":
            cur.execute("DROP TABLE IF EXISTS runs")

    def migrate(self, component: str, steps: Sequence[Migration]) -> bool:
        if component == "store":
            self.tx(self._forget_if_rewritten)
        try:
            return super().migrate(component, steps)
        except IndexDbError:
            if component != "store":
                raise
        # an index from a newer release: a cache, so drop it and lay it out again from the folders
        self.tx(lambda cur: (cur.execute("DROP TABLE IF EXISTS runs"),
                             cur.execute("DELETE FROM schema_migrations WHERE component = 'store'")))
        return super().migrate(component, steps)

    @staticmethod
    def _forget_if_rewritten(cur) -> None:
        """An older release that opened this index laid the runs table out its own way and set
        user_version to its layout: the ledger no longer tells the truth about that table."""
        if not cur.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone():
            return
        done = cur.execute("SELECT MAX(version) FROM schema_migrations WHERE component = 'store'").fetchone()[0]
        if done and cur.execute("PRAGMA user_version").fetchone()[0] != done:
            cur.execute("DELETE FROM schema_migrations WHERE component = 'store'")

    def open(self) -> bool:
        reindex = super().open()
        self.tx(lambda cur: cur.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}"))
        return reindex


class _SqliteTx:
    """An autocommit sqlite3 connection that opens each transaction with BEGIN IMMEDIATE, so a
    check-then-write (a migration, a sync) holds the write lock from its first read."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.open = False

    def cursor(self):
        if not self.open:
            self.conn.execute("BEGIN IMMEDIATE")
            self.open = True
        return self.conn.cursor()

    def commit(self) -> None:
        if self.open:
            self.open = False
            self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.open:
            self.open = False
            self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.conn.close()
