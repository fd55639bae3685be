"""`compile-viz token create --project P --user U` (the token printed once, on the last line) and
`compile-viz token revoke ID`."""

from __future__ import annotations

import sys

from compile_viz.cli.errors import fail
from compile_viz.cli.store_args import add_store_args


def register(sub) -> None:
    p = sub.add_parser("token", help="team server: create or revoke a push/API token",
                       description="A token lets `compile-viz push` send runs to one project and the API read "
                                   "them. It is printed once; the server keeps only its hash.")
    action = p.add_subparsers(dest="action", required=True)
    create = action.add_parser("create", help="create a token; printed once, on the last line")
    create.add_argument("--project", required=True, metavar="P")
    create.add_argument("--user", required=True, metavar="U", help="who the token is for (shown with its pushes)")
    add_store_args(create)
    create.set_defaults(func=run)
    revoke = action.add_parser("revoke", help="revoke a token (its id, or the whole token)")
    revoke.add_argument("token", metavar="ID")
    add_store_args(revoke)
    revoke.set_defaults(func=run)


def run(args) -> int:
    from compile_viz.server.open import open_store
    from compile_viz.server.tokens import create_token, revoke_token
    from compile_viz.store import StoreError

    try:
        index = open_store(args.store, args.db).index
        if args.action == "revoke":
            print(f"revoked token {revoke_token(index, args.token)}")
            return 0
        token_id, token = create_token(index, args.project, args.user)
    except StoreError as e:
        return fail(str(e), 2)
    print(f"token {token_id} for {args.user} on project {args.project} (shown once; only its hash is kept):",
          file=sys.stderr)
    print(token)
    return 0
