"""AOT FX node -> the launches that run it: by name where the post-grad graph kept the node, else
through its neighbourhood."""

from __future__ import annotations

from compile_viz.artifacts.model import FxNode
from compile_viz.linking.reasons import VIEW_OPS, op_name


def aot_node_launches(aot, post_by_name: dict[str, FxNode], post_found: dict[str, tuple[int, ...]], launches, post_sets,
                      users, by_name: dict[str, FxNode]) -> dict[str, tuple[int, ...]]:
    """AOT node -> launches, sorted: by name when the post-grad graph kept the node (the same op,
    or a view the post-grad passes made another view; a view it kept with no launches has none
    here either); else the launches of name-matched ops within three edges whose "Original ATen"
    comment names this node's op; else those of the nearest name-matched users (then arguments)
    from the same source line. `by_name`: the AOT nodes by name."""
    if aot is None or not post_by_name:
        return {}
    matched: dict[str, tuple[int, ...]] = {}
    views: set[str] = set()  # views the post-grad graph kept as views: they run where it says, or nowhere
    rest = []  # the other ops, in graph order: pending below, but a name matched twice
    for n in aot.nodes:
        if n.op != "call_function":
            continue
        # the same node: same op, or a view the post-grad passes turned into another view
        # (`view` -> `reshape`, which keeps the node's name)
        if (p := post_by_name.get(n.name)) is not None and (
                p.target == n.target or op_name(p.target) in VIEW_OPS and op_name(n.target) in VIEW_OPS):
            if (hits := post_found.get(n.name)) is not None:
                matched[n.name] = hits if type(hits) is tuple else tuple(hits)  # sorted, from invert
                continue
            if op_name(n.target) in VIEW_OPS:
                views.add(n.name)
                continue
        rest.append(n)
    found = dict(matched)
    pending = [n for n in rest if n.name not in found and n.name not in views]
    if not pending:  # every op kept its name: the neighbourhoods below are not needed
        return found
    found.update(_renamed(pending, by_name, post_by_name, post_found))
    with_packet: dict[str, int] = {}  # ATen op -> launches whose comment names it, as a bit mask
    for i, la in enumerate(launches):
        bit = 1 << i
        for packet in la.comments.original_aten:
            with_packet[packet] = with_packet.get(packet, 0) | bit
    near_of = _Near(by_name, users, _Masks(matched))
    bits_of: dict[int, tuple[int, ...]] = {}  # nodes near the same launches share one tuple
    packets: dict[str, str] = {}  # target -> its "aten.op" packet
    for n in pending:
        if n.name in found:  # a name seen twice
            continue
        packet = packets.get(n.target)
        if packet is None:
            packet = packets[n.target] = ".".join(n.target.split(".")[:2])
        mask = with_packet.get(packet)
        by_aten = near_of(n.name) & mask if mask else 0
        if by_aten and n.source is not None:  # the same op's other launches next door (mm + bias kernel)
            next_door = by_aten << 2 | by_aten << 1 | by_aten >> 1 | by_aten >> 2
            if near := next_door & mask:
                by_aten |= _from_line(near, n.source.line, post_sets, post_by_name)
        if by_aten:
            hits = bits_of.get(by_aten)
            if hits is None:
                hits = bits_of[by_aten] = _bits(by_aten)
            found[n.name] = hits
            continue
        hits = _nearest(n, users, by_name, matched, forward=True) or _nearest(
            n, users, by_name, matched, forward=False)
        if hits:
            found[n.name] = tuple(sorted(hits))
    return found


def _from_line(launches: int, line: int, post_sets, post_by_name: dict[str, FxNode]) -> int:
    """The launches of bit mask `launches` with a post-grad node from user source line `line`, as
    a bit mask: the few next door asked about, not a mask per line over every launch's nodes."""
    out = 0
    for i in _bits(launches):
        if any((p := post_by_name.get(x)) is not None and (src := p.source) is not None and src.line == line
               for x in post_sets[i]):
            out |= 1 << i
    return out


def _renamed(pending: list[FxNode], aot_names: dict[str, FxNode], post_by_name: dict[str, FxNode], post_found
             ) -> dict[str, tuple[int, ...]]:
    """AOT ops that a post-grad pass replaced by the same op under a new name (FSDP's
    `all_gather_copy_in` -> `all_gather_copy_in_default_2`), or by its out variant
    (`all_gather_into_tensor` -> `all_gather_into_tensor_out_default_2`): paired with the post-grad
    nodes of that op that have no AOT namesake (`aot_names`: the AOT nodes by name), in graph
    order, when both sides count the same."""
    waiting: dict[str, list[str]] = {}
    for n in pending:
        if op_name(n.target) not in VIEW_OPS:
            waiting.setdefault(_base_op(n.target), []).append(n.name)
    if not waiting:
        return {}
    spare: dict[str, list[str]] = {}
    base: dict[str, str] = {}  # target -> _base_op, once per target, not once per node
    for name, p in post_by_name.items():
        if name not in aot_names and p.op == "call_function":
            op = base.get(p.target)
            if op is None:
                op = base[p.target] = _base_op(p.target)
            if op in waiting:
                spare.setdefault(op, []).append(name)
    out = {}
    for op, names in waiting.items():
        posts = spare.get(op, [])
        if len(posts) == len(names):
            for a, p in zip(names, posts, strict=True):
                if p in post_found:
                    out[a] = tuple(post_found[p])
    return out


def _base_op(target: str) -> str:
    """`_c10d_functional.all_gather_into_tensor_out.default` -> `_c10d_functional.all_gather_into_tensor`."""
    parts = target.split(".")
    base = ".".join(parts[:2]) if len(parts) >= 2 else target
    return base.removesuffix("_out")


class _Masks(dict):
    """Node name -> its launches as a bit mask (0 for none), made on first lookup from `lists`:
    only the nodes near the few ops that did not keep their names are asked for."""

    def __init__(self, lists: dict[str, list[int]]) -> None:
        super().__init__()
        self.lists = lists

    def __missing__(self, name: str) -> int:
        launches = self.lists.get(name)
        mask = self[name] = _mask(launches) if launches else 0
        return mask


def _mask(launches) -> int:
    """A set of launch indices as a bit mask: unions of a few hundred launches are one `|`."""
    m = 0
    for i in launches:
        m |= 1 << i
    return m


def _bits(m: int) -> tuple[int, ...]:
    """The launch indices in a bit mask, in order."""
    text = bin(m)  # "0b1...": bit k at position top - k
    top = len(text) - 1
    out = []
    at = text.rfind("1")
    while at >= 2:
        out.append(top - at)
        at = text.rfind("1", 2, at)
    return tuple(out)


class _Near:
    """Launches of the name-matched nodes within three edges of a node, either direction, over
    op nodes only, as a bit mask.

    A node's three-edge ball, less the node, is the union of the two-edge balls of its
    neighbours; it is asked only for nodes that are not name-matched, so the node itself adds
    nothing. Memoising the one- and two-edge unions per node visits a hub's many neighbours
    once, not once per node near it.
    """

    def __init__(self, by_name: dict[str, FxNode], users, found: _Masks) -> None:
        self.by_name = by_name
        self.users = users
        self.found = found
        self.adjacent: dict[str, list[str]] = {}
        self.one: dict[str, int] = {}
        self.two: dict[str, int] = {}

    def _adjacent(self, name: str) -> list[str]:
        adj = self.adjacent.get(name)
        if adj is None:
            # a node that is not an op (a graph input, the output) has no launches and leads
            # nowhere: the walk stops there (a graph input read in many places, or the output node
            # that returns some 250 saved tensors of a training step, would make every node near
            # every other)
            by_name = self.by_name
            if (node := by_name.get(name)) is not None and node.op == "call_function":
                adj = [*self.users.get(name, ()), *[x for x in node.args if x in by_name]]
            else:
                adj = []
            self.adjacent[name] = adj
        return adj

    def _one(self, name: str) -> int:
        found = self.found
        hits = found[name]
        for other in self._adjacent(name):
            hits |= found[other]
        self.one[name] = hits
        return hits

    def _two(self, name: str) -> int:
        one = self.one.get
        hits = self.found[name]
        for other in self._adjacent(name):
            h = one(other)
            hits |= self._one(other) if h is None else h
        self.two[name] = hits
        return hits

    def __call__(self, name: str) -> int:
        two = self.two.get
        hits = 0
        for other in self._adjacent(name):
            h = two(other)
            hits |= self._two(other) if h is None else h
        return hits


def _nearest(start: FxNode, users, by_name, found, *, forward: bool) -> set[int]:
    line = start.source.line if start.source else None
    frontier = [start.name]
    seen = {start.name}
    for _ in range(6):
        nxt = []
        hits: set[int] = set()
        for name in frontier:
            for other in users.get(name, ()) if forward else by_name[name].args:
                if other in seen or other not in by_name:
                    continue
                seen.add(other)
                o = by_name[other]
                same_line = line is None or (o.source is not None and o.source.line == line)
                if other in found and same_line:
                    hits.update(found[other])
                elif o.op == "call_function":
                    nxt.append(other)
        if hits:
            return hits
        frontier = nxt
        if not frontier:
            break
    return set()
