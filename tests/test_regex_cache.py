"""The command line's kept regular expressions (compile_viz/cli/regex_cache.py): a pattern made from
the kept codes is the one `re.compile` makes (same pattern, flags and codes, so the same matches),
a file that is cut or foreign is ignored, and `parse --json` prints the same with or without one."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from compile_viz.cli import regex_cache
from tests.conftest import ROOT

PATTERNS = [
    (r"(?P<name>\w++): (?P<htype>\w+(?:\([^\n]*\))?)[^\S\n]*\n", 0),  # possessive, named groups
    (r"^(\w+)_layout = (.*)$", re.M),
    (rb"\n(?!\t|\n\t)", 0),  # bytes
    (r"""
        (?P<num>[0-9]+\b) |   # a number
        (?P<op>[-*/%+?:])     # an operator
    """, re.VERBOSE | re.DOTALL),
]


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A cache folder of its own, and re's cache and this module's state emptied around the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(regex_cache, "_loaded", set())
    monkeypatch.setattr(regex_cache, "_programs", {})
    re.purge()
    yield tmp_path
    re.purge()


def test_kept_patterns_are_the_ones_re_compiles(fresh):
    made = [re.compile(p, f) for p, f in PATTERNS]
    regex_cache.save()
    assert os.path.exists(regex_cache._path())
    re.purge()
    regex_cache._programs.clear()
    regex_cache.load()
    for (p, f), original in zip(PATTERNS, made, strict=True):
        key = (type(p), p, int(f))
        assert key in regex_cache._loaded
        loaded = re.compile(p, f)  # found in re's cache: not compiled again
        assert loaded is re._cache[key]
        assert loaded == original and loaded.groupindex == original.groupindex and loaded.flags == original.flags
    m = re.compile(*PATTERNS[0]).match("buf3: SchedulerNode(ComputedBuffer)\n")
    assert m.group("name", "htype") == ("buf3", "SchedulerNode(ComputedBuffer)")


def test_a_cut_or_foreign_file_is_ignored(fresh):
    os.makedirs(os.path.dirname(regex_cache._path()))
    for junk in (b"", b"\x00garbage", b"\xe3" + b"x" * 100):
        with open(regex_cache._path(), "wb") as fh:
            fh.write(junk)
        regex_cache.load()
        assert not regex_cache._loaded
        assert re.compile(r"(\d+)-(\d+)").match("12-34").groups() == ("12", "34")


def test_parse_json_is_the_same_with_kept_patterns(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "compile_viz", "parse", "--json", str(ROOT / "sample_runs" / "tiny_linear_relu.zip")]
    first = subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, check=True).stdout
    kept = sorted(os.listdir(tmp_path / "compile_viz"))  # and @frozen's __init__s (frozen.save_compiled)
    assert len(kept) == 2 and kept[0].startswith("frozen-init-") and kept[1].startswith("regex-")
    again = subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, check=True).stdout
    assert first == again


def test_each_command_keeps_its_own_patterns(fresh):
    """A command's process loads the patterns that command compiled before, not every command's."""
    assert regex_cache.scope_of(["parse", "--json", "x"]) == "parse"
    assert regex_cache.scope_of(["capture-all"]) == "capture-all"
    for argv in ([], ["--help"], ["../x"], ["a/b"], ["é"]):
        assert regex_cache.scope_of(argv) == "all"
    try:
        regex_cache.load("parse")
        assert regex_cache._path().endswith("-parse.marshal")
    finally:
        regex_cache.load("all")
