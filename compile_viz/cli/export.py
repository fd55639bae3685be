"""`compile-viz export RUN OUT.zip`: a stored run written to one zip."""

from __future__ import annotations

from compile_viz.cli.errors import fail
from compile_viz.store import RunStore, StoreError


def register(sub) -> None:
    p = sub.add_parser("export", help="write a run to one zip")
    p.add_argument("run", help="run id (or a unique part of it) or run folder")
    p.add_argument("out", help="OUT.zip")
    p.add_argument("--home")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        print(RunStore(args.home).export_run(args.run, args.out))
    except (OSError, StoreError) as e:
        return fail(str(e))
    return 0
