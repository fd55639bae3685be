"""`compile-viz push RUN --to URL [--token T]`: send a stored run to a team server; the run's URL
there is printed last."""

from __future__ import annotations

from compile_viz.cli.errors import fail


def register(sub) -> None:
    p = sub.add_parser("push", help="send a stored run to a team server (compile-viz serve)",
                       description="Zip a stored run and stream it to a team server with a token of one project; "
                                   "the server checks it as `import` does and lists it whole or not at all. The "
                                   "last line printed is the run's URL on the server.")
    p.add_argument("run", metavar="RUN", help="a run id (or unique prefix) or a run folder")
    p.add_argument("--to", required=True, metavar="URL", help="the server, e.g. https://compile-viz.example.com")
    p.add_argument("--token", metavar="T", help="a token from `compile-viz token create` (default $COMPILE_VIZ_TOKEN)")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.set_defaults(func=run)


def run(args) -> int:
    from compile_viz.server.client import PushError, push_run
    from compile_viz.store import RunStore

    try:
        url = push_run(RunStore(args.home), args.run, args.to, args.token)
    except PushError as e:
        return fail(str(e), 2)
    print(url, flush=True)
    return 0


def add_push_option(p) -> None:
    """`--push URL` of record and capture: the token comes from $COMPILE_VIZ_TOKEN (not argv)."""
    p.add_argument("--push", metavar="URL",
                   help="then send the stored run to this team server with the token in $COMPILE_VIZ_TOKEN; "
                        "its URL there is printed last")


def push_stored(store, run_path, url: str | None) -> int:
    """Push a just-stored run when --push asked; print its URL; return 0, or 1 when refused."""
    if not url:
        return 0
    from compile_viz.server.client import PushError, push_run

    try:
        print(push_run(store, str(run_path), url, None), flush=True)
    except PushError as e:
        return fail(f"{e} (the run stays stored here: compile-viz push {run_path} --to {url})")
    return 0
