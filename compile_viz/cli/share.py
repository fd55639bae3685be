"""`compile-viz share RUN OUT.html [--graphs ID,...] [--rank R]`: the run as one HTML file that
opens anywhere, offline: its summary, every graph drawn, a click on a launch shows its kernel's
code, FX nodes and source lines; links to one launch in the fragment (#graph=...&launch=N)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from compile_viz.cli.errors import fail


def register(sub) -> None:
    p = sub.add_parser("share", help="write a run as one self-contained HTML file (no server, no network): "
                                     "summary, drawings, launches linked to their code and source lines")
    p.add_argument("run", metavar="RUN", help="run id (or a unique part), run folder or zip, a debug folder or zip, "
                                              "bundled:NAME, or a TORCH_TRACE log")
    p.add_argument("out", metavar="OUT.html", help="the file to write")
    p.add_argument("--graphs", metavar="ID,...", help="only these graphs (ids as `compile-viz parse` lists them)")
    p.add_argument("--rank", type=int, metavar="R", help="only rank R's graphs (a job of several ranks)")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    # imported here, not at the top: `compile-viz --help` imports every command's module
    from compile_viz.artifacts import DiscoveryError
    from compile_viz.compare.sides import CompareError, locate_run
    from compile_viz.render.share import ShareError, collect_run, share_html
    from compile_viz.store import RunStore

    graphs = [g for g in (args.graphs or "").split(",") if g]
    try:
        if Path(args.run).is_file() and not zipfile.is_zipfile(args.run):  # a TORCH_TRACE log, as tlparse reads one
            path, meta = args.run, {}
        else:
            debug, meta, folder, zip_path = locate_run(args.run, RunStore(args.home) if args.home else None)
            path = str(folder or zip_path or debug)
        html = share_html(collect_run(path, meta, graphs=graphs, rank=args.rank))
    except (CompareError, DiscoveryError, ShareError) as e:
        return fail(str(e), 2)
    try:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(html)
    except OSError as e:
        return fail(f"cannot write {args.out}: {e.strerror or e}")
    print(f"wrote {args.out} ({len(html.encode()) / 1e6:.2f} MB): open it in a browser; it fetches nothing", file=sys.stderr)
    return 0
