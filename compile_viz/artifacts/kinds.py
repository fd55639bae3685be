"""The one table of artifacts: a row per file Inductor writes into a graph folder.

Everything that lists artifacts derives from `ARTIFACTS`: discovery (which files make a folder a
graph folder), the parse (which parser fills which `GraphParse` field), the warnings for missing
files, the UI's labels and the tests. A row's `name` is the artifact's one name in the code and
the UI: the `GraphParse` field, the linking layer's graph key (`AOT`, `POST_GRAD`) and the
Viewer's `view=` value. Adding an artifact is one row here and one parser.
"""

from __future__ import annotations

from collections.abc import Callable

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.fx_graph import parse_fx_graph
from compile_viz.artifacts.output_code import parse_output_code
from compile_viz.artifacts.provenance import parse_provenance


@frozen(slots=True)
class ArtifactKind:
    """One row of the artifact table: a file Inductor writes, its one name, its title and its parser."""

    file: str  # the file name Inductor writes
    name: str  # its one name in the code and the UI (a GraphParse field when parsed)
    title: str  # how the UI calls it
    parser: Callable | None  # parser(data, *, path) -> result with .warnings; None: found, not parsed
    expected: bool  # whether a graph folder without it deserves a warning
    scope: str = "graph"  # "graph": one per graph folder; "run": one per run, split among its graphs


# scheduler_ir is imported on the first scheduler IR file: compiling its patterns takes ~7 ms,
# a tenth of a `compile-viz parse` of a TORCH_TRACE log, which has no such file.
def _pre_fusion(data, *, path):
    from compile_viz.artifacts.scheduler_ir import parse_scheduler_ir

    return parse_scheduler_ir(data, path=path, stage="pre_fusion")


def _post_fusion(data, *, path):
    from compile_viz.artifacts.scheduler_ir import parse_scheduler_ir

    return parse_scheduler_ir(data, path=path, stage="post_fusion")


# aoti_wrapper on the first C++ wrapper: a JIT run (nearly every run) never needs its patterns.
def _aoti_wrapper(data, *, path):
    from compile_viz.artifacts.aoti_wrapper import parse_aoti_wrapper

    return parse_aoti_wrapper(data, path=path)


# fusion_log on the first fusion.log: a run captured without one (older runs, other machines'
# debug folders, TORCH_TRACE logs) never needs its patterns.
def _fusion_log(data, *, path):
    from compile_viz.artifacts.fusion_log import parse_fusion_log

    return parse_fusion_log(data, path=path)


ARTIFACTS = (
    ArtifactKind("fx_graph_readable.py", "aot_graph", "AOT graph", parse_fx_graph, True),
    ArtifactKind("fx_graph_transformed.py", "post_grad_graph", "post-grad graph", parse_fx_graph, True),
    # a repro script: it marks a graph folder, and is never parsed (nor imported, nor run)
    ArtifactKind("fx_graph_runnable.py", "runnable", "repro script", None, False),
    ArtifactKind("ir_pre_fusion.txt", "pre_fusion", "scheduler IR before fusion", _pre_fusion, True),
    ArtifactKind("ir_post_fusion.txt", "post_fusion", "scheduler IR after fusion", _post_fusion, True),
    ArtifactKind("output_code.py", "output_code", "output code", parse_output_code, True),
    # ahead of time (AOTInductor), the output code is the C++ wrapper: a graph folder has one or the other
    ArtifactKind("output_code.cpp", "output_code", "output code (AOTInductor C++ wrapper)", _aoti_wrapper, False),
    # older torch writes no provenance JSON: its absence is normal
    ArtifactKind("inductor_provenance_tracking_node_mappings.json", "provenance", "provenance JSON",
                 parse_provenance, False),
)
# exported_program on the first exported program: a JIT run has none
def _exported_program(data, *, path):
    from compile_viz.artifacts.exported_program import parse_exported_program

    return parse_exported_program(data, path=path)


# Per run, not per graph folder: the fusion log split among the run's graphs by
# fusion_log.decisions_by_graph; the exported program (capture --aoti's export/) given to each graph.
RUN_ARTIFACTS = (
    ArtifactKind("fusion.log", "fusion_decisions", "fusion log", _fusion_log, False, scope="run"),
    ArtifactKind("exported_program.txt", "exported_program", "exported program", _exported_program, False, scope="run"),
)
BY_FILE = {a.file: a for a in ARTIFACTS + RUN_ARTIFACTS}
BY_NAME = {a.name: a for a in reversed(ARTIFACTS + RUN_ARTIFACTS)}  # a name's first row: output_code.py
FILES = tuple(a.file for a in ARTIFACTS)  # what makes a folder a graph folder
PARSED = tuple(a for a in ARTIFACTS if a.parser is not None)
EXPECTED = tuple(a.file for a in ARTIFACTS if a.expected)
FX_GRAPHS = ("aot_graph", "post_grad_graph")  # the two FX graphs, as the Viewer offers them
