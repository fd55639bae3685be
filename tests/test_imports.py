"""The imports of compile_viz, read with `ast`: no circle between modules, and each stage imports only
what docs/architecture.md's table says it may (LAYERS below mirrors that table).

Every import counts, wherever it is written: at the top, inside a function, under TYPE_CHECKING.
`from pkg import name` is an edge to the submodule `pkg.name` when there is one, else to `pkg`.
A package's `__init__` that imports its submodules is fine; a submodule that imports its package
back is a circle (import the submodule that holds the name instead).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = "compile_viz"

# stage: (the modules it holds, by name or prefix; the stages it may import; the outside packages
# it may import). The standard library is always allowed. Keep in step with docs/architecture.md.
LIBRARY = ("artifacts", "linking", "measurements", "store", "verify", "record", "capture", "trace import", "compare",
           "fleet", "render", "server")
LAYERS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "artifacts": (("compile_viz.artifacts",), (), ()),
    "linking": (("compile_viz.linking",), ("artifacts",), ()),
    "measurements": (("compile_viz.measurements",), (), ()),
    "store": (("compile_viz.store", "compile_viz.store_index"), (), ()),
    # the three rooms of work that runs torch: verify (the win and the wrong) under record (a user's job, the
    # process and its environment) under capture (a model compiled in a child), each importing only down
    "verify": (("compile_viz.verify",), ("artifacts", "measurements"), ("torch", "triton")),
    "record": (("compile_viz.record",), ("artifacts", "measurements", "store", "trace import"), ("torch",)),
    "capture": (("compile_viz.capture",), ("artifacts", "measurements", "store", "trace import", "verify", "record"),
                ("torch", "triton", "sample_models")),
    "trace import": (("compile_viz.trace_import",), ("artifacts", "store"), ()),
    "compare": (("compile_viz.compare",), ("artifacts", "linking", "measurements", "store"), ()),
    # sweeps on Ray: cells captured as tasks, read as a fleet, two sweeps compared (ray imported when cells run)
    "fleet": (("compile_viz.fleet",), ("artifacts", "linking", "measurements", "store", "trace import", "verify",
                                       "record", "capture", "compare"), ("ray",)),
    "render": (("compile_viz.render",), ("artifacts", "linking", "measurements", "compare"),
               ("plotly", "graphviz", "pygments")),
    # the team server: the store's PostgreSQL backend, projects, tokens, notes, the API; it hosts the
    # dashboard's script by path (st.App), never importing ui
    "server": (("compile_viz.server",), ("artifacts", "measurements", "store", "trace import"),
               ("psycopg", "starlette", "uvicorn", "streamlit", "authlib")),
    "ui": (("compile_viz.ui",), LIBRARY, ("streamlit", "plotly", "graphviz", "pygments", "sample_models")),
    "cli": (("compile_viz.cli", "compile_viz.__main__"), LIBRARY, ("sample_models",)),
}
ROOT_PACKAGE = {"compile_viz": ((), ())}  # compile_viz/__init__.py: imports nothing


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its folder's name)."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _imported(name: str, path: Path) -> list[tuple[str, int]]:
    """(module imported, line) for every import in the file, relative ones resolved."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((sub if sub in MODULES else target, node.lineno))
    return out


IMPORTS = {name: _imported(name, path) for name, path in MODULES.items()}


def _graph() -> dict[str, set[str]]:
    return {name: {t for t, _ in imports if t in MODULES and t != name} for name, imports in IMPORTS.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan), as [a, b, ..., a]."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_round(graph, group) for group in groups]


def _path_round(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest way from the group's first module back to itself, inside the group."""
    start = min(group)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [*reversed(path), start]
                if w not in came:
                    came[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(group)


def stage_of(module: str) -> str | None:
    best = None
    for stage, (prefixes, _, _) in LAYERS.items():
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > len(best[1])):
                best = (stage, p)
    return best[0] if best else None


def test_every_import_of_compile_viz_names_a_module_that_exists():
    missing = [f"{MODULES[name].relative_to(ROOT)}:{line}: {target}"
               for name, imports in IMPORTS.items() for target, line in imports
               if target.split(".")[0] == PACKAGE and target not in MODULES]
    assert not missing, "imports of modules that do not exist:\n" + "\n".join(missing)


def test_no_import_circles():
    circles = _circles(_graph())
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def test_the_circle_finder_finds_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c", "a"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_every_module_belongs_to_a_stage():
    loose = [name for name in MODULES if stage_of(name) is None and name not in ROOT_PACKAGE]
    assert not loose, f"modules in no stage of LAYERS (add them to docs/architecture.md's table too): {loose}"


def test_each_stage_imports_only_what_the_architecture_allows():
    stdlib = sys.stdlib_module_names
    wrong = []
    for name, imports in IMPORTS.items():
        stage = stage_of(name)
        if stage is None and name not in ROOT_PACKAGE:
            continue  # test_every_module_belongs_to_a_stage names it
        allowed_stages, allowed_outside = LAYERS[stage][1:] if stage else ROOT_PACKAGE[name]
        for target, line in imports:
            top = target.split(".")[0]
            if top == PACKAGE:
                to = stage_of(target)
                ok = to == stage or to in allowed_stages
                what = f"{target} ({to})"
            else:
                ok = top in stdlib or top == "__future__" or top in allowed_outside
                what = target
            if not ok:
                wrong.append(f"{MODULES[name].relative_to(ROOT)}:{line}: {stage} imports {what}")
    assert not wrong, "imports the layers do not allow (docs/architecture.md):\n" + "\n".join(wrong)


def _page_rows() -> dict[str, list[list[str]]]:
    """docs/architecture.md's table: stage -> its rows, each [stage, folder, what it owns, may import]."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows: dict[str, list[list[str]]] = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 4 and cells[0] not in ("stage", "---"):
            rows.setdefault(cells[0], []).append(cells)
    return rows


def test_the_table_mirrors_the_architecture_page():
    """Each stage of LAYERS has a row naming its folder, and the row's last column names the same
    stages ("the library": every stage of LIBRARY); "stdlib only" allows nothing, "never X" no X."""
    rows = _page_rows()
    assert set(rows) == set(LAYERS), "stages of docs/architecture.md and of LAYERS differ"
    for stage, (prefixes, stages, outside) in LAYERS.items():
        text = " ".join(" ".join(r[1:]) for r in rows[stage])
        for p in prefixes:
            assert p.replace(".", "/") in text, f"the {stage} row of docs/architecture.md does not name {p}"
        may = " ".join(r[3] for r in rows[stage])
        allowed, _, never = may.partition("never")
        named = set(LIBRARY) if "the library" in allowed else {
            s for s in LAYERS if s != stage and re.search(rf"(?<![\w/]){s}(?![\w/])", allowed)}
        assert named == set(stages) - {stage}, f"{stage}: the page allows {sorted(named)}, LAYERS {sorted(stages)}"
        assert set(outside) <= set(re.findall(r"\w+", allowed)), f"{stage}: the page does not name {outside}"
        assert not set(outside) & set(re.findall(r"\w+", never)), f"{stage}: the page says never {never}"
        if "stdlib only" in may:
            assert not stages and not outside, f"{stage} is stdlib only on the page"
