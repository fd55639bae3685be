"""`compile-viz serve`: the dashboard and the HTTP API in one process and on one port.

Streamlit's own ASGI app (st.App, Starlette inside) runs the dashboard's script and carries the
API's routes beside its own (/api/...), under one uvicorn: one port, one process, no proxy. The
script learns the store, the database and that it is a team server from the environment
(COMPILE_VIZ_HOME, COMPILE_VIZ_DB, COMPILE_VIZ_TEAM=1); sign-in settings go to st.login as
secrets (auth.*), read from the file --auth names.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from compile_viz.server.receive import MAX_PUSH_BYTES
from compile_viz.store import StoreError

log = logging.getLogger("compile_viz.server")
# app.py with the sign-in gate; run by path (st.App), never imported here (ui sits above server)
DASHBOARD = Path(__file__).resolve().parents[1] / "ui" / "team_app.py"


@dataclass
class ServeOptions:
    store: str | None
    db: str | None
    host: str = "127.0.0.1"
    port: int = 8501
    public_url: str | None = None  # how people reach it (behind a proxy); default http://HOST:PORT
    auth_file: str | None = None  # TOML with an [auth] table for st.login (docs/team.md)
    open_access: bool = False  # no sign-in: every run of the store to anyone who reaches the port
    max_push_bytes: int = MAX_PUSH_BYTES

    @property
    def url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")


def read_auth(path: str | None) -> dict:
    """The [auth] table of the TOML file, as st.login reads it from secrets."""
    if not path:
        return {}
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise StoreError(f"cannot read --auth {path}: {e}") from None
    auth = data.get("auth")
    if not isinstance(auth, dict) or not auth.get("client_id") or not auth.get("server_metadata_url"):
        raise StoreError(f"--auth {path} needs an [auth] table with redirect_uri, cookie_secret, client_id, "
                         "client_secret and server_metadata_url (docs/team.md)")
    return auth


def build_app(opts: ServeOptions):
    """The ASGI app: the dashboard (st.App over app.py) with the API's routes."""
    import streamlit as st

    from compile_viz.server.api import ApiConfig, routes
    from compile_viz.server.open import open_store
    from compile_viz.server.receive import sweep_parts

    auth = read_auth(opts.auth_file)
    if not auth and not opts.open_access:
        raise StoreError("a team server needs sign-in: --auth FILE (an [auth] table for OpenID Connect, "
                         "docs/team.md), or --open to serve every run to anyone who reaches the port")
    if not DASHBOARD.is_file():
        raise StoreError(f"the dashboard's script is missing ({DASHBOARD}): reinstall compile_viz")
    store = open_store(opts.store, opts.db)
    swept = sweep_parts(store)
    if swept:
        log.warning("removed %d unfinished push(es) from an earlier run", swept)
    os.environ.update(COMPILE_VIZ_HOME=str(store.home), COMPILE_VIZ_TEAM="0" if opts.open_access else "1",
                      COMPILE_VIZ_ALLOW_SERVER_PATHS="0")  # no `path:` keys: the server's files are not runs
    if opts.db:
        os.environ["COMPILE_VIZ_DB"] = opts.db
    for key, value in {"server.headless": "true", "browser.gatherUsageStats": "false",
                       "server.fileWatcherType": "none", "global.developmentMode": "false",
                       "client.toolbarMode": "viewer"}.items():
        os.environ.setdefault("STREAMLIT_" + key.upper().replace(".", "_"), value)
    api = ApiConfig(store=store, public_url=opts.url, max_push_bytes=opts.max_push_bytes)
    return st.App(str(DASHBOARD), routes=routes(api), secrets={"auth": auth} if auth else None)


class RedactSecrets(logging.Filter):
    """Access-log lines with the values of secret query parameters (the sign-in callback's code and
    state) replaced by ***: what a request carried must not outlive it in a log file."""

    _SECRET = re.compile(r"(?<=[?&])(code|state|token|access_token|id_token)=[^&\s\"]*")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self._SECRET.sub(r"\1=***", a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = self._SECRET.sub(r"\1=***", record.msg)
        return True


def serve(opts: ServeOptions) -> None:
    """Run the server until interrupted."""
    import uvicorn

    app = build_app(opts)
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(RedactSecrets())
    log.warning("compile_viz team server on %s (store %s)", opts.url, opts.store or "default")
    uvicorn.run(app, host=opts.host, port=opts.port, log_level="warning", access_log=False)
