"""Find TORCH_TRACE logs in a file, a folder (one log per rank) or a zip, and read them.

A log is known by its first line, not its name: a glog prefix followed by a JSON object
(`V1123 04:51:28.049000 1614 torch/_dynamo/utils.py:2126] {"chromium_event": ...`), so that
`torchdynamo/debug.log` and other logs beside it are left alone. Plain or gzip.
"""

from __future__ import annotations

import os
import re
import zlib

from compile_viz.artifacts.discover import ArtifactReader, DiscoveryError, member_path
from compile_viz.artifacts.gc_pause import without_gc
from compile_viz.artifacts.jobs import GraphJob
from compile_viz.artifacts.text import GLOG_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compile_viz.artifacts.model import GraphFolder, KernelStacks
    from compile_viz.artifacts.trace.index import LogBytes
    from compile_viz.artifacts.trace.model import TraceParse

SUFFIXES = (".log", ".txt", ".gz", ".trace")
SNIFF_BYTES = 4096
RUN_TRACE_DIR = "trace"  # a run folder the capture wrote holds debug/ and trace/ side by side
AOT_ID_IN_FOLDER = re.compile(r"__(\d+_(?:forward|backward|inference))_")  # model__0_forward_1.0


def looks_like_trace(head: bytes) -> bool:
    """Whether the first bytes of a file are a TORCH_TRACE entry."""
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, SNIFF_BYTES)
        except zlib.error:
            return False
    for line in head.decode("utf-8", errors="replace").splitlines()[:3]:
        if line.strip():
            m = GLOG_PREFIX.match(line)
            return m is not None and line[m.end():].startswith("{")
    return False


def _gunzip(data: bytes) -> bytes | None:
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        import gzip  # only for a gzip log

        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return None


def is_trace_file(path: str) -> bool:
    """Whether `path` is one TORCH_TRACE log (plain or gzip), not a folder or a zip."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as fh:
        return looks_like_trace(fh.read(SNIFF_BYTES))  # a zip's first bytes are never a glog line


def trace_logs(path: str, *, skip_dirs: tuple[str, ...] = (), mapped: bool = False) -> list[tuple[str, LogBytes]]:
    """(display path, bytes) of every TORCH_TRACE log at `path`, sorted by name; [] when none. A big
    plain log on disk comes mapped (index.MappedLog), which every reader takes as it takes bytes;
    with `mapped`, a small plain one too (index.LogMap: for read.parse_trace, which reads either).
    Folders named in `skip_dirs` (at any depth: a run's "debug") are not read."""
    if os.path.isfile(path):
        mapped = _mapped(path, mapped)
        if mapped is not None:
            return [(path, mapped)]
        with open(path, "rb") as fh:
            data = _gunzip(fh.read())
        if data is not None and looks_like_trace(data[:SNIFF_BYTES]):
            return [(path, data)]
        import zipfile  # only for a file that is no log: reading a log or a folder never loads it

        if not zipfile.is_zipfile(path):
            return []
    reader = ArtifactReader(path)
    try:
        return _logs_in(reader, lambda d: not (skip_dirs and any(part in skip_dirs for part in d.split("/"))),
                        mapped)
    finally:
        reader.close()


def _mapped(path: str, small: bool = False):
    """A big plain log on disk, mapped (trace/index.py), or None: a small one (unless `small`: then
    a LogMap), a gzip one, an empty one or no log."""
    from compile_viz.artifacts.trace.index import LogMap, map_log, wants_map

    big = wants_map(path)
    if not big and not (small and os.path.getsize(path) > 0):
        return None
    mapped = map_log(path, None if big else LogMap)
    if mapped[:2] == b"\x1f\x8b" or not looks_like_trace(mapped[:SNIFF_BYTES]):
        mapped.close()
        return None
    return mapped


def _logs_in(reader: ArtifactReader, wanted, mapped: bool = False) -> list[tuple[str, LogBytes]]:
    """(path in the reader, bytes) of every TORCH_TRACE log in the folders `wanted(folder)` accepts,
    by folder then by name, gzip ones unpacked; `mapped` as for trace_logs."""
    found = []
    for d, names in sorted(reader.dirs.items()):
        if not wanted(d):
            continue
        for name in sorted(names):
            if not name.endswith(SUFFIXES):
                continue
            log = None if reader.is_zip else _mapped(os.path.join(reader.root, *d.split("/"), name), mapped)
            if log is not None:
                found.append((member_path(d, name), log))
                continue
            data = reader.read(d, name)
            data = _gunzip(data) if data is not None else None
            if data is not None and looks_like_trace(data[:SNIFF_BYTES]):
                found.append((member_path(d, name), data))
    return found


def parse_trace_path(path: str, *, lazy_above: int | None = None) -> TraceParse:
    """Parse the TORCH_TRACE logs at `path` (a log, plain or gzip; a folder of per-rank logs; a
    run folder or zip with a `trace/` folder); `lazy_above` as for artifacts.parse_path. Raises
    DiscoveryError (one line) when there is none."""
    from compile_viz.artifacts.trace.graphs import parsed_now_or_later

    return parsed_now_or_later(*planned_trace(path), lazy_above)


@without_gc
def planned_trace(path: str, *, map_logs: bool = False) -> tuple[TraceParse, tuple[GraphJob, ...]]:
    """`parse_trace_path(path)` in two parts, as `artifacts.planned` gives them: the logs read,
    with no graphs parsed yet, and one job per graph. Raises DiscoveryError as parse_trace_path.
    `map_logs`: every plain log mapped, not read (trace_logs' `mapped`), its graph payloads read
    from the mapping by the jobs; for one command's process, which ends before anyone rewrites a
    log (a long-lived app keeps payloads it can read whatever happens to the file)."""
    if not os.path.exists(path):
        raise DiscoveryError(f"no such file or folder: {path}")
    logs = trace_logs(path, mapped=map_logs)  # read.parse_trace walks a mapped log as it walks bytes
    if not logs:
        raise DiscoveryError(
            f"no TORCH_TRACE log under {path}: point at a log written with TORCH_TRACE=DIR, "
            "or at the folder holding one per rank"
        )
    # the trace reader is imported here: reading a debug folder needs only this module's search
    from compile_viz.artifacts.trace.graphs import trace_jobs

    return trace_jobs(path, parse_logs(logs))


def parse_logs(logs: list[tuple[str, LogBytes]]) -> list:
    """The TraceLog of each (name, data) of `trace_logs`, in order. A mapped (big) log is read from
    its cached index when one matches it (trace/index_cache.py), else read in a forked copy of this
    process, one a CPU, where that is safe, and its index kept (_parse_one); either way it is
    unmapped, and its graph payloads are read from its file when asked for. A log alone, or one of
    fewer than the CPUs, is walked by the CPUs left to it (read.parse_trace's `processes`)."""
    from compile_viz.artifacts.forking import cpus, map_forked
    from compile_viz.artifacts.trace.index import MappedLog

    done: dict[int, object] = {}
    if any(isinstance(data, MappedLog) for _, data in logs):  # index_cache (tempfile...): ~2 ms to import
        from compile_viz.artifacts.trace import index_cache

        for i, (name, data) in enumerate(logs):
            if isinstance(data, MappedLog) and (cached := index_cache.load(data.path, name)) is not None:
                done[i] = cached
                data.close()
    todo = [i for i, (_, data) in enumerate(logs) if isinstance(data, MappedLog) and i not in done]
    each = max(1, cpus() // max(len(todo), 1))  # the CPUs left to a log's own walk (read.SPLIT_BYTES)
    done.update(zip(todo, map_forked(_parse_one, [(*logs[i], each) for i in todo], cpus()), strict=True))
    return [done[i] if i in done else _parse_one((*log, 1)) for i, log in enumerate(logs)]


def _parse_one(log: tuple[str, LogBytes, int]):
    from compile_viz.artifacts.trace.aot import with_aot_payloads
    from compile_viz.artifacts.trace.index import MappedLog
    from compile_viz.artifacts.trace.read import parse_trace

    name, data, processes = log
    parsed = with_aot_payloads(parse_trace(data, path=name, processes=processes), data)
    if isinstance(data, MappedLog):  # a big log: unmapped, its index kept for the next time
        data.close()
        from compile_viz.artifacts.trace import index_cache

        index_cache.save(data.path, parsed)
    return parsed


def kernel_stack_fields(reader: ArtifactReader, folders: list[GraphFolder]) -> tuple[dict[str, dict[str, KernelStacks]], tuple]:
    """The per-launch user stacks of the TORCH_TRACE logs beside a debug folder (a run's trace/
    folder) for each graph folder, matched by AOT id, as {folder location: {"kernel_stacks":
    stacks}}, and those logs' warnings. One log speaks of every graph folder; with one log per rank
    (a recorded torchrun job), rank R's log speaks of the graph folders under a `rank_R` folder. A
    graph whose AOT id is not in its log, or is there twice, gets nothing."""
    logs = _logs_in(reader, lambda d: os.path.basename(d) == RUN_TRACE_DIR)
    if not logs:
        return {}, ()
    if len(logs) == 1:
        scopes = [(logs[0], folders)]
    else:
        from compile_viz.artifacts.trace.read import rank_of  # several logs: one per rank

        scopes = []
        for log in logs:
            rank = rank_of(log[0])
            mine = [f for f in folders if rank is not None and f"rank_{rank}" in f.location.split("/")]
            if mine:
                scopes.append((log, mine))
    if not scopes:
        return {}, ()
    # only when a run has its log
    from compile_viz.artifacts.trace.kernel_stacks import parse_kernel_stacks, scan_log

    out, warnings = {}, []
    for (log_name, data), scope in scopes:
        stacks: dict[str, KernelStacks | None] = {}
        for aot_id, line, text in scan_log(data):  # bytes, or a big log mapped: read alike
            parsed = parse_kernel_stacks(text, path=f"{log_name}:{line}")
            warnings.extend(parsed.warnings)
            stacks[aot_id] = None if aot_id in stacks else parsed  # twice: ambiguous
        for folder in scope:
            m = AOT_ID_IN_FOLDER.search(folder.name)
            found = stacks.get(m.group(1)) if m else None
            if found is not None:
                out[folder.location] = {"kernel_stacks": found}
    return out, tuple(warnings)
