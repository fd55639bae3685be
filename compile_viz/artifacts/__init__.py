"""Artifact parsers: text in, frozen dataclasses out. Standard library only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from compile_viz.artifacts.discover import (
    ArtifactReader,
    DiscoveryError,
    find_files,
    find_graphs,
    find_profiles,
    is_profile,
    member_path,
    read_graph_breaks,
)
from compile_viz.artifacts.gc_pause import without_gc
from compile_viz.artifacts.jobs import GraphJob, run_here
from compile_viz.artifacts.kinds import EXPECTED, PARSED, RUN_ARTIFACTS
from compile_viz.artifacts.model import DebugParse, GraphFolder, GraphParse, ParseWarning

__all__ = ["DiscoveryError", "parse_path", "planned", "parse_graph", "DebugParse", "GraphParse", "GraphJob"]

# file name -> (GraphParse field, parser), from the artifact table (kinds.py)
PARSERS = {a.file: (a.name, a.parser) for a in PARSED}


def parse_graph(reader: ArtifactReader, folder: GraphFolder, extra: dict | None = None) -> GraphParse:
    """Parse every artifact of one graph folder; missing or unreadable files become warnings.
    `extra`: GraphParse fields that come from the run rather than the folder (fusion decisions,
    kernel stacks)."""
    return parse_graph_files(folder, _FolderFiles(reader, folder), extra)


class _FolderFiles:
    """A graph folder's files by name (`get`), each read when a parser asks for it and not kept: a
    file's bytes are freed, their memory reused, before the next is read (a 48-layer backward's
    7.7 MB: ~900 fresh pages fewer), and a file no parser reads (fx_graph_runnable.py) is not read."""

    __slots__ = ("reader", "folder")

    def __init__(self, reader: ArtifactReader, folder: GraphFolder) -> None:
        self.reader, self.folder = reader, folder

    def get(self, name: str) -> bytes | None:
        return self.reader.read(self.folder.location, name) if name in self.folder.files else None


@without_gc
def parse_graph_files(folder: GraphFolder, files, extra: dict | None = None) -> GraphParse:
    """Parse one graph's artifacts given as bytes (`files.get(name)`; None: could not be read)."""
    fields: dict[str, object] = {}
    warnings: list[ParseWarning] = []
    for name, (field, parser) in PARSERS.items():
        display = f"{folder.name}/{name}"
        if name not in folder.files:
            if name in EXPECTED and not any(PARSERS.get(f, ("",))[0] == field for f in folder.files):
                warnings.append(ParseWarning(display, 0, "missing: views that need it will be partial"))
            continue
        data = files.get(name)
        if data is None:
            warnings.append(ParseWarning(display, 0, "could not be read"))
            continue
        result = parser(data, path=display)
        fields[field] = result
        warnings.extend(result.warnings)
    return GraphParse(
        folder=folder,
        aot_graph=fields.get("aot_graph"),
        post_grad_graph=fields.get("post_grad_graph"),
        pre_fusion=fields.get("pre_fusion"),
        post_fusion=fields.get("post_fusion"),
        output_code=fields.get("output_code"),
        provenance=fields.get("provenance"),
        warnings=tuple(warnings),
        **(extra or {}),
    )


def parse_path(path: str, *, lazy_above: int | None = None) -> DebugParse:
    """Parse every graph under `path` (a folder at any level, a zip, or a TORCH_TRACE log).

    `lazy_above`: a trace whose graph payloads weigh more bytes than this has its graphs parsed
    when `graph(id)` asks for each (trace/graphs.lazy_trace_parse), not now.
    Raises DiscoveryError (one line) when the path is missing or holds no debug run.
    """
    with planned(path) as (run, jobs):
        if lazy_above is None:
            return run_here(run, jobs)
        from compile_viz.artifacts.trace.graphs import parsed_now_or_later

        return parsed_now_or_later(run, jobs, lazy_above)


@contextmanager
def planned(path: str, *, map_logs: bool = False) -> Iterator[tuple[DebugParse, tuple[GraphJob, ...]]]:
    """`parse_path(path)` in two parts: what belongs to the whole run (a DebugParse with no
    graphs yet: graph breaks, run-wide warnings) and one GraphJob per graph, in order, whose
    GraphParses go in its `graphs`. The jobs read their files until the block ends.

    Raises DiscoveryError (one line) when the path is missing or holds no debug run.
    """
    import os

    if not os.path.exists(path):
        raise DiscoveryError(f"no such file or folder: {path}")
    from compile_viz.artifacts.trace.discover import is_trace_file, kernel_stack_fields, planned_trace

    if is_trace_file(path):  # a TORCH_TRACE log, plain or gzip
        yield planned_trace(path, map_logs=map_logs)
        return
    if os.path.isfile(path):  # a folder is never a package: zipfile is not imported for one
        from compile_viz.artifacts.package import is_package, planned_package

        if is_package(path):  # an AOTInductor .pt2, read as a zip
            yield planned_package(path)
            return
    reader = ArtifactReader(path)
    try:
        folders, runs = find_graphs(reader)
        if not folders and (trace := _trace_or_none(path, map_logs)) is not None:
            yield trace  # a folder or zip with TORCH_TRACE logs and no debug folder
            return
        if not folders:
            from compile_viz.artifacts.package import package_in, planned_package

            if (package := package_in(reader)) is not None:
                yield planned_package(*package)  # an imported .pt2: a run holding package/*.pt2 only
                return
        if not folders:
            raise DiscoveryError(
                f"no Inductor debug artifacts under {path}: point at a torch_compile_debug folder "
                "(made with TORCH_COMPILE_DEBUG=1), one of its run_*/graph folders, or a zip of one"
            )
        breaks = read_graph_breaks(reader, runs)
        extra, run_warnings = run_artifact_fields(reader, folders)
        stacks, stack_warnings = kernel_stack_fields(reader, folders)
        for location, fields in stacks.items():
            extra.setdefault(location, {}).update(fields)
        jobs = tuple(GraphJob(parse_graph, (reader, f, extra.get(f.location)), reader.size(f.location, f.files))
                     for f in folders)
        profiles = tuple(member_path(d, name) for d, files in sorted(reader.dirs.items()) for name in files
                         if is_profile(d, name))
        yield DebugParse(root=path, graphs=(), graph_breaks=tuple(breaks), warnings=run_warnings + stack_warnings,
                         profiles=profiles), jobs
    finally:
        reader.close()


def preload(jobs: tuple[GraphJob, ...]) -> None:
    """Import now the parsers that running `jobs` would import on first use (the scheduler IR's),
    so that processes forked to run them share this process's copy instead of each importing it."""
    if any(job.fn is parse_graph and any(f.startswith("ir_") for f in job.args[1].files) for job in jobs):
        import compile_viz.artifacts.scheduler_ir  # noqa: F401


def run_artifact_fields(reader: ArtifactReader, folders: list[GraphFolder]) -> tuple[dict[str, dict[str, object]], tuple]:
    """What the run-wide artifacts (kinds.RUN_ARTIFACTS: the fusion log) say of each graph folder,
    as {folder location: {GraphParse field: value}}, and those files' warnings. A file speaks of the
    graph folders below its own folder (a recorded job keeps one fusion log per process, beside
    that process's graphs), or of every graph folder when none is below it (a capture's logs/)."""
    warnings: list[ParseWarning] = []
    fields: dict[str, dict[str, object]] = {}
    for kind in RUN_ARTIFACTS:
        for rel_dir, data in find_files(reader, kind.file):
            log = kind.parser(data, path=member_path(rel_dir, kind.file))
            warnings.extend(log.warnings)
            scope = [f for f in folders if is_below(f.location, rel_dir)] or folders
            if kind.name != "fusion_decisions":  # the same for every graph of its scope
                for f in scope:
                    fields.setdefault(f.location, {})[kind.name] = log
                continue
            from compile_viz.artifacts.fusion_log import decisions_by_graph  # a run with a fusion log only

            by_name = decisions_by_graph(log, [f.name for f in scope])
            for f in scope:
                if f.name in by_name:
                    fields.setdefault(f.location, {})[kind.name] = by_name[f.name]
    return fields, tuple(warnings)


def profile_files(path: str) -> list[tuple[str, bytes]]:
    """(path in the run, bytes) of the torch.profiler traces in a run folder, zip or debug tree."""
    reader = ArtifactReader(path)
    try:
        return find_profiles(reader)
    finally:
        reader.close()


def read_profiles(path: str) -> list:
    """The torch.profiler traces of a run, read (artifacts.profile.Profile); [] when it has none."""
    files = profile_files(path)
    if not files:
        return []
    from compile_viz.artifacts.profile import parse_profile  # a run with a profile only

    return [parse_profile(data, path=rel) for rel, data in files]


def is_below(location: str, folder: str) -> bool:
    """Whether the folder `location` lies inside `folder` (both relative to the reader's root;
    everything lies inside the root itself)."""
    return folder in ("", ".") or location.startswith(folder.rstrip("/") + "/")


def _trace_or_none(path: str, map_logs: bool = False):
    from compile_viz.artifacts.trace.discover import planned_trace

    try:
        return planned_trace(path, map_logs=map_logs)
    except DiscoveryError:
        return None
