"""The pushing side (a GPU box: stdlib only, no psycopg, no streamlit): a stored run zipped and
streamed to a team server's POST /api/runs with a bearer token; the server's answer in one line."""

from __future__ import annotations

import http.client
import json
import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from compile_viz.store import RunStore, StoreError

TOKEN_ENV = "COMPILE_VIZ_TOKEN"


class PushError(Exception):
    """A push that did not land; str() is one line for the user."""


def push_run(store: RunStore, run_ref: str, url: str, token: str | None, *, timeout: float = 600) -> str:
    """Push a stored run to the server at `url`; return the run's URL there. PushError if refused."""
    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        raise PushError(f"a token is needed: --token T or ${TOKEN_ENV} (`compile-viz token create` on the server)")
    try:
        run = store.get(run_ref)
    except StoreError as e:
        raise PushError(str(e)) from None
    with tempfile.TemporaryDirectory(prefix="compile-viz-push-") as tmp:
        zip_path = store.export_run(run.path, Path(tmp) / f"{run.id}.zip")
        return push_zip(zip_path, url, token, timeout=timeout)


def push_zip(zip_path: Path, url: str, token: str, *, timeout: float = 600) -> str:
    """Stream one run zip to the server; return the run's URL there."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PushError(f"--to needs the server's http(s):// address, not {url!r}")
    conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_type(parts.hostname, parts.port, timeout=timeout)
    path = parts.path.rstrip("/") + "/api/runs"
    size = os.path.getsize(zip_path)
    try:
        with open(zip_path, "rb") as body:
            conn.request("POST", path, body=body, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/zip", "Content-Length": str(size)})
            resp = conn.getresponse()
            data = resp.read()
    except OSError as e:
        raise PushError(f"cannot reach {parts.scheme}://{parts.netloc}: {e}; the push can be repeated") from None
    finally:
        conn.close()
    try:
        answer = json.loads(data or b"{}")
    except ValueError:
        answer = {}
    if resp.status != 201:
        why = answer.get("error") if isinstance(answer, dict) else None
        raise PushError(f"the server refused the push ({resp.status}): {why or resp.reason}")
    return str(answer["url"])
