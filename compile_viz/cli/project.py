"""`compile-viz project add P --member EMAIL ...`: a project of the team server and who is in it."""

from __future__ import annotations

from compile_viz.cli.errors import fail
from compile_viz.cli.store_args import add_store_args


def register(sub) -> None:
    p = sub.add_parser("project", help="team server: add a project or members to it",
                       description="Create a project (if new) and add members by e-mail address: a person "
                                   "signed in to `compile-viz serve` with that address sees the project's runs.")
    action = p.add_subparsers(dest="action", required=True)
    add = action.add_parser("add", help="create a project and add members")
    add.add_argument("name", metavar="P")
    add.add_argument("--member", action="append", default=[], metavar="EMAIL", help="a member (repeat for more)")
    add_store_args(add)
    add.set_defaults(func=run)


def run(args) -> int:
    from compile_viz.server.open import open_store
    from compile_viz.server.projects import add_project
    from compile_viz.store import StoreError

    try:
        members = add_project(open_store(args.store, args.db).index, args.name, args.member)
    except StoreError as e:
        return fail(str(e), 2)
    print(f"project {args.name}: {len(members)} member(s){': ' if members else ''}{', '.join(members)}")
    return 0
