"""Artifact parsers: text in, frozen dataclasses out. Standard library only."""

from __future__ import annotations

from dataclasses import replace

from compile_viz.artifacts.discover import (
    ArtifactReader,
    DiscoveryError,
    find_files,
    find_graphs,
    read_graph_breaks,
)
from compile_viz.artifacts.fusion_log import decisions_by_graph
from compile_viz.artifacts.gc_pause import without_gc
from compile_viz.artifacts.kinds import EXPECTED, PARSED, RUN_ARTIFACTS
from compile_viz.artifacts.model import DebugParse, GraphFolder, GraphParse, ParseWarning

__all__ = ["DiscoveryError", "parse_path", "parse_graph", "DebugParse", "GraphParse"]

# file name -> (GraphParse field, parser), from the artifact table (kinds.py)
PARSERS = {a.file: (a.name, a.parser) for a in PARSED}


def parse_graph(reader: ArtifactReader, folder: GraphFolder) -> GraphParse:
    """Parse every artifact of one graph folder; missing or unreadable files become warnings."""
    return parse_graph_files(folder, {name: reader.read(folder.location, name) for name in folder.files})


@without_gc
def parse_graph_files(folder: GraphFolder, files: dict[str, bytes | None]) -> GraphParse:
    """Parse one graph's artifacts given as bytes (None: could not be read)."""
    fields: dict[str, object] = {}
    warnings: list[ParseWarning] = []
    for name, (field, parser) in PARSERS.items():
        display = f"{folder.name}/{name}"
        if name not in folder.files:
            if name in EXPECTED:
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
    )


def parse_path(path: str) -> DebugParse:
    """Parse every graph under `path` (a folder at any level, or a zip).

    Raises DiscoveryError (one line) when the path is missing or holds no debug run.
    """
    import os

    if not os.path.exists(path):
        raise DiscoveryError(f"no such file or folder: {path}")
    from compile_viz.artifacts.trace_discover import attach_kernel_stacks, is_trace_file, parse_trace_path

    if is_trace_file(path):  # a TORCH_TRACE log, plain or gzip
        return parse_trace_path(path)
    reader = ArtifactReader(path)
    try:
        folders, runs = find_graphs(reader)
        if not folders and (trace := _trace_or_none(path)) is not None:
            return trace  # a folder or zip with TORCH_TRACE logs and no debug folder
        if not folders:
            raise DiscoveryError(
                f"no Inductor debug artifacts under {path}: point at a torch_compile_debug folder "
                "(made with TORCH_COMPILE_DEBUG=1), one of its run_*/graph folders, or a zip of one"
            )
        graphs = tuple(parse_graph(reader, f) for f in folders)
        breaks = read_graph_breaks(reader, runs)
        graphs, run_warnings = attach_run_artifacts(reader, graphs)
        graphs, stack_warnings = attach_kernel_stacks(reader, graphs)
    finally:
        reader.close()
    return DebugParse(root=path, graphs=graphs, graph_breaks=tuple(breaks), warnings=run_warnings + stack_warnings)


def attach_run_artifacts(reader: ArtifactReader, graphs: tuple[GraphParse, ...]) -> tuple[tuple[GraphParse, ...], tuple]:
    """The graphs with what the run-wide artifacts (kinds.RUN_ARTIFACTS: the fusion log) say of
    each, and those files' warnings."""
    warnings: list[ParseWarning] = []
    fields: dict[str, dict[str, object]] = {}  # graph folder name -> {field: value}
    for kind in RUN_ARTIFACTS:
        for rel_dir, data in find_files(reader, kind.file):
            log = kind.parser(data, path=f"{rel_dir}/{kind.file}" if rel_dir not in ("", ".") else kind.file)
            warnings.extend(log.warnings)
            for name, value in decisions_by_graph(log, [g.folder.name for g in graphs]).items():
                fields.setdefault(name, {})[kind.name] = value
    if not fields:
        return graphs, tuple(warnings)
    return tuple(replace(g, **fields[g.folder.name]) if g.folder.name in fields else g for g in graphs), tuple(warnings)


def _trace_or_none(path: str):
    from compile_viz.artifacts.trace_discover import parse_trace_path

    try:
        return parse_trace_path(path)
    except DiscoveryError:
        return None
