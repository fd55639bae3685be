"""compile-viz command line: parse | why | diff | capture | runs | export | import | record | ranks | profile | share |
serve | push | token | project."""

# Torch-free and streamlit-free: `python -m compile_viz.cli capture ...` (or `python -m compile_viz`)
# runs on a headless GPU box that has only torch.

from __future__ import annotations

import sys

# first, before argparse and the parsers compile their patterns: the ones kept by an earlier run
# of the same command
from compile_viz.cli import regex_cache  # noqa: I001

regex_cache.load(regex_cache.scope_of(sys.argv[1:]))

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import os  # noqa: E402

# Which module registers each command, in the order `--help` lists them: one module per command
# (capture and capture-all share one). Only the module of the command being run is imported
# (importing all of them cost ~0.05 s of a 0.15 s `parse`); help, an unknown command and
# scripts/gen_cli_docs.py register every module. A command missing here still works: its name is
# unknown, so every module is registered. No module here imports this package back.
COMMANDS = {
    "parse": "compile_viz.cli.parse",
    "why": "compile_viz.cli.why",
    "diff": "compile_viz.cli.diff",
    "capture": "compile_viz.cli.capture",
    "capture-all": "compile_viz.cli.capture",
    "runs": "compile_viz.cli.runs",
    "export": "compile_viz.cli.export",
    "import": "compile_viz.cli.import_",
    "record": "compile_viz.cli.record",
    "ranks": "compile_viz.cli.ranks",
    "profile": "compile_viz.cli.profile",
    "sweep": "compile_viz.cli.sweep",
    "fleet": "compile_viz.cli.fleet",
    "serve": "compile_viz.cli.serve",
    "push": "compile_viz.cli.push",
    "token": "compile_viz.cli.token",
    "project": "compile_viz.cli.project",
    "share": "compile_viz.cli.share",
}


def _register(sub, module_name: str) -> None:
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # capture commands not built yet
        if module_name != COMMANDS["capture"]:
            raise
        return
    if hasattr(module, "register"):
        module.register(sub)


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, told the terminal's width: left to find it, argparse imports
    shutil for it (~2.3 ms of every start), as every parser's first add_argument makes one."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class _Parser(argparse.ArgumentParser):
    """A parser whose help formatter is _Formatter, unless told another; its subparsers are too."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` only when it is one of COMMANDS."""
    parser = _Parser(prog="compile-viz", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for module_name in modules:
        _register(sub, module_name)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `compile-viz parse ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0


# they hold no file open and leave no process running (share's Graphviz processes have ended by then)
READ_ONLY = frozenset({"parse", "why", "diff", "ranks", "profile", "share"})


def entry() -> None:
    """The `compile-viz` script and `python -m compile_viz`: main(); after a read-only command, leave
    without freeing the parse object by object (10^5-10^6 objects: 5-40 ms of a 0.15-0.6 s run).
    Output is flushed first; in-process callers (tests) call main() and keep their objects."""
    argv = sys.argv[1:]
    read_only = bool(argv) and argv[0] in READ_ONLY
    if read_only:
        gc.disable()  # a short run whose garbage is not worth collecting: ~3 ms of collections, imports included
        _keep_freed_memory()
    code = main(argv)
    if read_only:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # the reader left (`| head`), or the stream is closed
                pass
        _keep_compiled()  # after the output: only a run that compiled something the files lack writes
        os._exit(code)
    _keep_compiled()
    sys.exit(code)


def _keep_compiled() -> None:
    """Keep this process's compiled patterns and @frozen __init__s for the next (as .pyc files)."""
    regex_cache.save()
    frozen = sys.modules.get("compile_viz.artifacts.frozen")  # not imported for it
    if frozen is not None:
        frozen.save_compiled()


def _keep_freed_memory() -> None:
    """Have glibc keep the memory a short command frees for its next allocations, instead of giving
    it back to the system and faulting it in again page by page (the capture child does the same
    through MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_, which must be set before a process
    starts). Nothing happens where there is no glibc."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: blocks under 32 MB come from the heap, reused once freed
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: the heap's free top is kept
