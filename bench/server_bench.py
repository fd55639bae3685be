"""Load and faults of the team server on this machine, with real PostgreSQL, a real `compile-viz serve`
and real Chromium.

    .venv/bin/python bench/server_bench.py [--seconds 60] [--viewers 20] [--pushers 4]

Load: V viewer threads loop over the dashboard's page shell (GET /), the runs list (GET /api/runs)
and one run's meta (GET /api/runs/ID); P pusher threads push fresh run zips (about 200 KB each) as
`compile-viz push` does; one Chromium opens the Runs page again and again and times it until its
table shows (the whole page: HTTP, websocket, script run, render). At the end every push must be
listed exactly once. Faults: PostgreSQL stopped and started under the server (time until the API
answers 200 again). The kill-mid-push and full-disk faults are asserted by tests/test_server_faults.py.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import threading
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from compile_viz.server.client import push_zip  # noqa: E402
from compile_viz.server.open import open_store  # noqa: E402
from compile_viz.server.projects import add_project  # noqa: E402
from compile_viz.server.tokens import create_token  # noqa: E402
from tests.services import remove, start_postgres  # noqa: E402
from tests.team_server import start_server  # noqa: E402


def run_zip(i: int) -> bytes:
    buf = io.BytesIO()
    rng = random.Random(i)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.json", f'{{"model": "bench_{i % 7}", "status": "complete", '
                                 f'"created": "2026-11-26T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}"}}')
        for k in range(20):  # code-like text: compresses as output_code.py does
            zf.writestr(f"debug/graph_{k}/output_code.py",
                        "".join(f"    tmp{j} = tl.load(in_ptr{rng.randint(0, 9)} + x{j}, xmask)\n" for j in range(400)))
    return buf.getvalue()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--viewers", type=int, default=20)
    ap.add_argument("--pushers", type=int, default=4)
    args = ap.parse_args()
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="cv-bench-"))
    pg = start_postgres()
    try:
        db = pg.new_db("bench")
        store = open_store(str(root / "store"), db)
        add_project(store.index, "bench", ["ann@example.com"])
        token = create_token(store.index, "bench", "bench-bot")[1]
        srv = start_server(root / "store", db, extra=["--open"])
        try:
            return measure(args, srv, store, token, pg)
        finally:
            srv.stop()
    finally:
        remove(pg)


def measure(args, srv, store, token, pg) -> int:
    seed = [push_zip_bytes(srv, token, run_zip(i)) for i in range(30)]
    ids = list(seed)
    times: dict[str, list[float]] = {"GET /": [], "GET /api/runs": [], "GET /api/runs/ID": [], "push": [],
                                     "Runs page (Chromium)": []}
    errors: list[str] = []
    pushed: list[str] = []
    stop_at = time.monotonic() + args.seconds
    lock = threading.Lock()

    def viewer(n: int) -> None:
        rng = random.Random(n)
        while time.monotonic() < stop_at:
            for name, path in (("GET /", "/"), ("GET /api/runs", "/api/runs"),
                               ("GET /api/runs/ID", f"/api/runs/{rng.choice(ids)}")):
                t = time.perf_counter()
                status, _ = srv.request("GET", path, token=None if path == "/" else token)
                dt = time.perf_counter() - t
                with lock:
                    (times[name] if status == 200 else errors).append(dt if status == 200 else f"{path}: {status}")

    def pusher(n: int) -> None:
        i = 1000 * (n + 1)
        while time.monotonic() < stop_at:
            body = run_zip(i)
            i += 1
            t = time.perf_counter()
            try:
                url = push_zip_bytes(srv, token, body)
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(f"push: {e}")
                continue
            with lock:
                times["push"].append(time.perf_counter() - t)
                pushed.append(url)
                ids.append(url)

    def browser() -> None:
        from playwright.sync_api import sync_playwright
        from test_browser import ARGS, CHROMIUM

        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = b.new_page(viewport={"width": 1400, "height": 900})
            while time.monotonic() < stop_at:
                t = time.perf_counter()
                page.goto(srv.url + "/runs")
                page.locator("[data-testid=stDataFrame]").first.wait_for(timeout=60_000)
                with lock:
                    times["Runs page (Chromium)"].append(time.perf_counter() - t)
            b.close()

    threads = ([threading.Thread(target=viewer, args=(n,)) for n in range(args.viewers)]
               + [threading.Thread(target=pusher, args=(n,)) for n in range(args.pushers)]
               + [threading.Thread(target=browser)])
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    listed = [r.id for r in store.list_runs()]
    once = all(listed.count(i) == 1 for i in pushed) and len(set(pushed)) == len(pushed)
    print(f"## load: {args.viewers} viewers + {args.pushers} pushers + 1 Chromium, {wall:.0f} s, "
          f"{os.cpu_count()} cores")
    print("| request | n | p50 ms | p95 ms | max ms |\n| --- | --- | --- | --- | --- |")
    for name, xs in times.items():
        print(f"| {name} | {len(xs)} | {pct(xs, .5) * 1e3:.0f} | {pct(xs, .95) * 1e3:.0f} | "
              f"{max(xs, default=float('nan')) * 1e3:.0f} |")
    print(f"pushes: {len(pushed)} landed ({len(pushed) / wall:.1f}/s), each listed exactly once: {once}; "
          f"runs listed {len(listed)} = seed {len(seed)} + pushed {len(pushed)}: {len(listed) == len(seed) + len(pushed)}; "
          f"errors: {len(errors)} {errors[:3]}")
    # fault: PostgreSQL restarted under the running server
    pg.stop()
    down = srv.request("GET", "/api/runs", token=token)[0]
    pg.start()
    back = time.monotonic()
    while srv.request("GET", "/api/runs", token=token)[0] != 200:
        time.sleep(0.05)
    print(f"PostgreSQL restarted: {down} while it was down; 200 again {time.monotonic() - back:.2f} s after it "
          f"was back, same server process: {srv.proc.poll() is None}")
    return 0 if once and not errors else 1


def push_zip_bytes(srv, token: str, body: bytes) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".zip") as f:
        f.write(body)
        f.flush()
        url = push_zip(Path(f.name), srv.url, token)
    return url.rsplit("=", 1)[1]


if __name__ == "__main__":
    sys.exit(main())
