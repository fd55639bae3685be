"""`compile-viz why RUN KERNEL_A KERNEL_B`: why Inductor kept two kernels apart, from the fusion log.

RUN is named as for `compile-viz diff`: a run id of the store (or a unique part), a run folder, a
run zip, a debug folder or zip, or bundled:NAME. A kernel is named by its
kernel name (`triton_poi_fused_add_0`, `extern_kernels.mm`) or by its launch (`L3` or `3`); a name
launched more than once means its first launch. `--graph` picks the graph when the run has several.
"""

from __future__ import annotations

import sys

from compile_viz.artifacts import DiscoveryError, parse_path
from compile_viz.linking import build_index
from compile_viz.linking.fusion import why_separate
from compile_viz.render.fusion import why_text
from compile_viz.render.fusion_notes import NO_LOG_NOTE


def register(sub) -> None:
    p = sub.add_parser("why", help="why two kernels were not fused: every pair Inductor weighed, with its reason")
    p.add_argument("run", metavar="RUN", help="run id (or a unique part), run folder, run zip, debug folder or zip, or bundled:NAME")
    p.add_argument("kernel_a", metavar="KERNEL_A", help="kernel name, or launch (L3 or 3)")
    p.add_argument("kernel_b", metavar="KERNEL_B", help="kernel name, or launch (L3 or 3)")
    p.add_argument("--graph", help="graph id (default: the first graph that has both kernels)")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def _locate(ref: str, home: str | None) -> str:
    """compare.sides.run_path, failing as the parsers do (DiscoveryError)."""
    from compile_viz.compare.sides import CompareError, run_path
    from compile_viz.store import RunStore

    try:
        return run_path(ref, RunStore(home) if home else None)
    except CompareError as e:
        raise DiscoveryError(str(e)) from None


def _launch_of(index, ref: str) -> int | None:
    digits = ref[1:] if ref[:1] in "Ll" else ref
    if digits.isdigit() and int(digits) < len(index.launches):
        return int(digits)
    return next((la.index for la in index.launches if la.kernel == ref), None)


def run(args) -> int:
    try:
        parsed = parse_path(_locate(args.run, args.home))
    except DiscoveryError as e:
        print(f"compile-viz: {e}", file=sys.stderr)
        return 2
    graphs = [g for g in parsed.graphs if not args.graph or g.id == args.graph]
    for graph in graphs:
        index = build_index(graph)
        a, b = _launch_of(index, args.kernel_a), _launch_of(index, args.kernel_b)
        if a is None or b is None:
            continue
        if graph.fusion_decisions is None:
            print(f"compile-viz: {graph.id} has no fusion log. {NO_LOG_NOTE}", file=sys.stderr)
            return 1
        print(why_text(graph, why_separate(graph, index, graph.fusion_decisions, a, b), index))
        return 0
    where = f"graph {args.graph}" if args.graph else "any one graph"
    print(f"compile-viz: {args.kernel_a} and {args.kernel_b} are not both launched in {where} of {args.run}; "
          "`compile-viz parse RUN` lists the kernels", file=sys.stderr)
    return 2
