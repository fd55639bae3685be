"""`compile-viz fleet NAME` (a sweep's cells and their numbers) and `compile-viz fleet A B` (what changed
between two sweeps, model by model, and why). NAME@VERSION keeps one torch version's cells."""

from __future__ import annotations

import json

from compile_viz.cli.errors import fail


def register(sub) -> None:
    p = sub.add_parser("fleet", help="a sweep's cells with their numbers; with two sweeps, what changed and why")
    p.add_argument("sweeps", nargs="+", metavar="NAME", help="a sweep's name (NAME@TORCH: one torch version's "
                                                             "cells); two names compare them, A then B")
    p.add_argument("--json", action="store_true", help='print {"sweep", "engine", "cells"} or {"changes", "same"} as JSON')
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    # imported here so that `--help`, which registers every command, does not pay for them
    from compile_viz.fleet.diff import fleet_diff
    from compile_viz.fleet.records import FleetError
    from compile_viz.fleet.report import fleet_report
    from compile_viz.store import RunStore

    if len(args.sweeps) > 2:
        return fail("name one sweep, or two to compare", 2)
    try:
        store = RunStore(args.home)
        doc = fleet_report(store, args.sweeps[0]) if len(args.sweeps) == 1 else fleet_diff(store, *args.sweeps)
    except (FleetError, OSError) as e:
        return fail(str(e), 2)
    if args.json:
        print(json.dumps(doc, indent=1))
    elif len(args.sweeps) == 1:
        print_report(doc)
    else:
        print_diff(doc)
    return 0


def _n(value, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


MODEL_WIDTH = 40


def _tail(text: str, width: int) -> str:
    """The end of `text` in `width` characters: a model's name (file:SPEC) is told apart by its end."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def print_report(doc: dict) -> None:
    cells = doc["cells"]
    done = sum(c["status"] == "complete" for c in cells)
    print(f"sweep {doc['sweep']} ({doc['engine']}): {done} of {len(cells)} cells complete")
    width = min(max([5] + [len(c["model"]) for c in cells]), MODEL_WIDTH)
    print(f"{'status':<9} {'model':<{width}} {'setting':<14} {'compile s':>9} {'graphs':>6} {'breaks':>6} "
          f"{'recomp':>6} {'kernels':>7} {'launch':>6} {'speedup':>7}  run / reason")
    for c in cells:
        tail = c["run"] or ""
        if c["status"] != "complete":
            tail = f"{tail}  {c['reason']}".strip()
        print(f"{c['status']:<9} {_tail(c['model'], width):<{width}} {c['setting'][:14]:<14} {_n(c['compile_s'], 1):>9} "
              f"{_n(c['graphs']):>6} {_n(c['graph_breaks']):>6} {_n(c['recompiles']):>6} {_n(c['kernels']):>7} "
              f"{_n(c['launches']):>6} {_n(c['speedup'], 2):>7}  {tail}")


def print_diff(doc: dict) -> None:
    changes = doc["changes"]
    print(f"{doc['a']} -> {doc['b']}: {len(changes)} changed, {doc['same']} the same"
          + (f", {len(doc['unpaired'])} in one sweep only" if doc["unpaired"] else ""))
    for c in changes:
        print(f"{c['model']} / {c['setting']}: {c['why']}")
        a, b = c["pair"]
        if a and b:
            print(f"    compile-viz diff {a} {b}")
    for u in doc["unpaired"]:
        print(f"only in {u['only_in'].upper()}: {u['model']} / {u['setting']}")
