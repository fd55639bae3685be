"""Push and API tokens: `cvz_<id>_<secret>`, shown once; the database keeps the id and the
secret's SHA-256, so a leaked database yields no usable token."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from compile_viz.server.projects import check_name, now, project_exists
from compile_viz.store import StoreError
from compile_viz.store_index import RunIndex

PREFIX = "cvz_"
_TOKEN = re.compile(r"cvz_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})")


@dataclass(frozen=True)
class Grant:
    """What a valid token allows: one project, on behalf of one user."""

    token_id: str
    project: str
    user: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(index: RunIndex, project: str, user: str) -> tuple[str, str]:
    """Return (token id, token) for a new token of `user` on `project`; only the hash is stored."""
    check_name(project)
    if not project_exists(index, project):
        raise StoreError(f"no project {project!r}: `compile-viz project add {project}` first")
    if not user or len(user) > 200:
        raise StoreError("--user must name who the token is for")
    token_id = secrets.token_hex(6)
    token = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
    index.tx(lambda cur: cur.execute(
        "INSERT INTO tokens (id, hash, project, user_name, created) VALUES (?, ?, ?, ?, ?)",
        (token_id, _digest(token), project, user, now())))
    return token_id, token


def revoke_token(index: RunIndex, token_or_id: str) -> str:
    """Revoke a token given whole or by its id; return the id. StoreError when unknown."""
    m = _TOKEN.fullmatch(token_or_id)
    token_id = m.group(1) if m else token_or_id

    def work(cur) -> int:
        return cur.execute("UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL",
                           (now(), token_id)).rowcount

    if not index.tx(work):
        raise StoreError(f"no live token {token_id!r} (ids are shown by `compile-viz token create`)")
    return token_id


def check_token(index: RunIndex, token: str | None) -> Grant | None:
    """The grant of a live token, else None (unknown, revoked, malformed)."""
    m = _TOKEN.fullmatch(token or "")
    if not m:
        return None
    row = index.tx(lambda cur: cur.execute(
        "SELECT hash, project, user_name FROM tokens WHERE id = ? AND revoked IS NULL", (m.group(1),)).fetchone())
    if not row or not hmac.compare_digest(row[0], _digest(token)):
        return None
    return Grant(m.group(1), row[1], row[2])
