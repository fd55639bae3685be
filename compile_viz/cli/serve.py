"""`compile-viz serve --store DIR [--db URL] [--host H] [--port P] (--auth FILE | --open)`: the team
server, dashboard and HTTP API on one port (docs/team.md)."""

from __future__ import annotations

from compile_viz.cli.errors import fail
from compile_viz.cli.store_args import add_store_args


def register(sub) -> None:
    p = sub.add_parser("serve", help="team server: the dashboard and the HTTP API over a shared run store",
                       description="Serve the dashboard and the HTTP API (/api/runs, pushes) on one port. People "
                                   "sign in through OpenID Connect (--auth) and see their projects' runs; "
                                   "`compile-viz push` sends runs with a token.")
    add_store_args(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--public-url", metavar="URL",
                   help="how people reach the server (behind a proxy); run URLs are made with it")
    p.add_argument("--auth", metavar="FILE",
                   help="TOML with an [auth] table for OpenID Connect sign-in (redirect_uri, cookie_secret, "
                        "client_id, client_secret, server_metadata_url)")
    p.add_argument("--max-push-mb", type=float, default=2048, metavar="MB",
                   help="largest push accepted, as sent and unpacked (default 2048: the cap of `import`)")
    p.add_argument("--open", action="store_true",
                   help="no sign-in: every run to anyone who reaches the port (a trusted network only)")
    p.set_defaults(func=run)


def run(args) -> int:
    from compile_viz.server.serve import ServeOptions, serve
    from compile_viz.store import StoreError

    opts = ServeOptions(store=args.store, db=args.db, host=args.host, port=args.port, public_url=args.public_url,
                        auth_file=args.auth, open_access=args.open,
                        max_push_bytes=int(args.max_push_mb * 1024 * 1024))
    try:
        serve(opts)
    except StoreError as e:
        return fail(str(e), 2)
    except KeyboardInterrupt:
        pass
    return 0
