"""AOTInductor packages (`.pt2`, what `aoti_compile_and_package` writes): a zip read as data.

Nothing in a package is loaded or executed: its members are read into memory with zipfile, and a
package holding a member outside the archive (an absolute path, `..`, a symlink) is refused whole.
What a package holds for the viewer (torch 2.6+ layout, `<model>/data/aotinductor/<model>/`):
`<hash>.wrapper.cpp` (the C++ wrapper: run_impl launches the kernels; on a GPU the Triton kernels'
source is embedded in it as comments), `<hash>.kernel.cpp` (the C++ kernels of a CPU compile),
`*_metadata.json`, and, with provenance on, `kernel_information.json` (per kernel launch: its
post-grad and pre-grad nodes and stack traces). The shared library, cubins and weights are binary.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path, PurePosixPath

from compile_viz.artifacts.discover import DiscoveryError, member_path
from compile_viz.artifacts.model import DebugParse, GraphFolder, GraphParse, ParseWarning

PACKAGE_SUFFIX = ".pt2"
ARCHIVE_FORMAT = "archive_format"  # a member every .pt2 has at `<model>/archive_format`
WRAPPER_SUFFIX = ".wrapper.cpp"
KERNEL_SUFFIX = ".kernel.cpp"
KERNEL_INFORMATION = "kernel_information.json"
PROGRAMS_DIR = "models"  # `<archive>/models/<model>.json`: the exported program, serialized
EXPORT_KIND = "export"
# what a slim copy keeps: text the viewer reads (the shared library, cubins and weights are binary)
TEXT_SUFFIXES = (".cpp", ".h", ".json", ".txt", ".py")
TEXT_NAMES = ("archive_format", "archive_version", "version", "byteorder", "serialization_id")
MAX_TEXT_BYTES = 64 * 1024 * 1024


def is_package(path: str | Path) -> bool:
    """Whether `path` is an AOTInductor package: a `.pt2` file, or a zip with an archive_format member."""
    p = Path(path)
    if not p.is_file():
        return False
    if p.suffix == PACKAGE_SUFFIX:
        return True
    try:
        with zipfile.ZipFile(p) as zf:
            return any(PurePosixPath(n).name == ARCHIVE_FORMAT for n in zf.namelist()[:64])
    except (zipfile.BadZipFile, OSError):
        return False


def unsafe_member(info: zipfile.ZipInfo) -> str:
    """Why a zip member points outside the archive ("" when it does not)."""
    name = info.filename.replace("\\", "/")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if ".." in p.parts:
        return "a '..' path"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symlink"
    return ""


def open_package(path: str | Path, data: bytes | None = None) -> zipfile.ZipFile:
    """The package opened as a zip (from `data` when given: a package inside a run zip);
    DiscoveryError (one line) when it is not one or a member points outside it (nothing is read then)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if data is not None else path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DiscoveryError(f"cannot read {path} as a .pt2 package ({exc}); point at the file "
                             "aoti_compile_and_package wrote") from None
    for info in zf.infolist():
        why = unsafe_member(info)
        if why:
            zf.close()
            raise DiscoveryError(f"refused {path}: member {info.filename!r} is {why} outside the archive; "
                                 "nothing was read from it") from None
    return zf


def text_members(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members a viewer reads: text by suffix or name, under the size cap."""
    out = []
    for info in zf.infolist():
        name = PurePosixPath(info.filename).name
        if info.is_dir() or info.file_size > MAX_TEXT_BYTES:
            continue
        if name.endswith(TEXT_SUFFIXES) or name in TEXT_NAMES:
            out.append(info)
    return out


def slim_package(src: Path, dst: Path) -> tuple[str, ...]:
    """Write `dst`: the package `src` with its text members only; return the members left out."""
    with open_package(src) as zf:
        kept = text_members(zf)
        names = {i.filename for i in kept}
        part = dst.with_name(dst.name + ".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as out:
            for info in kept:
                out.writestr(info.filename, zf.read(info))
        part.replace(dst)
        return tuple(i.filename for i in zf.infolist() if i.filename not in names and not i.is_dir())


def package_graphs(zf: zipfile.ZipFile, path: str) -> list[GraphFolder]:
    """One graph per AOTInductor model in the package (a folder holding a `*.wrapper.cpp`), its
    files named as the package names them, with its exported program (`models/<model>.json`) when
    the package has one; one graph of kind "export" per exported program nothing was compiled from
    (an archive of torch.export.save)."""
    by_dir: dict[str, list[str]] = {}
    for info in text_members(zf):
        p = PurePosixPath(info.filename)
        by_dir.setdefault(str(p.parent), []).append(p.name)
    models = {d: names for d, names in sorted(by_dir.items()) if any(n.endswith(WRAPPER_SUFFIX) for n in names)}
    programs = {PurePosixPath(n).stem: member_path(d, n) for d, names in sorted(by_dir.items())
                if PurePosixPath(d).name == PROGRAMS_DIR for n in names if n.endswith(".json")}
    many = len(models) + len(set(programs) - {PurePosixPath(d).name for d in models}) > 1
    out = []
    for d, names in models.items():
        name = PurePosixPath(d).name
        files = (min(n for n in names if n.endswith(WRAPPER_SUFFIX)),
                 *sorted(n for n in names if n.endswith(KERNEL_SUFFIX))[:1],
                 *([KERNEL_INFORMATION] if KERNEL_INFORMATION in names else []),
                 *([programs.pop(name)] if name in programs else []))  # a member path: it lies elsewhere
        out.append(GraphFolder(d if many else name, name, "inference", f"{path}:{d}", files))
    for name, member in programs.items():
        d = str(PurePosixPath(member).parent)
        out.append(GraphFolder(member if many else name, name, EXPORT_KIND, f"{path}:{d}", (member,)))
    return out


def planned_package(path: str, data: bytes | None = None):
    """`artifacts.planned` for a .pt2 package (`data`: its bytes, when it lies in a zip): a DebugParse
    with no graphs yet and one job per model in it. DiscoveryError (one line) when it is refused or
    holds no AOTInductor model."""
    from compile_viz.artifacts.jobs import GraphJob

    with open_package(path, data) as zf:
        folders = package_graphs(zf, path)
        sizes = {i.filename: i.file_size for i in zf.infolist()}
    if not folders:
        raise DiscoveryError(f"{path} holds no AOTInductor model (no *{WRAPPER_SUFFIX}) nor exported program "
                             "(models/*.json): was it written by aoti_compile_and_package or torch.export.save?")
    jobs = tuple(GraphJob(parse_package_graph, (path, f, data), sum(sizes.get(_member(f, n), 0) for n in f.files))
                 for f in folders)
    return DebugParse(root=path, graphs=(), graph_breaks=()), jobs


def _member(folder: GraphFolder, name: str) -> str:
    """A file of a graph folder as a member of the package (a name with a `/` is one already)."""
    return name if "/" in name else member_path(folder.location.rsplit(":", 1)[1], name)


def parse_package_graph(path: str, folder: GraphFolder, data: bytes | None = None) -> GraphParse:
    """One model of a package as a GraphParse: the wrapper with its kernel file as the output code,
    kernel_information.json as the provenance and kernel stacks, the exported program's graph as the
    AOT graph when the package has it; what the package cannot hold (the post-grad graph, the
    scheduler IR; the kernels of a program never compiled) one warning says."""
    from compile_viz.artifacts.aoti_wrapper import parse_aoti_wrapper
    from compile_viz.artifacts.kernel_information import parse_kernel_information
    from compile_viz.artifacts.serialized_program import parse_serialized_program

    with open_package(path, data) as zf:
        texts = {n: zf.read(_member(folder, n)).decode("utf-8", "replace") for n in folder.files}
    program = next((parse_serialized_program(t, path=n) for n, t in texts.items() if "/" in n), None)
    warnings = list(program.warnings) if program else []
    if folder.kind == EXPORT_KIND:
        warnings.append(ParseWarning(folder.name, 0, "an exported program only (torch.export.save): nothing was "
                                     "compiled, so no kernels; aoti_compile_and_package it, or capture with --aoti"))
        return GraphParse(folder=folder, aot_graph=program.graph if program else None, post_grad_graph=None,
                          pre_fusion=None, post_fusion=None, output_code=None, provenance=None,
                          warnings=tuple(warnings), exported_program=program)
    wrapper = folder.files[0]
    kernels = next((t for n, t in texts.items() if n.endswith(KERNEL_SUFFIX)), "")
    code = parse_aoti_wrapper(texts[wrapper] + ("\n" + kernels if kernels else ""), path=wrapper)
    warnings += [*code.warnings, ParseWarning(folder.name, 0, "a .pt2 package holds no post-grad graph nor scheduler "
                                              "IR: capture with `compile-viz capture --aoti` for those views")]
    provenance = stacks = None
    if KERNEL_INFORMATION in texts:
        provenance, stacks = parse_kernel_information(texts[KERNEL_INFORMATION], path=KERNEL_INFORMATION)
        warnings.extend(provenance.warnings + stacks.warnings)
    return GraphParse(folder=folder, aot_graph=program.graph if program else None, post_grad_graph=None,
                      pre_fusion=None, post_fusion=None, output_code=code, provenance=provenance,
                      warnings=tuple(warnings), kernel_stacks=stacks, exported_program=program)


def package_in(reader) -> tuple[str, bytes | None] | None:
    """(path, bytes or None) of the first .pt2 in an ArtifactReader's tree (bytes when the tree is a
    zip), or None when it holds none."""
    for d, files in sorted(reader.dirs.items()):
        for name in sorted(files):
            if name.endswith(PACKAGE_SUFFIX):
                rel = member_path(d, name)
                if not reader.is_zip:
                    return str(Path(reader.root) / rel), None
                data = reader.read(d, name)
                return (f"{reader.root}:{rel}", data) if data is not None else None
    return None
