"""`compile-viz diff RUN_A RUN_B [--json]`: what changed in fusion, kernels and time between two runs."""

from __future__ import annotations

import json
import sys

from compile_viz.compare import (
    SAME,
    CompareError,
    GraphMatch,
    MatchGroup,
    Row,
    diff_json,
    diff_runs,
    failed_note,
    graph_costs,
    graph_rows,
    load_side,
    run_rows,
    timing_note,
)
from compile_viz.compare.model import CLASSES
from compile_viz.compare.pairing import parse_pairs
from compile_viz.store import RunStore


def register(sub) -> None:
    p = sub.add_parser("diff", help="compare two runs: graphs paired, kernels matched by the nodes they cover, deltas")
    p.add_argument("run_a", metavar="RUN_A",
                   help="run id (or a unique part), run folder, run zip, debug folder or zip, or bundled:NAME")
    p.add_argument("run_b", metavar="RUN_B", help="the same, for the run to compare it with")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--all", action="store_true", help="list the unchanged (same) groups too")
    p.add_argument("--pair", action="append", default=[], metavar="A_GRAPH:B_GRAPH",
                   help="pair these graphs (B_GRAPH '-' for none) instead of by kind and order; repeatable")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        store = RunStore(args.home) if args.home else None
        a, b = load_side(args.run_a, store), load_side(args.run_b, store)
    except (CompareError, OSError) as e:
        print(f"compile-viz: {e}", file=sys.stderr)
        return 2
    diff = diff_runs(a, b, parse_pairs(",".join(args.pair)))
    if args.json:
        json.dump(diff_json(diff), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for line in text_lines(diff, show_same=args.all):
            print(line)
    return 0


def _side_line(name: str, side) -> str:
    r = side.meta.get("resolved") or side.meta.get("options") or {}
    opts = (side.meta.get("options") or {}).get("inductor_options") or {}
    facts = [str(r[k]) for k in ("device", "mode", "dtype") if r.get(k)]
    facts += [f"{k}={v}" for k, v in opts.items()]
    torch = (side.meta.get("versions") or {}).get("torch")
    facts += [f"torch {torch}"] if torch else []
    return f"{name}: {side.title} ({side.key})" + (f" · {' · '.join(facts)}" if facts else "")


def _rows(rows: list[Row], indent: str = "") -> list[str]:
    out = []
    for r in rows:
        if r.a is None and r.b is None:
            continue
        mark = {"better": "  (better)", "worse": "  (worse)"}.get(r.verdict, "")
        out.append(f"{indent}{r.label:<20} {r.text(r.a):>12} {r.text(r.b):>12}   {r.delta_text()}{mark}".rstrip())
    return out


def _refs(refs) -> str:
    return " + ".join(f"#{r.index} {r.kernel} ({r.kind})" for r in refs) or "-"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f} ms"


def group_line(g: MatchGroup) -> str:
    """Return one group as a line: class, A's launches -> B's launches, nodes, times."""
    nodes = ", ".join(g.fx_nodes[:6]) + (f", ... ({len(g.fx_nodes)} in all)" if len(g.fx_nodes) > 6 else "")
    times = f"  [A {_ms(g.a_time_ms)}, B {_ms(g.b_time_ms)}]" if g.a_time_ms is not None or g.b_time_ms is not None else ""
    return f"  {g.cls:<10} {_refs(g.a)}  ->  {_refs(g.b)}  | {nodes}{times}"


def _graph_lines(diff, gm: GraphMatch, show_same: bool, *, groups: bool = True) -> list[str]:
    a_index = diff.a.indexes.get(gm.a) if gm.a else None
    b_index = diff.b.indexes.get(gm.b) if gm.b else None
    lines = ["", f"graph {gm.a or '(none)'}  <->  {gm.b or '(none)'}  [{gm.kind}]"]
    lines += _rows(graph_rows(a_index, b_index, graph_costs(diff.a, gm.a), graph_costs(diff.b, gm.b)), "  ")
    if not groups:  # a side failed (failed_note): its launches are not counted as same or changed
        return lines
    counts = gm.counts()
    lines.append("  groups: " + ", ".join(f"{counts[c]} {c}" for c in CLASSES if counts[c]))
    lines += [group_line(g) for g in gm.groups if show_same or g.cls != SAME]
    return lines


def text_lines(diff, *, show_same: bool = False) -> list[str]:
    """Return the comparison as text: the runs, their numbers with deltas, then per graph pair its
    numbers and the groups that changed (all of them with show_same)."""
    lines = [_side_line("A", diff.a), _side_line("B", diff.b), "", f"{'':<20} {'A':>12} {'B':>12}   B - A"]
    lines += _rows(run_rows(diff.a, diff.b))
    if note := timing_note(diff.a, diff.b):
        lines.append(note[1])
    failed = failed_note(diff.a, diff.b)
    if failed:
        lines.append(failed)
    for gm in diff.graphs:
        lines += _graph_lines(diff, gm, show_same and not failed, groups=not failed)
    return lines
