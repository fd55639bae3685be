"""Find compiled graphs in a debug tree given at any level, or in a .zip of one.

Accepted: a `torch_compile_debug` root, a `run_*` folder, a `torchinductor` folder, one graph
folder (`model__0_forward_1.0`), any folder above those (a run store's run), or a `.zip` of any.
Reading a zip never extracts it: members are read into memory, with a size cap per member.
"""

from __future__ import annotations

import os
import re

from compile_viz.artifacts.kinds import FILES
from compile_viz.artifacts.model import GraphBreak, GraphFolder
from compile_viz.artifacts.versions import GRAPH_PARENTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import zipfile
    from pathlib import Path

DYNAMO_LOG = "debug.log"
AOT_OUTPUT_CODE = "output_code.cpp"
GRAPH_KIND = re.compile(r"_(inference|forward|backward)_")
NUMBERS = re.compile(r"\d+")
MAX_MEMBER_BYTES = 512 * 1024 * 1024
SKIP_DIRS = {"inductor_cache", "__pycache__", ".git", "triton", "aotautograd"}


class DiscoveryError(Exception):
    """The path cannot be used at all; the message is one line a user can act on."""


def member_path(rel_dir: str, name: str) -> str:
    """The POSIX path of file `name` in folder `rel_dir` of a reader ("" or "." being its root)."""
    return name if rel_dir in ("", ".") else f"{rel_dir}/{name}"


class ArtifactReader:
    """Reads files from a folder tree or a zip through one interface: paths are POSIX, relative."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.is_zip = os.path.isfile(root)
        self._zip: zipfile.ZipFile | None = None
        self._pid = os.getpid()  # a forked process reopens the zip: the two would share one file offset
        self.dirs: dict[str, list[str]] = {}
        if self.is_zip:
            import zipfile  # here: reading a folder never loads it (~6 ms of a command)

            try:
                self._zip = zipfile.ZipFile(root)
                infos = self._zip.infolist()
            except (zipfile.BadZipFile, OSError) as exc:
                raise DiscoveryError(f"cannot read {root} as a zip ({exc}); export the run again or unzip it first") from None
            self.sizes = {}
            for info in infos:
                if info.is_dir():
                    continue
                parts = _posix_parts(info.filename)
                if info.filename.startswith("/") or ".." in parts or not parts:
                    continue
                self.dirs.setdefault("/".join(parts[:-1]) or ".", []).append(parts[-1])
                self.sizes[info.filename] = info.file_size
        else:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
                self.dirs[rel] = sorted(filenames)

    def read(self, rel_dir: str, name: str) -> bytes | None:
        """Return the file's bytes, or None if it is absent or unreadable."""
        rel = member_path(rel_dir, name)
        try:
            if self._zip is not None:
                if self.sizes.get(rel, 0) > MAX_MEMBER_BYTES:
                    return None
                if self._pid != os.getpid():
                    self._zip, self._pid = type(self._zip)(self.root), os.getpid()
                return self._zip.read(rel)
            with open(os.path.join(self.root, *rel.split("/")), "rb") as fh:
                return fh.read()
        except Exception:  # absent, unreadable, or a damaged member (BadZipFile, zlib.error, EOFError, ...)
            return None

    def size(self, rel_dir: str, names: tuple[str, ...]) -> int:
        """The bytes of the named files in `rel_dir` (0 for one that cannot be read)."""
        total = 0
        for name in names:
            rel = member_path(rel_dir, name)
            if self._zip is not None:
                total += self.sizes.get(rel, 0)
                continue
            try:
                total += os.path.getsize(os.path.join(self.root, *rel.split("/")))
            except OSError:
                pass
        return total

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


def _natural(text: str) -> tuple:
    """Sort key: the numbers in the name by value (`model__0_forward_1.0` before
    `model__0_backward_3.1`, `model__2` before `model__10`), then the name. The numbers are a
    tuple of their own, so a key never compares a number with text."""
    return tuple(int(x) for x in NUMBERS.findall(text)), text


def graph_kind(name: str) -> str:
    m = GRAPH_KIND.search(name)
    return m.group(1) if m else "unknown"


def find_graphs(reader: ArtifactReader) -> tuple[list[GraphFolder], list[str]]:
    """Return the graph folders and the run folders (those with a torchdynamo/debug.log) found."""
    graph_dirs = [d for d, files in reader.dirs.items() if any(f in FILES for f in files)]
    runs: dict[str, None] = {}
    for d in graph_dirs:
        run = _run_of(d)
        if run is not None:
            runs[run] = None
    for d, files in reader.dirs.items():
        if d.endswith("torchdynamo") and DYNAMO_LOG in files:
            runs[_parent(d)] = None
    many_runs = len(runs) > 1
    graphs = []
    for d in sorted(graph_dirs, key=lambda d: (_run_of(d) or "", _natural(_name(d)))):
        name = _name(d) if d not in ("", ".") else _root_name(reader)
        run = _run_of(d)
        gid = f"{_name(run)}/{name}" if many_runs and run else name
        files = tuple(f for f in FILES if f in reader.dirs[d])
        kind = graph_kind(name)
        if kind == "unknown" and AOT_OUTPUT_CODE in files:  # AOTInductor's `model___0.0`: the inference graph
            kind = "inference"
        graphs.append(GraphFolder(gid, name, kind, d, files))
    return graphs, sorted(runs)


PROFILE_SUFFIX = ".pt.trace.json"  # what tensorboard_trace_handler writes, and record/capture --profile


def find_profiles(reader: ArtifactReader) -> list[tuple[str, bytes]]:
    """(path in the tree, bytes) of every torch.profiler trace: a `*.pt.trace.json` anywhere, or a
    `.json` in a folder called `profile`."""
    out = []
    for d, files in sorted(reader.dirs.items()):
        for name in sorted(files):
            if is_profile(d, name) and (data := reader.read(d, name)) is not None:
                out.append((member_path(d, name), data))
    return out


def is_profile(rel_dir: str, name: str) -> bool:
    """Whether a file is a torch.profiler trace, by its name and folder."""
    return name.endswith(PROFILE_SUFFIX) or (name.endswith(".json") and rel_dir.rsplit("/", 1)[-1] == "profile")


def find_files(reader: ArtifactReader, name: str) -> list[tuple[str, bytes]]:
    """(folder, bytes) of every readable file called `name` in the tree (a run's logs/fusion.log)."""
    out = []
    for d, files in sorted(reader.dirs.items()):
        if name in files and (data := reader.read(d, name)) is not None:
            out.append((d, data))
    return out


def _root_name(reader: ArtifactReader) -> str:
    root = os.path.basename(os.path.normpath(reader.root))
    return root[: -len(".zip")] if reader.is_zip and root.endswith(".zip") else root


# Paths in a tree are POSIX and relative, split here by hand as PurePosixPath splits them (empty and
# "." parts dropped): pathlib costs a command 3 ms of imports (urllib.parse, ipaddress)
def _posix_parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p and p != "."]


def _name(d: str) -> str:
    """PurePosixPath(d).name."""
    parts = _posix_parts(d)
    return parts[-1] if parts else ""


def _parent_of(d: str) -> str:
    """str(PurePosixPath(d).parent)."""
    parts, root = _posix_parts(d), "/" if d.startswith("/") else ""
    return root + "/".join(parts[:-1]) or "."


def _parent(d: str) -> str:
    parent = _parent_of(d)
    return "" if parent == "." else parent


def _run_of(graph_dir: str) -> str | None:
    """The run folder above `<run>/torchinductor/<graph>` (torch 2.0: `aot_torchinductor`), or None
    if the layout is different."""
    parent = _parent_of(graph_dir)
    if _name(parent) in GRAPH_PARENTS:
        return _parent(parent)
    return None


def read_graph_breaks(reader: ArtifactReader, runs: list[str]) -> list[GraphBreak]:
    """The graph breaks each run's torchdynamo/debug.log reports, each once."""
    breaks: list[GraphBreak] = []
    for run in runs:
        rel = f"{run}/torchdynamo" if run else "torchdynamo"
        data = reader.read(rel, DYNAMO_LOG)
        if data is None:
            continue
        for gb in parse_dynamo_log(data.decode("utf-8", errors="replace")):
            if gb not in breaks:
                breaks.append(gb)
    return breaks


GB_FILE = re.compile(r'^\s*File "(.+?)", line (\d+), in (.+)$')
GB_FROM_USER = re.compile(r"Graph break:? from user code", re.I)
GB_AT = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$", re.I)
GB_REASON = re.compile(r"^Graph Break Reason: (.*)$")
GB_START = re.compile(r"graph break", re.I)
LOG_PREFIX = re.compile(r"^[VIWE]\d{4} [\d:.]+ \d+ [^\]]+\] (?:\[[^\]]*\] )?")


def parse_dynamo_log(text: str) -> list[GraphBreak]:
    """Return the graph breaks a torchdynamo debug.log (or a captured stderr) reports.

    Two formats exist: torch 2.11+ writes "Graph break in user code at FILE:LINE" then
    "Graph Break Reason: ..."; older versions write the reason, then "Graph break: from user
    code at:" and the frame. A message in both formats is reported once.
    """
    lines = [LOG_PREFIX.sub("", line) for line in text.splitlines()]
    breaks: list[GraphBreak] = []
    seen: set[tuple[str, int]] = set()
    for gb in _new_format(lines) + _old_format(lines):
        if (gb.file, gb.line) not in seen:
            seen.add((gb.file, gb.line))
            breaks.append(gb)
    return breaks


def _new_format(lines: list[str]) -> list[GraphBreak]:
    out = []
    for i, line in enumerate(lines):
        m = GB_AT.match(line.strip())
        if not m:
            continue
        file, lineno = m.group(1), int(m.group(2))
        reason_parts: list[str] = []
        code = ""
        j = i + 1
        while j < len(lines) and not GB_AT.match(lines[j].strip()):
            text = lines[j].strip()
            r = GB_REASON.match(text)
            if r:
                reason_parts.append(r.group(1))
            elif text.startswith("User code traceback"):
                break
            elif text and not reason_parts[1:] and not text.startswith(("Hint:", "Developer", "For more")):
                reason_parts.append(text)
            j += 1
        for k in range(j, min(j + 200, len(lines))):  # the traceback's frame at FILE:LINE has the code
            f = GB_FILE.match(lines[k])
            if f and f.group(1) == file and int(f.group(2)) == lineno and k + 1 < len(lines):
                code = lines[k + 1].strip()
                break
        summary = reason_parts[1] if len(reason_parts) > 1 else (reason_parts[0] if reason_parts else "graph break")
        out.append(GraphBreak(summary, file, lineno, code))
    return out


def _old_format(lines: list[str]) -> list[GraphBreak]:
    breaks: list[GraphBreak] = []
    reason: list[str] = []
    waiting_for_frame = False
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if GB_AT.match(line.strip()):
            reason, waiting_for_frame = [], False
            continue
        if GB_FROM_USER.search(line):
            waiting_for_frame = True
            continue
        if waiting_for_frame:
            m = GB_FILE.match(line)
            if m:
                code = lines[i].strip() if i < len(lines) else ""
                text_reason = " ".join(r.strip() for r in reason if r.strip()) or "graph break"
                breaks.append(GraphBreak(text_reason, m.group(1), int(m.group(2)), code))
                reason, waiting_for_frame = [], False
            continue
        if GB_START.search(line) and not reason:
            reason = [line]
        elif reason and line.strip():
            reason.append(line)
    return breaks


def inductor_graphs(debug_dir: Path) -> list[str]:
    """Return the Inductor graph folders (relative to debug/) that hold an output_code.py (or, ahead of
    time, AOTInductor's output_code.cpp)."""
    found = sorted({p.parent for name in ("output_code.py", "output_code.cpp")
                    for p in debug_dir.glob(f"**/torchinductor/*/{name}")})
    return [p.relative_to(debug_dir).as_posix() for p in found]
