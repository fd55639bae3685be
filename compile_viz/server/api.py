"""The HTTP API under /api, each path behind a bearer token (server/tokens.py):

  GET  /api/runs       the token's project's runs, newest first: id, model, kind, status, created,
                       verdict. A page of `limit` runs (PAGE_RUNS unless given, MAX_PAGE_RUNS at
                       most); `after=ID` starts after that run, and a full page says where the
                       next starts in a `Link: <...>; rel="next"` header. `q` (search), `status`
                       and `model` narrow the list.
  GET  /api/runs/ID    one run's meta.json (404 when it is another project's, or none)
  POST /api/runs       push a run zip (the body); 201 with {"id", "url"}

No token or a bad one: 401. A run id with '..' or '/': 400. Tokens are read from the
Authorization header only, never from the URL, and never logged.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from compile_viz.measurements.records import MeasureSummary
from compile_viz.server.receive import (
    MAX_PUSH_BYTES,
    PushRefused,
    accept_zip,
    disk_full,
    part_path,
    safe_run_id,
)
from compile_viz.server.tokens import Grant, check_token
from compile_viz.store import Run, RunStore, read_meta

PAGE_RUNS = 100  # a page of GET /api/runs when no limit is asked for
MAX_PAGE_RUNS = 1000


@dataclass
class ApiConfig:
    store: RunStore
    public_url: str  # how people reach the dashboard: the run URLs pushes print
    max_push_bytes: int = MAX_PUSH_BYTES


def run_url(public_url: str, run_id: str) -> str:
    from urllib.parse import quote

    return f"{public_url.rstrip('/')}/?run={quote(run_id, safe='')}"


def summary(run: Run) -> dict:
    m = MeasureSummary.from_json(run.meta.get("measure"))
    return {"id": run.id, "model": run.model, "kind": run.kind, "status": run.status,
            "created": run.meta.get("created"), "verdict": m.correctness if m else None}


def _error(status: int, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="compile_viz"'} if status == 401 else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _grant(cfg: ApiConfig, request: Request) -> Grant | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return check_token(cfg.store.index, token.strip()) if scheme.lower() == "bearer" else None


def routes(cfg: ApiConfig) -> list[Route]:
    def authorized(handler):
        async def wrapped(request: Request):
            try:
                grant = await run_in_threadpool(_grant, cfg, request)
            except Exception:  # noqa: BLE001  (the database is away: say so, in one line)
                return _error(503, "the server's database cannot be reached; try again shortly")
            if grant is None:
                return _error(401, "a valid token is needed: Authorization: Bearer <token>")
            return await handler(request, grant)

        return wrapped

    async def list_runs(request: Request, grant: Grant):
        q = request.query_params
        try:
            limit = int(q.get("limit") or PAGE_RUNS)
        except ValueError:
            limit = 0
        if not 1 <= limit <= MAX_PAGE_RUNS:
            return _error(400, f"limit is a whole number from 1 to {MAX_PAGE_RUNS}")
        after = q.get("after") or None
        if after is not None and not safe_run_id(after):
            return _error(400, "bad run id in after")
        if after is not None and await run_in_threadpool(_own_run, after, grant) is None:
            return _error(404, f"no run {after!r} in project {grant.project} to list after")
        narrow = {k: q[k] for k in ("q", "status", "model") if q.get(k)}
        runs = await run_in_threadpool(cfg.store.list_runs, narrow.get("q"), status=narrow.get("status"),
                                       model=narrow.get("model"), projects=[grant.project], limit=limit, after=after)
        headers = {}
        if len(runs) == limit:  # maybe more: where the next page starts
            headers["Link"] = f'</api/runs?{urlencode({**narrow, "limit": limit, "after": runs[-1].id})}>; rel="next"'
        return JSONResponse([summary(r) for r in runs], headers=headers)

    def _own_run(run_id: str, grant: Grant) -> Run | None:
        # exactly this id under the store's runs (no path, no prefix match) and in this project
        folder = cfg.store.runs_dir / run_id
        try:
            meta = read_meta(folder)
        except (OSError, ValueError):
            return None
        return Run(run_id, folder, meta) if meta.get("project") == grant.project else None

    async def one_run(request: Request, grant: Grant):
        run_id = request.path_params["run_id"]
        if not safe_run_id(run_id):
            return _error(400, "bad run id")
        run = await run_in_threadpool(_own_run, run_id, grant)
        if run is None:
            return _error(404, f"no run {run_id!r} in project {grant.project}")
        return JSONResponse(run.meta)

    async def push(request: Request, grant: Grant):
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > cfg.max_push_bytes):
            return _error(413, f"the push is over the server's {cfg.max_push_bytes}-byte cap")
        part = part_path(cfg.store)
        try:
            await _receive(request, part, cfg.max_push_bytes)
            run = await run_in_threadpool(accept_zip, cfg.store, part, grant, max_bytes=cfg.max_push_bytes)
        except PushRefused as e:
            return _error(e.status, str(e))
        finally:
            part.unlink(missing_ok=True)
        return JSONResponse({"id": run.id, "url": run_url(cfg.public_url, run.id)}, status_code=201)

    return [
        Route("/api/runs", authorized(list_runs), methods=["GET"]),
        Route("/api/runs", authorized(push), methods=["POST"]),
        Route("/api/runs/{run_id:path}", authorized(one_run), methods=["GET"]),
    ]


async def _receive(request: Request, part, cap: int) -> None:
    written = 0
    try:
        with open(part, "wb") as out:
            async for chunk in request.stream():
                written += len(chunk)
                if written > cap:
                    raise PushRefused(413, f"the push is over the server's {cap}-byte cap")
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise disk_full(e) from None
        raise
