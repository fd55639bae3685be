"""Real services for the team server's tests, each started in a temporary folder on a free
loopback port, health-checked in a bounded loop and stopped by its own PID.

PostgreSQL: Debian's binaries (/usr/lib/postgresql/*/bin); as root it runs as the `postgres` user.
Missing outside CI, a test skips with the reason; under COMPILE_VIZ_CI=1 it fails.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest


def require(ok: bool, why: str) -> None:
    if ok:
        return
    if os.environ.get("COMPILE_VIZ_CI"):
        pytest.fail(f"{why}, and COMPILE_VIZ_CI is set: CI must run this test (.ci/run installs it)")
    pytest.skip(why)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, *, seconds: float, what: str, proc: subprocess.Popen | None = None, log: Path | None = None):
    """Call check() until it returns a true value, at most `seconds`; raise with the log's tail."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        try:
            out = check()
            if out:
                return out
        except Exception:  # noqa: BLE001  (not up yet)
            pass
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} did not come up in {seconds} s (exit {proc.poll() if proc else '?'}):\n{tail}")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, *, seconds: float = 10) -> None:
    """Stop one process by its PID: `sig`, then SIGKILL after `seconds`."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(5)


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


@dataclass
class Postgres:
    """A PostgreSQL server of its own: `url` for psycopg and --db."""

    folder: Path
    port: int
    bin: Path
    user: str | None  # run as this user (root cannot run postgres)
    proc: subprocess.Popen | None = None
    dbs: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"postgresql://cv@127.0.0.1:{self.port}"

    def url(self, db: str = "postgres") -> str:
        return f"{self.base}/{db}"

    def _popen(self, args: list[str], **kw) -> subprocess.Popen:
        return subprocess.Popen(args, user=self.user, **kw)

    def init(self) -> None:
        data = self.folder / "data"
        log = self.folder / "initdb.log"
        with open(log, "w") as out:
            code = self._popen([str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "cv", "-E", "UTF8",
                                "--no-sync"], stdout=out, stderr=out).wait(120)
        if code:
            raise RuntimeError(f"initdb failed ({code}): {log.read_text()[-2000:]}")

    def start(self) -> None:
        log = self.folder / "postgres.log"
        out = open(log, "a")
        self.proc = self._popen([str(self.bin / "postgres"), "-D", str(self.folder / "data"), "-p", str(self.port),
                                 "-h", "127.0.0.1", "-k", str(self.folder), "-c", "fsync=off",
                                 "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                                 "-c", "max_connections=200"], stdout=out, stderr=out)
        import psycopg

        def ready():
            with psycopg.connect(self.url(), connect_timeout=2):
                return True

        wait_for(ready, seconds=30, what="PostgreSQL", proc=self.proc, log=log)

    def stop(self, sig: int = signal.SIGINT) -> None:  # SIGINT: PostgreSQL's "fast" shutdown
        if self.proc:
            stop(self.proc, sig)

    def new_db(self, name: str | None = None) -> str:
        """A fresh database; return its URL."""
        import psycopg

        name = name or f"t{len(self.dbs)}_{os.getpid()}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        self.dbs.append(name)
        return self.url(name)


def start_postgres() -> Postgres:
    """A started PostgreSQL in a new temporary folder (skip or fail where the binaries are absent)."""
    binary = pg_bin()
    require(binary is not None, "PostgreSQL is not installed (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require(False, "psycopg is not installed (pip install -c constraints.txt -r requirements.txt)")
    user = None
    folder = Path(tempfile.mkdtemp(prefix="cv-pg-"))
    if os.geteuid() == 0:
        user = "postgres"
        pw = pwd.getpwnam(user)
        os.chown(folder, pw.pw_uid, pw.pw_gid)
    pg = Postgres(folder, free_port(), binary, user)
    pg.init()
    pg.start()
    return pg


def remove(pg: Postgres) -> None:
    pg.stop()
    shutil.rmtree(pg.folder, ignore_errors=True)


OIDC_DIR = Path(__file__).resolve().parent / "oidc"


@dataclass
class OidcProvider:
    """panva/oidc-provider (tests/oidc/server.js) with one client; any login is accepted as the e-mail."""

    proc: subprocess.Popen
    issuer: str
    client_id: str
    client_secret: str
    log: Path

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def auth_toml(self, redirect_uri: str) -> str:
        """The [auth] table `compile-viz serve --auth` reads (st.login's settings)."""
        import secrets

        return (f'[auth]\nredirect_uri = "{redirect_uri}"\ncookie_secret = "{secrets.token_hex(16)}"\n'
                f'client_id = "{self.client_id}"\nclient_secret = "{self.client_secret}"\n'
                f'server_metadata_url = "{self.metadata_url}"\n'
                # st.login asks for prompt=select_account, which this provider does not offer
                'client_kwargs = { prompt = "login" }\n')


def start_oidc(redirect_uris: list[str], folder: Path) -> OidcProvider:
    """Start the provider on a free loopback port (skip or fail where Node or `npm ci` is missing)."""
    import secrets
    import urllib.request

    node = shutil.which("node")
    require(node is not None, "Node.js is not installed (apt-get install nodejs npm)")
    require((OIDC_DIR / "node_modules" / "oidc-provider").is_dir(),
            f"the OIDC provider is not installed: (cd {OIDC_DIR} && npm ci)")
    port = free_port()
    log = folder / "oidc.log"
    client_secret = secrets.token_urlsafe(24)
    env = dict(os.environ, PORT=str(port), CLIENT_ID="compile-viz", CLIENT_SECRET=client_secret,
               REDIRECT_URIS=",".join(redirect_uris), NODE_ENV="development")
    out = open(log, "w")
    proc = subprocess.Popen([node, str(OIDC_DIR / "server.js")], cwd=OIDC_DIR, env=env, stdout=out, stderr=out)
    op = OidcProvider(proc, f"http://127.0.0.1:{port}", "compile-viz", client_secret, log)

    def ready():
        with urllib.request.urlopen(op.metadata_url, timeout=2) as r:
            return r.status == 200

    try:
        wait_for(ready, seconds=30, what="the OIDC provider", proc=proc, log=log)
    except BaseException:
        stop(proc)
        raise
    return op
