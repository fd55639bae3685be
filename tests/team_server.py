"""A real `compile-viz serve` for tests: started as a user starts it, on a free loopback port over a
store folder and a PostgreSQL database, health-checked in a bounded loop, stopped by its PID."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tests.services import free_port, stop, wait_for

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class TeamServer:
    proc: subprocess.Popen
    url: str
    store: Path
    db: str | None
    log: Path

    def request(self, method: str, path: str, *, token: str | None = None, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, object]:
        """(status, JSON or text) of one raw HTTP request (the path sent as given, `..` included)."""
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
            self.last_headers = {k.lower(): v for k, v in resp.getheaders()}
        finally:
            conn.close()
        try:
            return resp.status, json.loads(data)
        except ValueError:
            return resp.status, data.decode(errors="replace")

    def stop(self, sig=None) -> None:
        import signal

        stop(self.proc, sig or signal.SIGTERM)


def start_server(store: Path, db: str | None, *, extra: list[str] = (), env: dict | None = None,
                 port: int | None = None) -> TeamServer:
    port = port or free_port()
    log = store.parent / f"serve-{port}.log"
    args = [sys.executable, "-m", "compile_viz", "serve", "--store", str(store), "--port", str(port), *extra]
    if db:
        args += ["--db", db]
    out = open(log, "a")
    proc = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=out,
                            env={**os.environ, "COMPILE_VIZ_WARM": "0", **(env or {})})
    server = TeamServer(proc, f"http://127.0.0.1:{port}", store, db, log)

    def healthy():
        return server.request("GET", "/_stcore/health")[0] == 200

    try:
        wait_for(healthy, seconds=60, what="compile-viz serve", proc=proc, log=log)
    except BaseException:
        stop(proc)
        raise
    return server
