"""`compile-viz profile RUN [--top N] [--json] [--export OUT.json]`: where the job's time went, from
the torch.profiler traces in its run (record --profile, capture --profile, or `*.pt.trace.json`
files imported beside its logs), launch by launch, with modules and source lines."""

from __future__ import annotations

import json
import sys

NO_PROFILE = ("{run} holds no torch.profiler trace: record the job with `compile-viz record --profile -- ...`, "
              "capture with --profile, or put its *.pt.trace.json beside the logs before importing it")


def register(sub) -> None:
    p = sub.add_parser("profile", help="where the time went: the run's profile joined to kernels, modules and "
                                       "source lines; --export writes one Perfetto trace of every rank")
    p.add_argument("run", metavar="RUN", help="run id (or a unique part), run folder or zip, or a debug folder")
    p.add_argument("--top", type=int, default=15, help="launches listed (default 15)")
    p.add_argument("--json", action="store_true", help="print the summary and every timed launch as JSON")
    p.add_argument("--export", metavar="OUT.json", help="write the profiles as one annotated Perfetto/Chrome trace")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    # imported here, not at the top: `compile-viz --help` imports every command's module
    from compile_viz.artifacts import DiscoveryError, profile_files
    from compile_viz.compare.sides import CompareError, run_path
    from compile_viz.linking.time_report import time_report
    from compile_viz.render.profile import summary_line
    from compile_viz.render.profile_export import perfetto_trace
    from compile_viz.store import RunStore

    try:
        path = run_path(args.run, RunStore(args.home) if args.home else None)
        report = time_report(path)
    except (CompareError, DiscoveryError) as e:
        print(f"compile-viz: {e}", file=sys.stderr)
        return 2
    if report is None:
        print(f"compile-viz: {NO_PROFILE.format(run=args.run)}", file=sys.stderr)
        return 2
    if args.export:
        with open(args.export, "w", encoding="utf-8") as out:
            json.dump(perfetto_trace(profile_files(path), report), out)
        print(f"wrote {args.export}: open it in https://ui.perfetto.dev or chrome://tracing", file=sys.stderr)
    if args.json:
        print(json.dumps({"profile": report.summary, "launches": [r.to_json() for r in report.rows]}, indent=1))
        return 0
    print(summary_line(report.summary))
    for r in report.rows[:args.top]:
        where = f"{r.source_lines[0][0].rsplit('/', 1)[-1]}:{r.source_lines[0][1]}" if r.source_lines else ""
        print(f"{r.total_us / 1e3:8.3f} ms {r.share:6.1%}  {r.calls:3d}x  {r.label} #{r.launch} {r.kernel}"
              f"  {r.module}  {where}".rstrip())
    return 0
