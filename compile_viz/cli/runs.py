"""`compile-viz runs [QUERY]`: the stored runs, newest first, one line each."""

from __future__ import annotations

import sys

from compile_viz.cli.errors import fail
from compile_viz.store import RunStore, StoreError


def register(sub) -> None:
    p = sub.add_parser("runs", help="list stored runs, newest first")
    p.add_argument("query", nargs="?", help="text to search in id, model, device, mode, dtype, reason")
    p.add_argument("--status", choices=("complete", "failed"))
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        runs = RunStore(args.home).list_runs(args.query, status=args.status, limit=args.limit)
    except (OSError, StoreError) as e:
        return fail(str(e))
    for stored in runs:
        m = stored.meta
        r = m.get("resolved") or m.get("options") or {}
        compile_s = (m.get("timings") or {}).get("compile_s")
        when = str(m.get("created", ""))[:19].replace("T", " ")
        cols = [stored.id, stored.status, when, str(r.get("device", "?")), str(r.get("dtype") or "-"),
                f"{compile_s:.1f}s" if compile_s is not None else "-", stored.reason or ""]
        print("  ".join(cols).rstrip())
    if not runs:
        print("no runs", file=sys.stderr)
    return 0
