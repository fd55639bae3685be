"""Write docs/cli.md: the `--help` of compile-viz and of each subcommand, from compile_viz.cli's parser.

Usage: python scripts/gen_cli_docs.py [--check]
tests/test_cli_docs.py fails when the page and the parser differ; --check does the same here (exit 1).
The help is laid out at a fixed width, so the page is the same on any terminal.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compile_viz.cli import _build_parser  # noqa: E402

PAGE = ROOT / "docs" / "cli.md"
WIDTH = 100
COMMAND = "python scripts/gen_cli_docs.py"
HEADER = f"""# Command-line reference

Generated from the argparse definitions (`compile_viz/cli/`: one module per command, named in
`COMMANDS` in `compile_viz/cli/__init__.py`) by `{COMMAND}`; do not edit by hand.
`tests/test_cli_docs.py` fails when this page and the code differ.
What the commands do, with examples: [capture.md](capture.md) and the [README](../README.md).
"""


def _fixed(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Return the parser with its help laid out at WIDTH columns and without colour (Python 3.14)."""
    parser.formatter_class = functools.partial(argparse.HelpFormatter, width=WIDTH)
    if hasattr(parser, "color"):
        parser.color = False
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def render() -> str:
    """Return the text of docs/cli.md for the parser as it is now."""
    parser = _fixed(_build_parser())
    sections = [("compile-viz", parser)] + [(f"compile-viz {name}", _fixed(sub))
                                            for name, sub in _subcommands(parser).items()]
    body = "".join(f"\n## {title}\n\n```\n{p.format_help().rstrip()}\n```\n" for title, p in sections)
    return HEADER + body


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is stale; write nothing")
    check = args.parse_args(argv).check
    text = render()
    if check:
        stale = not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text
        if stale:
            print(f"{PAGE.relative_to(ROOT)} is stale: run {COMMAND}", file=sys.stderr)
        return int(stale)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
