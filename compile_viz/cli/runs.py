"""`compile-viz runs [QUERY]`: the stored runs, newest first, one line each."""

from __future__ import annotations

import sys

from compile_viz.cli.errors import fail
from compile_viz.measurements.records import MeasureSummary
from compile_viz.store import RunStore, StoreError, job_command


def register(sub) -> None:
    p = sub.add_parser("runs", help="list stored runs, newest first")
    p.add_argument("query", nargs="?", help="text to search in id, model, status, device, mode, dtype, reason, kind "
                                            "(capture, job, import) and a recorded job's command line")
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
        r = stored.settings
        compile_s = (m.get("timings") or {}).get("compile_s")
        when = str(m.get("created", ""))[:19].replace("T", " ")
        cols = [stored.id, stored.status, wrong_words(m), when, stored.kind, str(r.get("device", "?")),
                str(r.get("dtype") or "-"), f"{compile_s:.1f}s" if compile_s is not None else "-", job_words(m),
                stored.reason or ""]
        print("  ".join(c for c in cols if c).rstrip())
    if not runs:
        print("no runs", file=sys.stderr)
    return 0


def wrong_words(meta: dict) -> str:
    """`✗ wrong, first differs at graph capture (Dynamo)` for a run whose compiled results are wrong; "" otherwise."""
    summary = MeasureSummary.from_json(meta.get("measure"))
    return summary.wrong_badge if summary else ""


def job_words(meta: dict) -> str:
    """A recorded job in a few words: `$ torchrun ... train.py (2 ranks, exit 0, 52.8 s)`; "" otherwise."""
    job = meta.get("job")
    if not job:
        return ""
    ranks = [r for r in job.get("ranks") or [] if r is not None]
    facts = [f"{len(ranks)} ranks" if len(ranks) > 1 else "", f"exit {job.get('exit_code')}",
             f"{job.get('wall_s', 0):.1f} s"]
    return f"$ {job_command(meta)} ({', '.join(f for f in facts if f)})"
