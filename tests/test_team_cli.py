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
