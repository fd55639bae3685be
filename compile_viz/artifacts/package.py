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

import stat
import zipfile
from pathlib import Path, PurePosixPath

from compile_viz.artifacts.discover import DiscoveryError

PACKAGE_SUFFIX = ".pt2"
ARCHIVE_FORMAT = "archive_format"  # a member every .pt2 has at `<model>/archive_format`
WRAPPER_SUFFIX = ".wrapper.cpp"
KERNEL_SUFFIX = ".kernel.cpp"
KERNEL_INFORMATION = "kernel_information.json"
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


def open_package(path: str | Path) -> zipfile.ZipFile:
    """The package opened as a zip; DiscoveryError (one line) when it is not one or a member
    points outside it (nothing is read then)."""
    try:
        zf = zipfile.ZipFile(path)
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
