"""`compile-viz sweep SWEEP.toml`: every model x setting of the file captured as a Ray task, on a local Ray
started for the sweep or the cluster at --address / $RAY_ADDRESS; progress a line per cell, the name last."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from compile_viz.cli.errors import fail


def register(sub) -> None:
    p = sub.add_parser("sweep", help="capture every model x setting of a sweep file as Ray tasks; prints the sweep's name last")
    p.add_argument("file", nargs="?", metavar="SWEEP.toml",
                   help="models = [...] and [[settings]] tables (docs/fleet.md); optional with --resume")
    p.add_argument("--address", help="the Ray cluster to run on (default $RAY_ADDRESS; none: a local Ray for this sweep)")
    p.add_argument("--name", help="the sweep's name (default: the file's name and the time)")
    p.add_argument("--resume", metavar="NAME", help="run only the cells of sweep NAME that have no complete run")
    p.add_argument("--cpus", type=int, help="CPUs of the local Ray (default: all of this machine's)")
    p.add_argument("--push", metavar="URL",
                   help="then send each complete cell's run to this team server (token in $COMPILE_VIZ_TOKEN), "
                        "once: a cell already sent is skipped by a later --push or --resume")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz); the cluster's "
                                  "workers write there too, so on several machines it is a shared folder")
    p.set_defaults(func=run)


def run(args) -> int:
    # The library is imported here, not at the top: `--help` registers every command, and tomllib,
    # the capture options and the store would cost it ~30 ms. Ray is imported only when cells run.
    from compile_viz.fleet.driver import run_sweep
    from compile_viz.fleet.records import FleetError, check_name
    from compile_viz.fleet.sweep_file import SweepFileError, read_sweep
    from compile_viz.store import RunStore

    if not args.file and not args.resume:
        return fail("name a sweep file, or --resume NAME", 2)
    if args.resume and args.name and args.name != args.resume:
        return fail("--resume NAME names the sweep; leave out --name", 2)
    try:
        sweep = read_sweep(args.file) if args.file else None
        name = check_name(args.resume or args.name or default_name(args.file))
        store = RunStore(args.home)
    except (SweepFileError, FleetError, OSError) as e:
        return fail(str(e), 2)
    if args.push and not os.environ.get("COMPILE_VIZ_TOKEN"):
        return fail("--push needs a token in $COMPILE_VIZ_TOKEN (`compile-viz token create` on the server)", 2)
    address = args.address or os.environ.get("RAY_ADDRESS") or None
    print(f"sweep {name}: on {'Ray at ' + address if address else 'a local Ray'}; store {store.home}", flush=True)
    try:
        result = run_sweep(sweep, name=name, store=store, address=address, resume=bool(args.resume),
                           source=args.file or "", local_cpus=args.cpus, on_event=print_event)
    except FleetError as e:
        return fail(str(e), 2)
    except KeyboardInterrupt:
        return fail(f"stopped; compile-viz sweep --resume {name} runs the cells left", 130)
    failed = result.failed
    total = len(result.record.cells)
    print(f"{total - len(failed)} of {total} cells complete" + (f", {len(failed)} failed" if failed else "")
          + f" in {result.record.wall_s:.1f} s; compile-viz fleet {name} shows them")
    refused = push_cells(store, name, args.push) if args.push else 0
    print(name)
    return 1 if failed or refused else 0


def push_cells(store, name: str, url: str) -> int:
    """Send the sweep's complete runs not sent yet to the team server; print each URL; return how many were refused."""
    from compile_viz.fleet.records import mark_pushed, unpushed
    from compile_viz.server.client import PushError, push_run

    refused = 0
    for key, run in unpushed(store, name):
        try:
            there = push_run(store, run.id, url, None)
        except PushError as e:
            refused += 1
            print(f"compile-viz: push of {key} refused: {e} (the run stays stored here: {run.id})", file=sys.stderr)
            continue
        mark_pushed(store, name, key, there)
        print(f"pushed {key}: {there}", flush=True)
    return refused


def default_name(file: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "_", Path(file).stem) or "sweep"
    return f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"


def print_event(e) -> None:
    """Print one line per cell that ends: counts so far, its status, its run or why it failed."""
    where = f"{e.cell.model} / {e.cell.setting.name}" + (f" / torch {e.cell.torch}" if e.cell.torch else "")
    tail = f"  {e.run}" if e.run else ""
    if e.reason:
        tail += f"  {e.reason}"
    print(f"[{e.elapsed_s:7.1f}s] {e.done}/{e.total} done, {e.running} running or waiting, {e.failed} failed  "
          f"{e.status:<8} {where}{tail}", flush=True)
