"""The `--store DIR` and `--db URL` that serve, token and project share."""

from __future__ import annotations

import os


def add_store_args(p) -> None:
    p.add_argument("--store", "--home", dest="store", metavar="DIR",
                   help="the run store's folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.add_argument("--db", metavar="URL", default=os.environ.get("COMPILE_VIZ_DB"),
                   help="the index's database: postgresql://USER[:PASSWORD]@HOST:PORT/DB (default "
                        "$COMPILE_VIZ_DB, else SQLite in the store)")
