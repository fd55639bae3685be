"""Launches grouped into layers a reader can open one at a time: the graph's module hierarchy.

A training step of a 48-layer model launches a thousand kernels; one box each is unreadable.
Grouped by the module that produced them (`blocks.17.attn`), and the 48 blocks seen for what
they are (one pattern, 48 times), the first view has a handful of boxes.

What says which module a launch belongs to, best first:
1. parameters: the Dynamo input names in the run's TORCH_TRACE log (artifacts/trace/module_paths.py)
   give each placeholder its module; a launch belongs to the module whose parameters its nodes
   read most, and a launch that reads none to what the launches on both sides share
   (`blocks.3` for the attention between `blocks.3.qkv` and `blocks.3.proj`);
2. repeated structure: without names, the longest run of a repeated sequence of kernels (Inductor
   reuses one kernel for every layer) is split into its repeats;
3. source lines: the rest is grouped by the user line its launches come from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import field

from compile_viz.artifacts.frozen import frozen
from compile_viz.artifacts.model import FxGraph, GraphParse
from compile_viz.artifacts.trace.module_paths import DynamoInput
from compile_viz.linking.model import POST_GRAD, GraphIndex, LaunchLink

HIERARCHY_ABOVE = 60  # launches: above this a graph opens as its hierarchy
MAX_BOXES = 30  # what the first view shows at most before it is cut into ranges
MAX_INNER = 64  # the same for a group opened (48 layers stay 48 boxes)
MIN_REPEATS = 3

PARAMETERS, REPETITION, SOURCE = "module paths", "repeated structure", "source lines"


@frozen
class LaunchGroup:
    """A group of launches: a module, one repeat of a pattern, a source line or a range."""

    id: str  # unique in its hierarchy, URL-safe: "blocks.17", "~rep.3", "~src.2"
    label: str
    kind: str  # module | repeat | block | source | range | root
    children: tuple[LaunchGroup | int, ...]  # groups and launch indices, in program order
    launches: tuple[int, ...]  # every launch below, in program order
    pattern: str = ""  # "48 × the same 21 launches" where the child groups repeat one pattern


@frozen
class Hierarchy:
    """A graph's launches grouped into layers, each group's parent, and each launch's innermost group."""

    root: LaunchGroup
    evidence: str  # PARAMETERS | REPETITION | SOURCE
    parents: dict[str, str] = field(default_factory=dict)  # group id -> parent group id ("" for the root's)
    groups: dict[str, LaunchGroup] = field(default_factory=dict)
    launch_group: tuple[str, ...] = ()  # the innermost group of each launch ("" at the top)

    def ancestors(self, group: str) -> tuple[str, ...]:
        """The ids of the groups around `group`, innermost first."""
        out, g = [], self.parents.get(group, "")
        while g:
            out.append(g)
            g = self.parents.get(g, "")
        return tuple(out)

    def path(self, launch: int) -> tuple[str, ...]:
        """The ids of the groups around `launch`, outermost first."""
        g = self.launch_group[launch] if 0 <= launch < len(self.launch_group) else ""
        return (*reversed(self.ancestors(g)), g) if g else ()


def placeholder_modules(fx: FxGraph, inputs: Sequence[tuple[DynamoInput, ...]]) -> dict[str, str]:
    """Placeholder name -> module path, from the Dynamo input list whose dtypes and shapes match
    the placeholders' (`primals_N` is input N-1, `argN_1` input N); {} when none matches."""
    positions = {}
    for n in fx.nodes:
        if n.op != "placeholder":
            continue
        if n.name.startswith("primals_") and n.name[8:].isdigit():
            positions[n.name] = int(n.name[8:]) - 1
        elif n.name.startswith("arg") and n.name.endswith("_1") and n.name[3:-2].isdigit():
            positions[n.name] = int(n.name[3:-2])
    by_name = {n.name: n for n in fx.nodes}
    best: tuple[int, dict[str, str]] = (0, {})
    for candidate in inputs:
        agree, mapping = 0, {}
        for name, k in positions.items():
            if k >= len(candidate):
                agree = -1
                break
            node, inp = by_name[name], candidate[k]
            if node.shape is not None and inp.shape is not None and tuple(node.shape) != inp.shape:
                agree = -1
                break
            agree += 1
            if inp.module is not None:
                mapping[name] = inp.module
        if agree > best[0]:
            best = (agree, mapping)
    return best[1]


def parameter_nodes(fx: FxGraph, modules: dict[str, str]) -> dict[str, str]:
    """`modules` plus every node made of parameters alone (a cast, view or transpose of a weight),
    with its parameter's module: a backward graph reads the forward's bf16 weight copies as saved
    tensors under these names."""
    out = dict(modules)
    for n in fx.nodes:
        if n.op == "call_function" and n.args and all(a in out for a in n.args):
            out[n.name] = out[n.args[0]]
    return out


def launch_modules(fx: FxGraph, index: GraphIndex, modules: dict[str, str], graph: str) -> list[str | None]:
    """The module of each launch: the one whose parameters its nodes read most (views of them
    included), else what the nearest launches on both sides share; None when nothing says."""
    by_name = {n.name: n for n in fx.nodes}
    launched = {name for la in index.launches for name in _nodes(la, graph)}
    memo: dict[str, tuple[str, ...]] = {}

    def params(name: str) -> tuple[str, ...]:
        """The modules of the parameters `name` is made of: a parameter, a view or cast of
        parameters (a bf16 copy under autocast is a launch of its own), or a view of those."""
        if name in memo:
            return memo[name]
        memo[name] = ()
        node = by_name.get(name)
        if name in modules:
            memo[name] = (modules[name],)
        elif node is not None and node.op == "call_function" and node.args:
            found = [params(a) for a in node.args]
            if name not in launched or all(found):
                memo[name] = tuple(m for f in found for m in f)
        return memo[name]

    own: list[str | None] = []
    for la in index.launches:
        mine = set(_nodes(la, graph))
        votes = Counter(m for name in mine if name in by_name
                        for a in by_name[name].args if a not in mine for m in params(a))
        own.append(max(votes, key=lambda m: (votes[m], m.count("."))) if votes else None)
    return _fill(own)


def _nodes(la: LaunchLink, graph: str) -> tuple[str, ...]:
    return la.post_grad_nodes if graph == POST_GRAD else la.fx_nodes


def _fill(own: list[str | None]) -> list[str | None]:
    """Give each launch without a module the longest module path its neighbours share."""
    out = list(own)
    prev: str | None = None
    nxt: list[str | None] = [None] * len(own)
    later = None
    for i in range(len(own) - 1, -1, -1):
        nxt[i] = later
        later = own[i] if own[i] is not None else later
    for i, m in enumerate(own):
        if m is not None:
            prev = m
            continue
        out[i] = _between(prev, nxt[i]) if prev is not None and nxt[i] is not None else None
    return out


def _between(prev: str, nxt: str) -> str | None:
    """The module of a launch between one of `prev` and one of `nxt`: what they share, or, between
    two items of a list (`blocks.3.out` and `blocks.4.ln1`), the earlier item."""
    shared = _common(prev, nxt)
    rest = prev.split(".")[len(shared.split(".")) if shared else 0:]
    if rest and rest[0].isdigit() and len(rest) > 1:
        return f"{shared}.{rest[0]}" if shared else rest[0]
    return shared or None


def _common(a: str, b: str) -> str:
    pa, pb = a.split("."), b.split(".")
    k = 0
    while k < min(len(pa), len(pb)) and pa[k] == pb[k]:
        k += 1
    return ".".join(pa[:k])


def build_hierarchy(index: GraphIndex, modules: Sequence[str | None] | None = None) -> Hierarchy:
    """The hierarchy of `index`'s launches: by module path when `modules` (one per launch, from
    launch_modules) names some, else by repeated structure and source line."""
    n = len(index.launches)
    if modules is not None and sum(m is not None for m in modules) >= n / 2:
        items, evidence = _module_tree(index, list(modules)), PARAMETERS
    else:
        items, evidence = _by_structure(index, list(range(n)), "~"), REPETITION
        if not any(isinstance(c, LaunchGroup) and c.kind == "repeat" for c in items):
            evidence = SOURCE
    root = LaunchGroup("", "graph", "root", tuple(_cap(items, "~top")), tuple(range(n)))
    return _indexed(root, evidence, n)


def _module_tree(index: GraphIndex, modules: list[str | None]) -> list[LaunchGroup | int]:
    """The module trie, chains of one child merged, groups of one launch replaced by the launch."""
    trie: dict = {}
    top: list[LaunchGroup | int | tuple] = []
    order: dict[str, int] = {}
    for i, m in enumerate(modules):
        if not m:
            top.append(i)
            continue
        node, path = trie, []
        for part in m.split("."):
            path.append(part)
            node = node.setdefault(part, {})
            order.setdefault(".".join(path), i)
        node.setdefault(None, []).append(i)

    def make(path: str, node: dict) -> LaunchGroup | int:
        kids: list[tuple[int, LaunchGroup | int]] = [(i, i) for i in node.get(None, [])]
        for part, sub in node.items():
            if part is not None:
                full = f"{path}.{part}" if path else part
                kids.append((order[full], make(full, sub)))
        kids.sort(key=lambda t: t[0])
        children = [c for _, c in kids]
        if len(children) == 1:
            return children[0]  # a module of one launch or one submodule: no box of its own
        launches = tuple(sorted(i for c in children for i in _launches(c)))
        return LaunchGroup(path, path, "module", tuple(children), launches, _pattern(index, children))

    groups = [(order[part], make(part, sub)) for part, sub in trie.items() if part is not None]
    merged = sorted([(i, i) for i in top] + groups, key=lambda t: t[0])
    out: list[LaunchGroup | int] = []
    run: list[int] = []
    for _, item in merged:  # the launches no module claims: grouped by source line, in place
        if isinstance(item, int):
            run.append(item)
            continue
        out.extend(_by_source(index, run, f"~s{len(out)}"))
        run = []
        out.append(item)
    out.extend(_by_source(index, run, f"~s{len(out)}"))
    return out


def _launches(item: LaunchGroup | int) -> tuple[int, ...]:
    return (item,) if isinstance(item, int) else item.launches


def _pattern(index: GraphIndex, children: Sequence[LaunchGroup | int]) -> str:
    """'48 × the same 21 launches' when child groups launch the same kernels in the same order."""
    sigs = Counter(tuple(kernel_shape(index.launches[i]) for i in c.launches) for c in children
                   if isinstance(c, LaunchGroup))
    if not sigs:
        return ""
    sig, count = sigs.most_common(1)[0]
    if count < 2:
        return ""
    groups = sum(sigs.values())
    return (f"{count} × the same {len(sig)} launches" if count == groups
            else f"{count} of {groups} alike ({len(sig)} launches each)")


def kernel_shape(la: LaunchLink) -> str:
    """A launch's kernel without Inductor's numbering: the same code in two layers may be two
    kernels (`..._view_13` and `..._view_15`, by the buffers it reuses)."""
    return la.kernel.rstrip("0123456789").rstrip("_") if la.kernel[-1:].isdigit() else la.kernel


def tandem_repeat(seq: Sequence[str]) -> tuple[int, int, int] | None:
    """(start, period, count) of the run of one repeated sequence covering the most of `seq`
    (count >= MIN_REPEATS), the shortest period first among equals; None when there is none."""
    n, best = len(seq), None
    best_cover = 0
    for p in range(1, n // MIN_REPEATS + 1):
        if p * (n // p) <= best_cover:
            break  # no longer period can cover more
        run = 0
        for i in range(n - p - 1, -1, -1):  # run = how far seq[i:] equals seq[i+p:]
            run = run + 1 if seq[i] == seq[i + p] else 0
            count = (run + p) // p
            if count >= MIN_REPEATS and count * p > best_cover:
                best_cover, best = count * p, (i, p, count)
    return best


def _by_structure(index: GraphIndex, launches: list[int], prefix: str) -> list[LaunchGroup | int]:
    """Launches in order: the longest repeated run made into one group of its repeats; what is
    before and after it the same way, down to source-line groups."""
    if len(launches) < 2 * MIN_REPEATS:
        return _by_source(index, launches, prefix + "s")
    found = tandem_repeat([kernel_shape(index.launches[i]) for i in launches])
    if found is None or found[1] * found[2] < max(2 * MIN_REPEATS, len(launches) // 10):
        return _by_source(index, launches, prefix + "s")
    start, period, count = found
    gid = f"{prefix}r"
    blocks: list[LaunchGroup | int] = []
    for k in range(count):
        part = tuple(launches[start + k * period: start + (k + 1) * period])
        blocks.append(part[0] if period == 1 else
                      LaunchGroup(f"{gid}.{k}", f"repeat {k + 1} of {count}", "block", part, part))
    region = tuple(launches[start: start + period * count])
    label = f"{_source_label(index, region[0]) or 'a repeated pattern'} ×{count}"
    group = LaunchGroup(gid, label, "repeat", tuple(blocks), region,
                        f"{count} × the same {period} launch{'es' if period > 1 else ''}")
    return (_by_structure(index, launches[:start], prefix + "a") + [group]
            + _by_structure(index, launches[start + period * count:], prefix + "b"))


def _source_label(index: GraphIndex, launch: int) -> str:
    lines = index.launches[launch].source_lines
    if not lines:
        return ""
    file, line = lines[0]
    return f"{file.rsplit('/', 1)[-1]}:{line}"


def _by_source(index: GraphIndex, launches: list[int], prefix: str) -> list[LaunchGroup | int]:
    """Consecutive launches from the same user line as one group (a lone launch stays itself)."""
    out: list[LaunchGroup | int] = []
    run: list[int] = []
    key = None
    for i in [*launches, None]:
        k = index.launches[i].source_lines[:1] if i is not None else None
        if run and (i is None or k != key):
            if len(run) == 1:
                out.append(run[0])
            else:
                label = _source_label(index, run[0]) or "no source line"
                out.append(LaunchGroup(f"{prefix}{len(out)}", label, "source", tuple(run), tuple(run)))
            run = []
        if i is not None:
            run.append(i)
            key = k
    return out


def _cap(items: list[LaunchGroup | int], prefix: str, most: int = MAX_BOXES) -> list[LaunchGroup | int]:
    """At most `most` items: consecutive items folded into ranges beyond that."""
    if len(items) <= most:
        return items
    size = -(-len(items) // most)
    out: list[LaunchGroup | int] = []
    for k in range(0, len(items), size):
        chunk = items[k: k + size]
        launches = tuple(i for c in chunk for i in _launches(c))
        if len(chunk) == 1:
            out.append(chunk[0])
            continue
        label = f"launches #{launches[0]}–#{launches[-1]}"
        out.append(LaunchGroup(f"{prefix}{k // size}", label, "range", tuple(chunk), launches))
    return out


def _capped(g: LaunchGroup) -> LaunchGroup:
    """`g` with every level below it cut to MAX_INNER items (ranges beyond that)."""
    kids = [c if isinstance(c, int) else _capped(c) for c in g.children]
    if g.kind != "root":
        kids = _cap(kids, f"{g.id}~", MAX_INNER)
    return LaunchGroup(g.id, g.label, g.kind, tuple(kids), g.launches, g.pattern)


def graph_hierarchy(graphs: Sequence[GraphParse], graph: GraphParse, index: GraphIndex,
                    inputs: Sequence[tuple[DynamoInput, ...]], graph_name: str = POST_GRAD,
                    open_graph: Callable[[str], GraphParse | None] | None = None) -> Hierarchy:
    """The hierarchy of one graph of a run (`graphs`: all of them, to find a backward's forward),
    given the run's Dynamo input lists (artifacts.module_paths.read_dynamo_inputs, [] for none).
    `open_graph(id)`: the parsed graph, where `graphs` may hold folders alone (a big trace)."""
    return build_hierarchy(index, graph_launch_modules(graphs, graph, index, inputs, graph_name, open_graph))


def graph_launch_modules(graphs: Sequence[GraphParse], graph: GraphParse, index: GraphIndex,
                         inputs: Sequence[tuple[DynamoInput, ...]], graph_name: str = POST_GRAD,
                         open_graph: Callable[[str], GraphParse | None] | None = None) -> list[str | None] | None:
    """The module each launch of `graph` belongs to (`transformer.h.3.attn`), by the parameters it
    reads; None when the run's Dynamo inputs do not name modules."""
    fx = graph.artifact(graph_name)
    if fx is None or not inputs:
        return None
    modules = placeholder_modules(fx, inputs)
    forward = _forward_of(graphs, graph) if modules else None
    if forward is not None and open_graph is not None:
        forward = open_graph(forward.id)
    f_fx = forward.artifact(graph_name) if forward is not None else None
    if f_fx is not None:  # the forward's weight casts, saved for the backward under their names
        made = parameter_nodes(f_fx, placeholder_modules(f_fx, inputs))
        modules.update({n.name: made[n.name] for n in fx.nodes if n.op == "placeholder" and n.name in made})
    return launch_modules(fx, index, modules, graph_name) if modules else None


def _forward_of(graphs: Sequence[GraphParse], graph: GraphParse) -> GraphParse | None:
    """The forward graph of a backward graph: `model__0_forward_1.0` for `model__0_backward_3.1`."""
    if graph.kind != "backward" or "_backward" not in graph.folder.name:
        return None
    stem = graph.folder.name.split("_backward")[0]
    found = [g for g in graphs if g.kind == "forward" and g.folder.name.split("_forward")[0] == stem]
    return found[0] if len(found) == 1 else None


def first_open(h: Hierarchy, most: int = MAX_BOXES, least: int = 8) -> frozenset[str]:
    """The groups the first view opens: the largest closed group, again and again, while fewer
    than `least` boxes show and opening it keeps them at `most` or fewer."""
    opened: set[str] = set()
    shown = list(h.root.children)
    while len(shown) < least:
        closed = [c for c in shown if isinstance(c, LaunchGroup)]
        if not closed:
            break
        big = max(closed, key=lambda c: len(c.launches))
        if len(shown) - 1 + len(big.children) > most:
            break
        opened.add(big.id)
        k = shown.index(big)
        shown[k: k + 1] = list(big.children)
    return frozenset(opened)


def _indexed(root: LaunchGroup, evidence: str, n: int) -> Hierarchy:
    root = _capped(root)
    parents: dict[str, str] = {}
    groups: dict[str, LaunchGroup] = {}
    inner = [""] * n
    stack = [root]
    while stack:
        g = stack.pop()
        groups[g.id] = g
        for c in g.children:
            if isinstance(c, int):
                if 0 <= c < n:
                    inner[c] = g.id
            else:
                parents[c.id] = g.id
                stack.append(c)
    groups.pop("", None)
    return Hierarchy(root, evidence, parents, groups, tuple(inner))
