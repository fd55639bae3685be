"""The store's index in PostgreSQL (`--db postgresql://...`): store_index.RunIndex over psycopg.

One connection per thread, kept; a connection lost to a database restart is replaced on the next
transaction (RunIndex.tx retries once), so a long-lived server serves again without a restart.
"""

from __future__ import annotations

from typing import Any

from compile_viz.store_index import RunIndex

_LOCK_KEY = 0x636F6D70  # pg_advisory_xact_lock key of compile_viz's migrations ("comp")


class PostgresIndex(RunIndex):
    placeholder = "%s"
    name = "PostgreSQL index"

    def __init__(self, url: str, *, connect_timeout: float = 5):
        super().__init__()
        import psycopg  # lazy: `compile-viz --help` and local mode never load it

        self.url = url
        self.connect_timeout = connect_timeout
        self._psycopg = psycopg
        self.lost_errors = (psycopg.OperationalError, psycopg.InterfaceError)

    def _connect(self) -> Any:
        return self._psycopg.connect(self.url, connect_timeout=max(1, int(self.connect_timeout)),
                                     application_name="compile_viz")

    def _lock(self, cur) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK_KEY,))

    def __repr__(self) -> str:
        return f"PostgresIndex({redact(self.url)})"


def redact(url: str) -> str:
    """The URL with its password replaced by ***: what logs and errors may show."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
