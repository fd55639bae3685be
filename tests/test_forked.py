"""compile_viz/cli/forked.py and `parse --json --jobs`: the same answer from several processes as
from one, whatever fails where."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from compile_viz.cli.forked import can_fork, run_shared, share
from tests.conftest import SAMPLE_RUNS

needs_fork = pytest.mark.skipif(not can_fork(), reason="fork is used on Linux only, with no other thread running")


def test_share_balances_by_weight_and_keeps_each_share_in_order():
    assert share([5, 1, 1, 1, 1, 1], 2) == [[0], [1, 2, 3, 4, 5]]
    assert share([3, 3, 2, 2], 2) == [[0, 2], [1, 3]]
    assert share([1], 4) == [[0]]  # no empty share
    assert sorted(i for s in share(list(range(20)), 3) for i in s) == list(range(20))


@needs_fork
def test_forked_results_come_back_in_order():
    jobs = list(range(7))
    assert list(run_shared(lambda x: (x, x * x), jobs, [1] * 7, workers=3)) == [(x, x * x) for x in jobs]


def test_packed_results_come_back_as_they_were():
    from compile_viz.cli.forked import _pack, _unpack

    results = {0: ("{\"a\": 1}", ("warning",)), 3: "text alone", 5: ("bad \udc80 byte", None), 7: (1, "x"), 9: ()}
    assert _unpack(b"".join(_pack(results))) == results


@needs_fork
def test_results_marshal_cannot_write_come_back_through_pickle():
    from fractions import Fraction

    assert list(run_shared(lambda x: Fraction(x, 3), [1, 2, 3], [1, 1, 1], workers=3)) == [
        Fraction(1, 3), Fraction(2, 3), Fraction(1)]


@needs_fork
def test_a_share_whose_child_fails_is_run_here():
    parent = os.getpid()

    def fn(x):
        if os.getpid() != parent:
            raise RuntimeError("fails in the child only")
        return x + 1

    assert list(run_shared(fn, [1, 2, 3, 4], [4, 3, 2, 1], workers=2)) == [2, 3, 4, 5]


SCRIPT = """
import os
from compile_viz.cli.forked import run_shared
parent = os.getpid()
def fn(x):
    if os.getpid() == parent:
        raise ValueError("fails here")
    return bytes(1 << 20)  # more than a pipe holds: the child blocks writing until its pipe is closed
try:
    list(run_shared(fn, [1, 2], [1, 1], workers=2))
except ValueError:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        print("raised, no child left")
"""


@needs_fork
def test_a_failure_here_leaves_no_child_behind():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "raised, no child left", proc.stderr


def test_one_worker_runs_lazily_in_this_process():
    seen = []
    results = run_shared(lambda x: seen.append(x) or x, [1, 2], [1, 1], workers=1)
    assert seen == [] and list(results) == [1, 2] and seen == [1, 2]


def _parse_json(*args: str) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "compile_viz", "parse", "--json", *args],
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@needs_fork
@pytest.mark.parametrize("source", ["zip", "trace"])
def test_parse_json_from_several_processes_is_the_same_text(source):
    """A zip is read by every process (each opens it anew), a trace log once before the fork."""
    path = str(SAMPLE_RUNS / "gpt_small.zip")
    extra = ("--trace",) if source == "trace" else ()
    one = _parse_json(path, *extra, "--jobs", "1")
    assert _parse_json(path, *extra, "--jobs", "2") == one
    assert _parse_json(path, *extra, "--jobs", "8") == one


def test_a_childs_ascii_text_is_written_from_its_file_as_it_was(tmp_path):
    """texts_in_files: an ASCII text stays in the child's file and is written by the kernel to a
    stream with a file, as a str to one without (StringIO); any other text comes back as a str."""
    import io

    from compile_viz.cli.forked import FileText, _pack, _unpack_header

    results = {0: ('{"a": [1, 2]}', ("warning",)), 2: ("bad \udc80 byte", ()), 4: (1, "x")}
    fd = os.memfd_create("test")
    try:
        for chunk in _pack(results):
            os.write(fd, chunk)
        back = _unpack_header(os.pread(fd, 1 << 16, 0), fd, os.fstat(fd).st_size)
        assert isinstance(back[0][0], FileText) and back[0][1:] == results[0][1:]
        assert back[2] == results[2] and back[4] == results[4]
        assert str(back[0][0]) == results[0][0]
        with open(tmp_path / "out.txt", "w") as out:
            out.write("[")
            back[0][0].write_to(out)
            out.write("]")
        assert (tmp_path / "out.txt").read_text() == '[{"a": [1, 2]}]'
        text = io.StringIO()
        back[0][0].write_to(text)
        assert text.getvalue() == results[0][0]
    finally:
        os.close(fd)


SCRIPT_DONE = """
import os
from compile_viz.cli import forked
def fn(x):
    return bytes(1 << 22)  # a child with memory to give back when it exits
assert list(forked.run_shared(fn, [1, 2], [1, 1], workers=2)) == [bytes(1 << 22)] * 2
forked.reap_all()  # what a long-lived caller, or the next run, does for a child not yet exited
try:
    os.waitpid(-1, os.WNOHANG)
except ChildProcessError:
    print("no child left")
"""


@needs_fork
def test_a_child_that_is_done_is_reaped_after_the_results_are_out():
    """A child that said it was done is not waited for at once (its exit goes on beside the parent's
    last writes); `reap_all`, also run at the next run_shared and at exit, leaves none behind."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT_DONE], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "no child left", proc.stderr


SCRIPT_SPLIT = """
import time
from compile_viz.cli.forked import Split, run_shared

def child(job, claim):
    if job == "slow":
        time.sleep(0.5)  # this process is done with its share long before
    return (job, "whole") if claim.take() else (job, "left")

split = Split(lambda job: True, child, lambda job: f"tail of {job}",
              lambda job, result, tail: (result[0], f"{result[1]}, {tail}"))
jobs = ["mine", "slow"]
print(list(run_shared(lambda job: (job, "here"), jobs, [1, 2], 2, split=split)))

def late(job):  # this process's own share outlasts the child's: the child keeps its tail
    time.sleep(0.5)
    return job, "here"

print(list(run_shared(late, jobs, [1, 2], 2, split=split._replace(
    child=lambda job, claim: (job, "whole") if claim.take() else (job, "left")))))

def prepare(job):
    if job == "broken":
        raise ValueError(job)
    return None if job == "none" else {"for": job}

given = Split(lambda job: job != "mine", lambda job, claim: (job, claim.given()), lambda job: None,
              lambda job, result, tail: result, prepare)
print(list(run_shared(lambda job: (job, "here"), ["mine", "a", "none", "broken"], [1, 5, 5, 5], 4, split=given)))
"""


@needs_fork
def test_a_childs_tail_is_done_by_whichever_process_takes_it_first():
    """Split: this process, its own share done, takes the tails the children have not taken yet and
    joins them to their results; a child that took its tail back first gives its result whole.
    What this process prepares for a child (Split.prepare) is given to it when it asks; a job it
    could not be made for (None, or it raised) is given None, and the child does that work itself.
    (In a fresh interpreter: this one may hold threads, and then forks nothing.)"""
    proc = subprocess.run([sys.executable, "-c", SCRIPT_SPLIT], capture_output=True, text=True, timeout=60)
    assert proc.stdout.splitlines() == [
        "[('mine', 'here'), ('slow', 'left, tail of slow')]",
        "[('mine', 'here'), ('slow', 'whole')]",
        "[('mine', 'here'), ('a', {'for': 'a'}), ('none', None), ('broken', None)]",
    ], proc.stderr


@needs_fork
def test_an_altered_payload_in_a_forked_graph_warns_as_in_one_process(tmp_path):
    """parse --json leaves a forked graph's MD5 checks to this process when it is free first: a
    payload that is not as logged is found there, and the graph parsed again with its warning."""
    import zipfile

    with zipfile.ZipFile(SAMPLE_RUNS / "gpt_small.zip") as zf:
        name = next(n for n in zf.namelist() if n.startswith("trace/") and n.endswith(".log"))
        lines = zf.read(name).decode().split("\n")
    # the backward's output code (the bigger graph: forked): a byte of its payload changed
    at = [i for i, line in enumerate(lines) if '{"inductor_output_code"' in line][-1]
    k = next(i for i in range(at + 1, len(lines)) if "buf" in lines[i])
    lines[k] = lines[k].replace("buf", "fub", 1)
    log = tmp_path / "altered.log"
    log.write_text("\n".join(lines))
    one = _parse_json(str(log), "--jobs", "1")
    assert b"does not match its MD5" in one
    assert _parse_json(str(log), "--jobs", "2") == one


def test_a_text_in_parts_is_packed_and_written_as_the_joined_text(tmp_path):
    """Parts: a child packs the parts of its text encoded one by one (no joined copy), into the same
    bytes as the joined text; this process writes its own through its file (or as a str to a
    stream without one), the same text either way."""
    import io

    from compile_viz.cli.forked import Parts, _pack, _unpack

    parts = ['{"a":', '"x"', ","] * 3000 + ['"\u00e9"}']
    joined = "".join(parts)
    assert b"".join(_pack({0: (Parts(parts), ("w",))})) == b"".join(_pack({0: (joined, ("w",))}))
    assert _unpack(b"".join(_pack({0: (Parts(parts), ())}))) == {0: (joined, ())}
    ascii_parts = parts[:-1]
    with open(tmp_path / "out.json", "w", encoding="utf-8") as out:
        out.write("[")
        Parts(ascii_parts).write_to(out)  # through the file, after what the stream holds
        out.write("]")
    assert (tmp_path / "out.json").read_text() == "[" + "".join(ascii_parts) + "]"
    # ASCII parts already encoded (parse_json.graph_parts(encoded=True)), beside strs: the same
    as_bytes = [p.encode("ascii") for p in parts[:-1]] + parts[-1:]
    assert b"".join(_pack({0: (Parts(as_bytes), ("w",))})) == b"".join(_pack({0: (joined, ("w",))}))
    assert str(Parts(as_bytes)) == joined and not Parts(as_bytes).isascii()
    assert Parts(as_bytes[:-1]).isascii() and str(Parts(as_bytes[:-1])) == "".join(ascii_parts)
    with open(tmp_path / "out2.json", "w", encoding="utf-8") as out:
        Parts([p.encode() for p in ascii_parts]).write_to(out)
    assert (tmp_path / "out2.json").read_text() == "".join(ascii_parts)
    for text in (Parts(parts), Parts(ascii_parts), Parts(as_bytes)):
        buf = io.StringIO()
        text.write_to(buf)
        assert buf.getvalue() == str(text)
