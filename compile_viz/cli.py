"""compile-viz command line: parse | why | diff | capture | runs | export | import."""

from __future__ import annotations

import argparse
import sys


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compile-viz", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    from compile_viz import parse_cli

    parse_cli.register(sub)
    from compile_viz import why_cli

    why_cli.register(sub)
    from compile_viz import compare_cli

    compare_cli.register(sub)
    try:
        from compile_viz.capture import cli as capture_cli
    except ImportError:  # capture commands not built yet
        capture_cli = None
    if capture_cli is not None and hasattr(capture_cli, "register"):
        capture_cli.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `compile-viz parse ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
