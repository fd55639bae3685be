"""`compile-viz project add` and `token create/revoke` as a user runs them, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from conftest import compile_viz_cli

from compile_viz.server.open import open_store
from compile_viz.server.tokens import check_token


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_project_add_then_token_create_and_revoke(tmp_path, backend, request):
    db = ["--db", request.getfixturevalue("postgres").new_db()] if backend == "postgresql" else []
    where = ["--store", str(tmp_path), *db]
    done = compile_viz_cli("project", "add", "vision", "--member", "ann@example.com", *where)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "project vision: 1 member(s): ann@example.com"
    made = compile_viz_cli("token", "create", "--project", "vision", "--user", "ci-bot", *where)
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[-1]  # printed once, on the last line
    assert token.startswith("cvz_") and token not in made.stderr
    index = open_store(str(tmp_path), db[1] if db else None).index
    grant = check_token(index, token)
    assert grant and grant.project == "vision" and grant.user == "ci-bot"
    revoked = compile_viz_cli("token", "revoke", grant.token_id, *where)
    assert revoked.returncode == 0 and check_token(index, token) is None
    again = compile_viz_cli("token", "revoke", grant.token_id, *where)
    assert again.returncode == 2 and again.stderr.startswith("compile-viz: no live token")
    index.close()


def test_token_for_a_missing_project_and_a_bad_db_are_one_line(tmp_path):
    done = compile_viz_cli("token", "create", "--project", "nope", "--user", "u", "--store", str(tmp_path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "project add nope" in done.stderr
    bad = compile_viz_cli("project", "add", "p", "--store", str(tmp_path), "--db", "mysql://x")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_serve_needs_sign_in_or_open_and_says_so_in_one_line(tmp_path):
    done = compile_viz_cli("serve", "--store", str(tmp_path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--auth FILE" in done.stderr
    (tmp_path / "auth.toml").write_text("[auth]\nclient_id = 'x'\n")
    bad = compile_viz_cli("serve", "--store", str(tmp_path), "--auth", str(tmp_path / "auth.toml"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "server_metadata_url" in bad.stderr


def test_serve_on_the_stores_own_sqlite_index_takes_a_push(tmp_path):
    from test_store import fake_run

    from compile_viz.server.projects import add_project
    from compile_viz.server.tokens import create_token
    from compile_viz.store import RunStore
    from tests.team_server import start_server

    index = open_store(str(tmp_path / "store")).index
    add_project(index, "vision")
    token = create_token(index, "vision", "bot")[1]
    srv = start_server(tmp_path / "store", None, extra=["--open"])
    try:
        laptop = RunStore(tmp_path / "laptop")
        run = fake_run(laptop)
        pushed = compile_viz_cli("push", run.id, "--to", srv.url, "--home", str(laptop.home), "--token", token)
        assert pushed.returncode == 0, pushed.stderr
        status, listed = srv.request("GET", "/api/runs", token=token)
        assert status == 200 and [r["model"] for r in listed] == [run.model]
    finally:
        srv.stop()
