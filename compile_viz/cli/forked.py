"""Run independent jobs in this process and in forked copies of it, on the CPUs it may use.

For command-line work that is several independent pieces (`compile-viz parse --json`: one graph
each). A forked child starts with everything already imported and read, runs its share of the
jobs, writes their results into an in-memory file and says so with one byte through a pipe. The
results come back in the jobs' order, the same as running them one by one. A child that fails or
dies costs time, not the answer: its share is run again here. Nothing is forked where fork is
unsafe or unavailable (not Linux, other threads running) or where one process is all there is.
"""

from __future__ import annotations

import codecs
import marshal
import os
from collections import namedtuple
from collections.abc import Callable, Iterator, Sequence

from compile_viz.artifacts.forking import can_fork, cpus  # noqa: F401 - cpus: parse's worker count

MAX_WORKERS = 8


def share(weights: Sequence[int], workers: int) -> list[list[int]]:
    """The job indices split into `workers` lists of about equal total weight (heaviest first,
    each to the lightest list so far); each list in the jobs' order."""
    bins: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        k = loads.index(min(loads))
        bins[k].append(i)
        loads[k] += weights[i]
    return [sorted(b) for b in bins if b]


# (namedtuple, not typing.NamedTuple: typing costs every command ~3 ms to import)
Split = namedtuple("Split", "has_tail child tail join prepare", defaults=(None,))
Split.__doc__ = """How a forked child's job may leave its tail to this process (run_shared): for a job that
    `has_tail`, the child runs `child(job, claim)`, which does the tail itself only if
    `claim.take()` says this process has not taken it; this process, once its own share is done,
    takes the tails it still can and runs `tail(job)` for each while the children work; the
    child's result is then `join(job, result, tail's result)`, a job whose tail this process did
    not take giving the child's result as it is. For work a child would do last while this
    process waits for it. Other jobs run `fn` as they would without a Split. `prepare(job)`, when
    given, runs here first, before this process's own share: its value (pickled) is the child's
    when it asks (`claim.given()`), for work the child would otherwise do itself, on its path."""

MAX_CLAIMS = 256  # three file descriptors each (two pipes' read ends, a memfd), held until the results are in: the rest keep their tails


class Claim:
    """What this process and a forked child share about one of the child's jobs, made before the
    fork. Its tail: a piece of work either may do, done by the first that takes it (one byte in a
    pipe, read by the first to ask: a pipe's read is atomic). What this process prepared for it
    (`give`, then the child's `given`): pickled into an in-memory file, then a byte in a second
    pipe, which the child waits for (or for its end, when this process gave nothing)."""

    __slots__ = ("fd", "ready", "ready_w", "data")

    def __init__(self) -> None:
        self.fd, write_fd = os.pipe()
        os.write(write_fd, b"\x01")
        os.close(write_fd)  # then a read finds the byte, or nothing (end of file): never waits
        self.ready, self.ready_w = os.pipe()
        self.data = os.memfd_create("compile-viz-given", os.MFD_CLOEXEC)

    def take(self) -> bool:
        return os.read(self.fd, 1) == b"\x01"

    def give(self, value) -> None:
        """This process: hand `value` to the child (None: nothing; it does the work itself)."""
        try:
            if value is not None:
                import pickle

                _write_all(self.data, [pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)])
                os.write(self.ready_w, b"\x01")
        finally:
            self.done_giving()

    def done_giving(self) -> None:
        if self.ready_w >= 0:
            os.close(self.ready_w)
            self.ready_w = -1

    def given(self):
        """The child: what this process gave, once it has (None when it gave nothing)."""
        if os.read(self.ready, 1) != b"\x01":
            return None
        import pickle

        return pickle.loads(_pread(self.data, os.fstat(self.data).st_size, 0))

    def close(self) -> None:
        self.done_giving()
        for fd in (self.fd, self.ready, self.data):
            os.close(fd)


def run_shared(fn: Callable, jobs: Sequence, weights: Sequence[int], workers: int, *,
               texts_in_files: bool = False, split: Split | None = None) -> Iterator:
    """`fn(job)` for every job, in order, as an iterator: one at a time in this process when one
    process is used; else shared out by weight between this process and `workers - 1` forked ones.
    This process takes the lightest share, and a result of its own is given as soon as every
    result before it is: what comes first can be written while the other shares still run.
    `texts_in_files`: the ASCII text that leads a child's tuple result comes back as a FileText,
    to be written out where the child left it (valid until the iterator ends). `split`: the
    children's jobs may leave their tails to this process (Split)."""
    reap_all()
    workers = min(workers, len(jobs), MAX_WORKERS)
    if workers <= 1 or not can_fork():
        return (fn(job) for job in jobs)
    shares = sorted(share(weights, workers), key=lambda s: sum(weights[i] for i in s))
    return _forked(fn, jobs, shares[0], shares[1:], texts_in_files, split)


def _forked(fn: Callable, jobs: Sequence, mine: list[int], theirs: list[list[int]], texts_in_files: bool,
            split: Split | None) -> Iterator:
    claims = {}
    if split is not None:
        for j in sorted(j for indices in theirs for j in indices if split.has_tail(jobs[j]))[:MAX_CLAIMS]:
            claims[j] = Claim()
    children = [_start(fn, jobs, indices, split, claims) for indices in theirs]
    if split is not None and split.prepare is not None:
        for j, claim in claims.items():  # first, so that the child has it when it asks
            try:
                claim.give(split.prepare(jobs[j]))
            except Exception:  # noqa: BLE001 - the child does that work itself
                claim.done_giving()
    owner = {i: k for k, indices in enumerate(theirs) for i in indices}
    unread = set(range(len(children)))
    kept: list[int] = []  # the files FileTexts point into, closed when the iterator ends
    todo = list(reversed(mine))  # this process's jobs, next one last
    done: dict[int, object] = {}
    tails: dict[int, object] = {}  # job -> the result of its tail, done here
    try:
        for i in range(len(jobs)):
            if i in owner:
                while todo:  # a child's result is next: first finish this process's share while it runs
                    j = todo.pop()
                    done[j] = fn(jobs[j])
                for j in sorted(claims):  # then the children's tails still there to take, while they work
                    if claims[j].take():
                        tails[j] = split.tail(jobs[j])
                    claims.pop(j).close()
                if (k := owner[i]) in unread:
                    unread.discard(k)
                    results = _receive(*children[k][1:], kept if texts_in_files else None)
                    if results is None:  # the child failed: its share is run here
                        results = {j: fn(jobs[j]) for j in theirs[k]}
                    elif split is not None:
                        results = {j: split.join(jobs[j], r, tails[j]) if j in tails else r for j, r in results.items()}
                    done.update(results)
            elif todo and todo[-1] == i:
                done[todo.pop()] = fn(jobs[i])
            yield done.pop(i)
    finally:
        for claim in claims.values():
            claim.close()
        for k in unread:  # this process failed: a child about to say it is done gets EPIPE and exits
            for fd in children[k][1:]:
                os.close(fd)
        for fd in kept:
            os.close(fd)
        for k, (pid, _, _) in enumerate(children):
            if k in unread:  # told to stop (EPIPE): waited for, to leave no child behind a failure
                os.waitpid(pid, 0)
            else:
                _reap(pid)


_unreaped: list[int] = []  # children that had said they were done but not yet exited


def _reap(pid: int) -> None:
    """Reap a child that is done, or leave it to be reaped later (`reap_all`: at the next run, or when
    this process exits normally; a `compile-viz` command leaves by os._exit and the child is
    reaped by the system): a child's exit, unmapping a parse of 100 MB or more, takes several ms
    that this process spends on its last writes instead of waiting."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
    if not done:
        if not _unreaped:  # registered again after each reap_all: it unregisters itself
            import atexit

            atexit.register(reap_all)
        _unreaped.append(pid)


def reap_all() -> None:
    """Wait for the children left by `_reap` (long-lived callers: tests, the app)."""
    if _unreaped:
        import atexit

        atexit.unregister(reap_all)
    while _unreaped:
        try:
            os.waitpid(_unreaped.pop(), 0)
        except ChildProcessError:
            pass


def _start(fn: Callable, jobs: Sequence, indices: list[int], split: Split | None = None,
           claims: dict | None = None) -> tuple[int, int, int]:
    """Fork a child that runs `fn` (or `split.child`, with each job's claim) on the jobs at
    `indices`, writes {index: result} into an in-memory file, then one byte into a pipe; return
    its pid, the pipe's reading end and the file. (Through a pipe, 2 MB of results took ~5 ms of
    chunks handed over one by one.)"""
    data_fd = os.memfd_create("compile-viz-results", os.MFD_CLOEXEC)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return pid, read_fd, data_fd
    code = 1
    try:  # the child: never returns into the caller's code
        os.close(read_fd)
        for claim in (claims or {}).values():  # the parent's ends: the child sees their end if it gives nothing
            claim.done_giving()
        _write_all(data_fd, _pack({i: split.child(jobs[i], claims[i]) if i in claims else fn(jobs[i])
                                   for i in indices}))
        os.write(write_fd, DONE)  # read at once: the parent need not wait for this process to end
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent runs this share itself
        pass
    finally:
        os._exit(code)


DONE = b"\x01"


def _receive(done_fd: int, data_fd: int, kept: list[int] | None = None) -> dict | None:
    """A child's results, or None when it failed (it ended without saying it was done, or what
    it wrote cannot be read back). With `kept`, its ASCII texts stay in its file as FileTexts,
    and the file is added to `kept`, to be closed by the caller."""
    keep = False
    try:
        if os.read(done_fd, 1) != DONE:
            return None
        size = os.fstat(data_fd).st_size
        if kept is not None:
            results = _unpack_header(_pread(data_fd, 8 + _header_size(data_fd), 0), data_fd, size)
            keep = True
            return results
        return _unpack(_pread(data_fd, size, 0))
    except Exception:  # noqa: BLE001 - a cut message: run the share here
        return None
    finally:
        os.close(done_fd)
        if keep:
            kept.append(data_fd)
        else:
            os.close(data_fd)


def _pread(fd: int, size: int, offset: int) -> bytes:
    """`size` bytes of file `fd` from `offset` (fewer only where the file ends)."""
    chunks = []
    while size > 0 and (chunk := os.pread(fd, size, offset)):
        chunks.append(chunk)
        offset += len(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _header_size(fd: int) -> int:
    return int.from_bytes(_pread(fd, 8, 0), "little")


class FileText:
    """The ASCII text of a child's result where the child wrote it, in its in-memory file: written
    to the output by the kernel (`write_to`, os.sendfile) instead of being read back, decoded here,
    and encoded again on the way out (gpt2_deep's backward: 6.6 MB, ~10 ms of this process's time
    after the child is done). `str()` reads it."""

    __slots__ = ("fd", "start", "size")

    def __init__(self, fd: int, start: int, size: int) -> None:
        self.fd, self.start, self.size = fd, start, size

    def __str__(self) -> str:
        return _pread(self.fd, self.size, self.start).decode("ascii")

    def write_to(self, out) -> None:
        """Write the text to the text stream `out`: through its file when it has one and writes
        ASCII as itself, else as a str."""
        try:
            fileno = out.fileno()
            plain = codecs.lookup(out.encoding).name in ASCII_AS_ITSELF
        except (AttributeError, OSError, ValueError, TypeError, LookupError):
            fileno, plain = -1, False
        offset, end = self.start, self.start + self.size
        if plain:
            out.flush()
            try:
                while offset < end and (sent := os.sendfile(fileno, self.fd, offset, end - offset)):
                    offset += sent
            except OSError as exc:  # a file sendfile cannot write to: written below
                if offset > self.start or isinstance(exc, BrokenPipeError):
                    raise
        if offset < end:
            out.write(_pread(self.fd, end - offset, offset).decode("ascii"))


ASCII_AS_ITSELF = frozenset({"utf-8", "ascii", "iso8859-1"})  # codecs.lookup names


# How results travel. A text that leads a tuple result (a JSON document and what goes with it) is
# written as its own UTF-8 bytes, copied once; everything else goes in a header, through marshal
# where marshal can write it (texts, numbers, tuples, dicts; no module to load), else pickle.
# (marshal took 1-3 ms on the 2 MB document of one graph in a fresh child, a raw copy ~0.1 ms.)
# The file holds: the header's length (8 bytes), "M" or "P", the header, then the texts in order.
# Each header entry: (index, the text's length or -1, the rest of the result, whether the text is ASCII).
# A leading text may be a Parts, the strs a text is made of: each part encoded, none joined.
def _pack(results: dict) -> list[bytes]:
    header, texts = [], []
    for i, result in results.items():
        lead = result[0] if type(result) is tuple and result else None
        if type(lead) is str:
            texts.append(lead.encode("utf-8", "surrogatepass"))
            header.append((i, len(texts[-1]), result[1:], lead.isascii()))
        elif type(lead) is Parts:
            encoded = lead.encoded()
            texts += encoded
            header.append((i, sum(map(len, encoded)), result[1:], lead.isascii()))
        else:
            header.append((i, -1, result, False))
    try:
        head = b"M" + marshal.dumps(header)
    except ValueError:
        import pickle

        head = b"P" + pickle.dumps(header, protocol=pickle.HIGHEST_PROTOCOL)
    return [len(head).to_bytes(8, "little"), head, *texts]


def _write_all(fd: int, chunks: list[bytes]) -> None:
    """Write `chunks` to `fd` in order: by writev, a thousand at a time (a text's parts: 12,000 for a
    48-layer backward), what one leaves unwritten by write."""
    for k in range(0, len(chunks), IOV_MAX):
        batch = chunks[k:k + IOV_MAX]
        written = os.writev(fd, batch)
        for chunk in batch:
            if written >= len(chunk):
                written -= len(chunk)
                continue
            view = memoryview(chunk)[written:]
            written = 0
            while view:
                view = view[os.write(fd, view):]


IOV_MAX = 1024  # Linux's limit on writev's buffers


class Parts:
    """A text as the strs it was made of (a graph's document: ~12,000 for a 48-layer backward), not
    joined: a forked child encodes each and writes them by writev, and this process writes its
    own the same way, where joining the whole, then encoding it, made two fresh copies of 6.6 MB
    (~2,200 page faults, ~5 ms of the child before it handed its text over). `str()` joins it."""

    __slots__ = ("parts",)

    def __init__(self, parts: list) -> None:
        # strs, and bytes for parts already encoded, always ASCII (parse_json.graph_parts(encoded=
        # True): a section's strs encoded and freed as soon as it is made, not all held at once
        # beside their bytes; ASCII, so that isascii need not read 6.6 MB of bytes again)
        self.parts = parts

    def __str__(self) -> str:
        return "".join([p if type(p) is str else p.decode("ascii") for p in self.parts])

    def isascii(self) -> bool:
        return all(type(p) is bytes or p.isascii() for p in self.parts)

    def encoded(self) -> list[bytes]:
        return [p if type(p) is bytes else p.encode("utf-8", "surrogatepass") for p in self.parts]

    def write_to(self, out) -> None:
        """Write the text to the text stream `out`: through its file when it has one and the text
        is ASCII, written as itself (a document's text always is: the encoder escapes the rest),
        else as a str."""
        try:
            fileno = out.fileno()
            plain = codecs.lookup(out.encoding).name in ASCII_AS_ITSELF
        except (AttributeError, OSError, ValueError, TypeError, LookupError):
            fileno, plain = -1, False
        if plain and self.isascii():
            out.flush()
            _write_all(fileno, self.encoded())
        else:
            out.write(str(self))


def _unpack(data: bytes) -> dict:
    results = {}
    for i, length, rest, _, at in _entries(data):
        results[i] = rest if length < 0 else (data[at:at + length].decode("utf-8", "surrogatepass"), *rest)
    return results


def _unpack_header(head: bytes, fd: int, size: int) -> dict:
    """`_unpack` of the file `fd` of `size` bytes from its first bytes, the header (`head`): each
    ASCII text a FileText, any other read and decoded."""
    results = {}
    for i, length, rest, is_ascii, at in _entries(head):
        if length < 0:
            results[i] = rest
            continue
        if at + length > size:
            raise ValueError("cut short")
        text = FileText(fd, at, length) if is_ascii else _pread(fd, length, at).decode("utf-8", "surrogatepass")
        results[i] = (text, *rest)
    return results


def _entries(data: bytes):
    """(index, text length or -1, the rest of the result, whether the text is ASCII, where the
    text starts) of each result of a packed file whose first bytes, its header at least, are `data`."""
    size = int.from_bytes(data[:8], "little")
    head = memoryview(data)[8:8 + size]
    if head[:1] == b"M":
        header = marshal.loads(head[1:])
    else:
        import pickle

        header = pickle.loads(head[1:])
    at = 8 + size
    for i, length, rest, is_ascii in header:
        yield i, length, rest, is_ascii, at
        if length >= 0:
            at += length
