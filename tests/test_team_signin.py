"""Sign-in to the team server's dashboard in real Chromium through a real OpenID Connect provider
(panva/oidc-provider on the loopback), with projects from a real PostgreSQL: a signed-in person
sees exactly their projects' runs; before sign-in nothing of a run shows. Screenshots in
test-artifacts/."""

from __future__ import annotations

import re
import signal

import pytest
from test_browser import OUT, chromium_page
from test_store import fake_run

from compile_viz.server.open import open_store
from compile_viz.server.projects import add_project
from tests.services import free_port, start_oidc, stop
from tests.team_server import start_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def signed_server(postgres, tmp_path_factory):
    root = tmp_path_factory.mktemp("signin")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    op = start_oidc([f"{base}/oauth2callback"], root)
    db = postgres.new_db("signin")
    store = open_store(str(root / "store"), db)
    add_project(store.index, "vision", ["ann@example.com"])
    add_project(store.index, "audio", ["bob@example.com"])
    runs = {}
    for project, model in (("vision", "vision_model"), ("audio", "audio_model")):
        run_id, tmp = store.begin(model)
        runs[project] = store.commit(run_id, tmp, {"model": model, "status": "complete", "created": "2026-11-01",
                                                   "project": project})
    run_id, tmp = store.begin("vision_model")
    runs["vision_old"] = store.commit(run_id, tmp, {"model": "vision_model", "status": "complete",
                                                    "created": "2026-10-01", "project": "vision"})
    runs["none"] = fake_run(store, "projectless_model")  # imported by hand: in no project
    (root / "auth.toml").write_text(op.auth_toml(f"{base}/oauth2callback"))
    try:
        srv = start_server(root / "store", db, extra=["--auth", str(root / "auth.toml")], port=port)
    except BaseException:
        stop(op.proc)
        raise
    srv.runs = runs
    yield srv
    srv.stop()
    stop(op.proc, signal.SIGTERM)
    store.index.close()


def _text(page) -> str:
    """What the page holds, hidden parts too (the runs table's grid keeps its cells in hidden <td>s)."""
    return page.content()


def _sign_in(page, base: str, email: str) -> None:
    page.goto(base + "/")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("input[name=login]", timeout=30_000)  # the provider's own login form
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", "anything")
    page.click("button[type=submit]")
    page.wait_for_selector("button[type=submit]", timeout=30_000)  # its consent form
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(re.escape(base)), timeout=30_000)
    try:
        page.get_by_text(f"Signed in as {email}").wait_for(timeout=60_000)
    except Exception:
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / "team_signin_failed.png"))
        raise


def test_nothing_of_a_run_shows_before_sign_in(signed_server):
    with chromium_page(900) as page:
        for path in ("/", "/runs", f"/?run={signed_server.runs['vision'].id}", "/compare"):
            page.goto(signed_server.url + path)
            page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
            text = _text(page)
            assert not any(r.id in text or r.model in text for r in signed_server.runs.values()), path
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / "team_signin_gate.png"))


@pytest.mark.parametrize("email,mine,theirs", [("ann@example.com", "vision", "audio"),
                                               ("bob@example.com", "audio", "vision")])
def test_a_signed_in_person_sees_exactly_their_projects_runs(signed_server, email, mine, theirs):
    runs = signed_server.runs
    with chromium_page(1000) as page:
        _sign_in(page, signed_server.url, email)
        page.goto(signed_server.url + "/runs")
        page.get_by_text(runs[mine].id).first.wait_for(state="attached", timeout=60_000)
        text = _text(page)
        nav = page.locator("[data-testid=stSidebarNav]").inner_text()
        assert "Runs" in nav and "Compile\n" not in nav + "\n" and "Fleet" not in nav
        assert runs[theirs].id not in text and runs["none"].id not in text
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / f"team_runs_{mine}.png"))
        page.goto(signed_server.url + f"/?run={runs[theirs].id}")
        page.get_by_text(f"No run {runs[theirs].id!r} in your projects.").wait_for(timeout=60_000)
        page.goto(signed_server.url + f"/?run=path:{signed_server.store}")
        page.get_by_text("in your projects.").wait_for(timeout=60_000)


def test_a_note_is_kept_with_author_and_time_and_stays_inert(signed_server):
    run = signed_server.runs["vision"]
    hostile = "<script>window.__pwned = 1</script> [click me](javascript:window.__pwned=2) <img src=x onerror=window.__pwned=3>"
    with chromium_page(1000) as page:
        _sign_in(page, signed_server.url, "ann@example.com")
        page.goto(signed_server.url + f"/viewer?run={run.id}&graph=g0&node=add_1")
        page.get_by_text("Note on node:g0:add_1").wait_for(timeout=60_000)
        box = page.locator("section[data-testid=stSidebar] textarea").first
        box.fill(hostile)
        page.get_by_role("button", name="Add note").click()
        page.get_by_text("ann@example.com · ").first.wait_for(timeout=60_000)
        page.get_by_text("<script>window.__pwned = 1</script>", exact=False).first.wait_for(timeout=30_000)
        page.wait_for_timeout(500)
        assert page.evaluate("window.__pwned") is None
        assert not page.locator("a[href^='javascript:']").count()
        link = page.get_by_role("link", name="open").first.get_attribute("href")
        assert link.startswith(f"/viewer?run={run.id}&graph=g0&node=add_1&note=")
        compare = page.get_by_role("link", name="Compare with the previous run").get_attribute("href")
        assert compare == f"/compare?run={run.id}&compare={signed_server.runs['vision_old'].id}"
        page.goto(signed_server.url + link)  # the link reopens the selection with the note marked
        page.get_by_text("· linked").wait_for(timeout=60_000)
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / "team_note.png"))
        # its author edits it, then deletes it (another member sees no such button: the server checks too)
        page.get_by_role("button", name="Edit or delete").first.click()
        text = page.get_by_label("Text")
        text.wait_for(timeout=30_000)
        text.fill("fast after the fix")
        page.get_by_role("button", name="Save").click()
        page.get_by_text(" · edited ").first.wait_for(timeout=60_000)
        page.get_by_text("fast after the fix").first.wait_for(timeout=30_000)
        delete = page.get_by_role("button", name="Delete this note")
        if not delete.is_visible():  # Streamlit keeps a popover open across the rerun a save makes
            page.get_by_role("button", name="Edit or delete").first.click()
        delete.click()
        page.get_by_test_id("stText").get_by_text("fast after the fix").wait_for(state="detached", timeout=60_000)
        assert not page.get_by_text(" · edited ").count()


@pytest.mark.parametrize("path", ["/", "/viewer", "/runs", "/compare", "/compiles", "/compile", "/fleet",
                                  "/api/runs", "/_stcore/health", "/media/x", "/oauth2callback"])
def test_no_path_serves_anything_of_a_run_over_http_without_sign_in(signed_server, path):
    for run in signed_server.runs.values():
        for query in ("", f"?run={run.id}", f"?run={run.id}&compare={run.id}"):
            status, body = signed_server.request("GET", path + query)
            text = body if isinstance(body, str) else str(body)
            assert run.id not in text and run.model not in text, (path, query, status)
    assert signed_server.request("GET", f"/api/runs/{signed_server.runs['vision'].id}")[0] == 401


def test_the_sign_in_callback_leaves_no_code_in_the_log(signed_server):
    text = signed_server.log.read_text(errors="replace")
    assert "/oauth2callback?" in text  # the sign-ins of the tests above came back through it
    assert re.search(r"[?&]code=(?!\*\*\*)", text) is None and re.search(r"[?&]state=(?!\*\*\*)", text) is None
