"""Projects and their members: who may see which runs."""

from __future__ import annotations

import re
import time

from compile_viz.store import StoreError
from compile_viz.store_index import RunIndex

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name or ""):
        raise StoreError(f"bad project name {name!r}: letters, digits, '.', '_' or '-', 64 at most")
    return name


def add_project(index: RunIndex, name: str, members: list[str] = ()) -> list[str]:
    """Create the project if new and add the members (e-mail addresses); return all its members."""
    check_name(name)
    bad = [m for m in members if not _EMAIL.fullmatch(m)]
    if bad:
        raise StoreError(f"not an e-mail address: {bad[0]!r}")

    def work(cur) -> list[str]:
        if not cur.execute("SELECT 1 FROM projects WHERE name = ?", (name,)).fetchone():
            cur.execute("INSERT INTO projects (name, created) VALUES (?, ?)", (name, now()))
        for email in members:
            cur.execute("INSERT INTO members (project, email) VALUES (?, ?) ON CONFLICT DO NOTHING",
                        (name, email.lower()))
        return [r[0] for r in cur.execute("SELECT email FROM members WHERE project = ? ORDER BY email", (name,))]

    return index.tx(work)


def project_exists(index: RunIndex, name: str) -> bool:
    return bool(index.tx(lambda cur: cur.execute("SELECT 1 FROM projects WHERE name = ?", (name,)).fetchone()))


def projects_of(index: RunIndex, email: str) -> list[str]:
    """The projects whose members include `email` (case-insensitive), sorted."""
    return index.tx(lambda cur: [r[0] for r in cur.execute(
        "SELECT project FROM members WHERE email = ? ORDER BY project", ((email or "").lower(),))])
