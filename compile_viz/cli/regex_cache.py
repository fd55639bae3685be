"""The command line's compiled regular expressions, kept between processes as .pyc files are.

Every `compile-viz` process compiled ~100 patterns at start (the parsers' line patterns, the
scheduler IR's whole-node pattern among them): ~100M instructions, 40% of a small run's start
and more than every other import together. `re` compiles a pattern in Python (re._parser,
re._compiler) into a list of codes for its C matcher (_sre), and keeps the Pattern in its own
cache (re._cache) for the life of the process. Here the codes are kept in the user's cache folder
($XDG_CACHE_HOME or ~/.cache, then compile_viz/), one file per Python build and _sre version, and
per command (`parse` loads its ~110 patterns, not the ~360 that every command together compiles:
1 ms of every start);
`load()` makes each Pattern from its codes with _sre.compile (microseconds) and puts it in
re._cache under the key `re.compile` looks up, so the modules' own `re.compile(...)` lines find it
there, unchanged. `save()` adds what this process compiled that the file lacked, each checked
equal (same pattern, flags and codes) to the Pattern `re` made. A file that cannot be read, or a
Python whose internals differ, means only that patterns are compiled as before. Stdlib only.
"""

from __future__ import annotations

import marshal
import os
import re
import sys

try:
    import _sre
    from re import _compiler, _parser
except ImportError:  # another Python: nothing is kept
    _sre = None

MAX_KEPT = 1024  # patterns in the file at most (re keeps 512 in a process)
_loaded: set = set()  # re._cache keys put there by load()
_programs: dict = {}  # (pattern, flags) -> what _sre.compile takes after the pattern
_scope = "all"  # whose patterns: a command's (load's `scope`)


def _path() -> str | None:
    if _sre is None:
        return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    build = f"{sys.implementation.cache_tag}-{'.'.join(map(str, sys.version_info[:3]))}-{_sre.MAGIC}-{_sre.CODESIZE}"
    return os.path.join(root, "compile_viz", f"regex-{build}-{_scope}.marshal")


def scope_of(argv: list[str]) -> str:
    """The patterns a command line needs: its command's (the first argument, when it is a word)."""
    word = argv[0] if argv else ""
    return word if word[:1].isalpha() and word.replace("-", "").isalpha() and word.isascii() and len(word) < 32 else "all"


def load(scope: str = "all") -> None:
    """Put the kept patterns of `scope` in re._cache (before the modules that compile them are
    imported); `save` then keeps the ones this process adds to the same scope."""
    global _scope
    _scope = scope
    path = _path()
    cache = getattr(re, "_cache", None)
    if path is None or not isinstance(cache, dict):
        return
    try:
        with open(path, "rb") as fh:
            programs = marshal.loads(fh.read())  # marshal.load(fh) reads the file an object at a time
        for (pattern, flags), program in programs.items():
            key = (type(pattern), pattern, flags)
            if key not in cache:
                cache[key] = _sre.compile(pattern, *program)
                _loaded.add(key)
    except Exception:  # noqa: BLE001 - a cut or foreign file: compile as usual
        _loaded.clear()
        return
    _programs.update(programs)


def save() -> None:
    """Keep what this process compiled that the file lacks; nothing when there is nothing new or
    the cache folder cannot be written."""
    path = _path()
    cache = getattr(re, "_cache", None)
    if path is None or not isinstance(cache, dict):
        return
    fresh = [(key, compiled) for key, compiled in list(cache.items()) if key not in _loaded
             and isinstance(key, tuple) and len(key) == 3 and (key[1], key[2]) not in _programs]
    if not fresh:
        return
    try:  # a folder that cannot be written: not worth compiling the new patterns again for it
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.access(os.path.dirname(path), os.W_OK):
            return
    except OSError:
        return
    new = {}
    for (_, pattern, flags), compiled in fresh:
        try:
            program = _program(pattern, flags)
            if _sre.compile(pattern, *program) == compiled:
                new[(pattern, flags)] = program
        except Exception:  # noqa: BLE001 - one we cannot rebuild is compiled again next time
            continue
    if not new:
        return
    kept = {**_programs, **new}
    if len(kept) > MAX_KEPT:  # patterns made from data would grow it without end: start again
        kept = new
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps(kept))
        os.replace(tmp, path)
        _programs.update(new)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _program(pattern, flags: int) -> tuple:
    """What re._compiler.compile hands _sre.compile after the pattern, worked out as it does."""
    p = _parser.parse(pattern, flags)
    code = _compiler._code(p, flags)
    groupindex = dict(p.state.groupdict)
    indexgroup = [None] * p.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    # plain ints: the opcodes are an int subclass, which marshal does not write
    return int(flags | p.state.flags), list(map(int, code)), p.state.groups - 1, groupindex, tuple(indexgroup)
