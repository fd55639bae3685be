"""`compile-viz ranks RUN [--json]`: per rank, what it compiled; then where ranks differ.

RUN is a run id (or a unique part), a run folder or zip, or TORCH_TRACE logs (a log, the folder of
one log per rank, or a zip of it).
"""

from __future__ import annotations

import json
import sys


def register(sub) -> None:
    p = sub.add_parser("ranks", help="what each rank of a job compiled, and where ranks differ (recompiles, "
                                     "graphs, guards, collectives, cache)")
    p.add_argument("run", metavar="RUN", help="run id (or a unique part), run folder or zip, or TORCH_TRACE logs "
                                              "(a log, a folder of one per rank, or a zip of it)")
    p.add_argument("--json", action="store_true", help='print {"ranks", "per_rank", "divergences", "grid"} as JSON')
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    # imported here, not at the top: `compile-viz --help` imports every command's module
    from compile_viz.compare.ranks import rank_logs, rank_report
    from compile_viz.compare.sides import CompareError
    from compile_viz.store import RunStore

    try:
        report = rank_report(rank_logs(args.run, RunStore(args.home) if args.home else None))
    except CompareError as e:
        print(f"compile-viz: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
        return 0
    for s in report.summaries:
        print(f"rank {s.rank}: {s.compile_ids} compile ids, {s.graphs} graphs, {s.kernels} kernels, {s.launches} launches")
    if len(report.ranks) < 2:
        print("one rank: nothing to compare")
    elif not report.divergences:
        print(f"the {len(report.ranks)} ranks compiled the same: no divergence")
    for d in report.divergences:
        print(f"{d.kind}: ranks {', '.join(map(str, d.ranks))}: {d.detail}")
        print(f"    {d.meaning}")
    return 0
