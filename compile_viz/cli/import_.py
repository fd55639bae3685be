"""`compile-viz import PATH`: a run zip, a TORCH_TRACE log or folder, or a .pt2, made a stored run."""

from __future__ import annotations

import sys

from compile_viz.cli.errors import fail
from compile_viz.store import RunStore, StoreError
from compile_viz.trace_import import import_path


def register(sub) -> None:
    p = sub.add_parser("import", help="import a run zip, a TORCH_TRACE log or folder, or a .pt2, into the store")
    p.add_argument("path", metavar="PATH",
                   help="a run zip from `compile-viz export`; a TORCH_TRACE log (plain or .gz), a folder of "
                        "them (one per rank; a torch_compile_debug tree beside them comes too) or a zip of one; "
                        "a .pt2 of aoti_compile_and_package or torch.export.save (read as data, its text kept)")
    p.add_argument("--home")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        done = import_path(RunStore(args.home), args.path)
    except StoreError as e:
        return fail(str(e), 2)
    except OSError as e:
        return fail(str(e))
    said = "imported as" if done.new else "already in the store as"
    print(f"{said} {done.run.id}: {done.summary}", file=sys.stderr)
    print(done.run.path)
    return 0
