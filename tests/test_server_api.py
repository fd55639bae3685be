"""The team server's HTTP API and `compile-viz push`, over HTTP against a real `compile-viz serve`
on PostgreSQL: tokens (401), projects (404, no cross-project push), bad ids (400), the same
refusals and caps as `import`, nothing half-written listed, tokens never in logs."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from conftest import compile_viz_cli
from test_store import fake_run

from compile_viz.server.api import MAX_PAGE_RUNS
from compile_viz.server.open import open_store
from compile_viz.server.projects import add_project
from compile_viz.server.tokens import create_token, revoke_token
from compile_viz.store import RunStore
from tests.team_server import start_server


@pytest.fixture(scope="module")
def server(postgres, tmp_path_factory):
    root = tmp_path_factory.mktemp("team")
    db = postgres.new_db("api")
    index = open_store(str(root / "store"), db).index
    add_project(index, "vision", ["ann@example.com"])
    add_project(index, "audio", ["bob@example.com"])
    tokens = {p: create_token(index, p, f"{p}-bot")[1] for p in ("vision", "audio")}
    srv = start_server(root / "store", db, extra=["--open", "--max-push-mb", "1"])
    srv.tokens = tokens
    srv.index = index
    srv.local = RunStore(root / "laptop")  # where runs are made before a push
    yield srv
    srv.stop()
    index.close()


def _push(server, token: str, model: str = "mlp_gelu"):
    run = fake_run(server.local, model)
    return run, compile_viz_cli("push", run.id, "--to", server.url, "--token", token, "--home", str(server.local.home))


def test_push_lands_whole_and_prints_its_url_last(server):
    run, done = _push(server, server.tokens["vision"])
    assert done.returncode == 0, done.stderr
    url = done.stdout.splitlines()[-1]
    assert url == f"{server.url}/?run={run.id}"
    status, listed = server.request("GET", "/api/runs", token=server.tokens["vision"])
    assert status == 200 and run.id in [r["id"] for r in listed]
    row = next(r for r in listed if r["id"] == run.id)
    assert set(row) == {"id", "model", "kind", "status", "created", "verdict"} and row["model"] == "mlp_gelu"
    status, meta = server.request("GET", f"/api/runs/{run.id}", token=server.tokens["vision"])
    assert status == 200 and meta["project"] == "vision" and meta["pushed_by"] == "vision-bot"
    again = compile_viz_cli("push", run.id, "--to", server.url, "--token", server.tokens["vision"],
                            "--home", str(server.local.home))  # a repeated push is a new run, never a clash
    assert again.returncode == 0 and again.stdout.splitlines()[-1] != url


def test_a_token_of_one_project_reads_only_its_own(server):
    run, done = _push(server, server.tokens["audio"], "audio_model")
    assert done.returncode == 0, done.stderr
    status, listed = server.request("GET", "/api/runs", token=server.tokens["vision"])
    assert status == 200 and run.id not in [r["id"] for r in listed]
    assert server.request("GET", f"/api/runs/{run.id}", token=server.tokens["vision"])[0] == 404
    assert server.request("GET", f"/api/runs/{run.id}", token=server.tokens["audio"])[0] == 200
    assert server.request("GET", f"/api/runs/{run.id[:8]}", token=server.tokens["audio"])[0] == 404  # no prefixes


def test_a_pushed_zip_naming_another_project_lands_in_the_tokens_own(server):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("meta.json", json.dumps({"model": "sneaky", "status": "complete", "project": "audio"}))
    status, answer = server.request("POST", "/api/runs", token=server.tokens["vision"], body=buf.getvalue())
    assert status == 201
    status, meta = server.request("GET", f"/api/runs/{answer['id']}", token=server.tokens["vision"])
    assert status == 200 and meta["project"] == "vision"
    assert server.request("GET", f"/api/runs/{answer['id']}", token=server.tokens["audio"])[0] == 404


@pytest.mark.parametrize("method,path", [("GET", "/api/runs"), ("GET", "/api/runs/x"), ("POST", "/api/runs")])
@pytest.mark.parametrize("token", [None, "", "cvz_000000000000_" + "a" * 43, "not-a-token"])
def test_every_api_path_needs_a_valid_token(server, method, path, token):
    status, body = server.request(method, path, token=token, body=b"x" if method == "POST" else None)
    assert status == 401 and "error" in body


def test_a_revoked_token_is_refused(server):
    token_id, token = create_token(server.index, "vision", "leaver")
    assert server.request("GET", "/api/runs", token=token)[0] == 200
    revoke_token(server.index, token_id)
    assert server.request("GET", "/api/runs", token=token)[0] == 401


@pytest.mark.parametrize("bad", ["..", "../../etc/passwd", "a/..", "%2e%2e", "a%2Fb", ".hidden", "a\\b"])
def test_run_ids_with_dots_or_slashes_are_refused(server, bad):
    status, _ = server.request("GET", f"/api/runs/{bad}", token=server.tokens["vision"])
    assert status in (400, 404)


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize("entries,status,words", [
    ({"meta.json": b"{}", "../evil.txt": b"x"}, 400, "'..' in path"),
    ({"nothing.txt": b"x"}, 400, "no meta.json"),
    ({"meta.json": b"{}", "big.bin": b"\0" * (3 << 20)}, 413, "cap"),  # unpacks past the 1 MB cap of this server
])
def test_a_refused_push_leaves_nothing(server, entries, status, words):
    before = sorted(p.name for p in (server.store / "runs").iterdir())
    got, body = server.request("POST", "/api/runs", token=server.tokens["vision"], body=_zip(entries))
    assert got == status and words in body["error"] and "\n" not in body["error"]
    assert sorted(p.name for p in (server.store / "runs").iterdir()) == before


def test_a_push_over_the_cap_is_refused_before_it_is_read(server):
    status, body = server.request("POST", "/api/runs", token=server.tokens["vision"], body=b"\0" * (2 << 20))
    assert status == 413 and "cap" in body["error"]


def test_push_errors_are_one_line(server, tmp_path):
    run = fake_run(server.local)
    bad = compile_viz_cli("push", run.id, "--to", server.url, "--token", "cvz_000000000000_" + "b" * 43,
                          "--home", str(server.local.home))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "(401)" in bad.stderr
    none = compile_viz_cli("push", run.id, "--to", server.url, "--home", str(server.local.home))
    assert none.returncode == 2 and "COMPILE_VIZ_TOKEN" in none.stderr


def test_tokens_never_reach_the_log(server):
    text = server.log.read_text(errors="replace")
    assert "/api/runs" in text  # the access log is there
    assert not any(token in text for token in server.tokens.values())


def test_record_push_sends_the_job_and_prints_its_url_last(server, tmp_path):
    """A job that compiled nothing is a failed run (exit 1), pushed all the same: it is what needs eyes."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, COMPILE_VIZ_TOKEN=server.tokens["vision"], COMPILE_VIZ_WARM="0")
    done = subprocess.run([sys.executable, "-m", "compile_viz", "record", "--home", str(tmp_path), "--push", server.url,
                           "--", sys.executable, "-c", "print('hello')"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "compiled nothing" in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith(f"{server.url}/?run=") and "hello" in lines
    run_id = lines[-1].split("=", 1)[1]
    status, meta = server.request("GET", f"/api/runs/{run_id}", token=server.tokens["vision"])
    assert status == 200 and meta["kind"] == "job" and meta["status"] == "failed"


def _next(server) -> str | None:
    link = server.last_headers.get("link")
    return link[1:link.index(">")] if link else None


def test_the_runs_list_comes_in_pages_that_follow_one_another(server):
    token = server.tokens["vision"]
    for model in ("page_a", "page_b", "page_c"):
        assert _push(server, token, model)[1].returncode == 0
    status, everything = server.request("GET", f"/api/runs?limit={MAX_PAGE_RUNS}", token=token)
    assert status == 200 and len(everything) >= 3 and _next(server) is None
    ids, path = [], "/api/runs?limit=2"
    while path:  # each page from where the last one ended, as its Link header says
        status, page = server.request("GET", path, token=token)
        assert status == 200 and len(page) <= 2
        ids += [r["id"] for r in page]
        path = _next(server)
    assert ids == [r["id"] for r in everything]  # newest first, each once
    status, found = server.request("GET", "/api/runs?model=page_b", token=token)
    assert status == 200 and [r["model"] for r in found] == ["page_b"]
    assert server.request("GET", "/api/runs?limit=0", token=token)[0] == 400
    assert server.request("GET", f"/api/runs?limit={MAX_PAGE_RUNS + 1}", token=token)[0] == 400
    assert server.request("GET", "/api/runs?after=..%2Fx", token=token)[0] == 400
    audio = _push(server, server.tokens["audio"], "audio_page")[0]
    status, said = server.request("GET", f"/api/runs?after={audio.id}", token=token)  # another project's run
    assert status == 404 and "vision" in said["error"]
