"""Faults are tests too: the server killed mid-push, PostgreSQL restarted under a running server,
a full disk. In each, nothing half-written is listed and the push can be repeated."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import time
import zipfile

import pytest
from test_store import fake_run

from compile_viz.server.open import open_store
from compile_viz.server.projects import add_project
from compile_viz.server.tokens import create_token
from tests.services import require
from tests.team_server import start_server


def _team(postgres, root, name):
    db = postgres.new_db(name)
    store = open_store(str(root / "store"), db)
    add_project(store.index, "vision", ["ann@example.com"])
    return store, db, create_token(store.index, "vision", "bot")[1]


def _zip(size: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("meta.json", '{"model": "big", "status": "complete"}')
        zf.writestr("debug/blob.bin", os.urandom(size))
    return buf.getvalue()


def _listed(store) -> list[str]:
    return [r.id for r in store.list_runs()]


def test_a_server_killed_mid_push_lists_nothing_and_the_push_repeats(postgres, tmp_path):
    store, db, token = _team(postgres, tmp_path, "killed")
    srv = start_server(tmp_path / "store", db, extra=["--open"])
    body = _zip(4 << 20)
    with socket.create_connection(("127.0.0.1", int(srv.url.rsplit(":", 1)[1]))) as s:
        s.sendall(f"POST /api/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                  f"Content-Length: {len(body)}\r\n\r\n".encode() + body[: len(body) // 2])
        deadline = time.monotonic() + 10  # the half body is on the server's disk, as a dot-named part
        while not any(n.startswith(".tmp-push-") for n in os.listdir(store.runs_dir)):
            assert time.monotonic() < deadline, "the push never started"
            time.sleep(0.05)
        srv.stop(signal.SIGKILL)
    assert _listed(store) == []
    again = start_server(tmp_path / "store", db, extra=["--open"])  # sweeps what the killed push left
    try:
        assert not [n for n in os.listdir(store.runs_dir) if n.startswith(".")]
        status, answer = again.request("POST", "/api/runs", token=token, body=body)
        assert status == 201 and _listed(store) == [answer["id"]]
    finally:
        again.stop()
        store.index.close()


def test_postgres_restarted_under_the_server_serves_again_within_10_s(postgres, tmp_path):
    store, db, token = _team(postgres, tmp_path, "restart")
    srv = start_server(tmp_path / "store", db, extra=["--open"])
    try:
        assert srv.request("GET", "/api/runs", token=token)[0] == 200
        postgres.stop()
        status, body = srv.request("GET", "/api/runs", token=token)
        assert status == 503 and "database" in body["error"]
        postgres.start()
        back = time.monotonic()
        while srv.request("GET", "/api/runs", token=token)[0] != 200:
            assert time.monotonic() - back < 10, "the server did not serve again within 10 s"
            time.sleep(0.1)
        assert srv.proc.poll() is None  # the same process: no restart of its own
        print(f"served again {time.monotonic() - back:.2f} s after PostgreSQL came back")
    finally:
        srv.stop()
        store.index.close()


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs: the store's disk, filled by one push."""
    folder = tmp_path / "disk"
    folder.mkdir()
    can = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(folder)],
                                               capture_output=True).returncode == 0
    require(can, "cannot mount a small tmpfs here (needs root)")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_refuses_the_push_in_one_line_and_keeps_nothing(postgres, small_disk, tmp_path):
    db = postgres.new_db("fulldisk")
    store = open_store(str(small_disk / "store"), db)
    add_project(store.index, "vision")
    token = create_token(store.index, "vision", "bot")[1]
    srv = start_server(small_disk / "store", db, extra=["--open"])
    try:
        status, body = srv.request("POST", "/api/runs", token=token, body=_zip(2 << 20))  # part + unpacked > 3 MB
        assert status == 507 and body["error"].startswith("the server's disk is full") and "\n" not in body["error"]
        assert _listed(store) == [] and not [n for n in os.listdir(store.runs_dir) if n.startswith(".")]
        small = fake_run(open_store(str(tmp_path / "laptop")), "small")
        zipped = open_store(str(tmp_path / "laptop")).export_run(small.id, tmp_path / "small.zip")
        status, answer = srv.request("POST", "/api/runs", token=token, body=zipped.read_bytes())
        assert status == 201 and _listed(store) == [answer["id"]]  # the disk had room again
    finally:
        srv.stop()
        store.index.close()
