"""The origins Inductor gives an extern call: its node, and the nodes it inlined into its inputs.

When Inductor lowers an FX node, the IR it builds takes as origins the node itself plus the
origins of every argument that is not yet realized (a pointwise or view result still held as a
function, not a buffer). An extern call (mm, convolution, attention) then realizes that argument
into a buffer, computed by a generated kernel, but the call keeps those origins: the provenance
JSON lists, for `extern_kernels.convolution:N`, the small pointwise chain that fed it, and for an
attention call the mask built for it. This module replays that rule on the post-grad graph.

What the provenance JSON lists for an extern call is narrower when its buffer is the very result
of its FX node: `assign_origin_node` then marks the buffer, and `set_kernel_post_grad_provenance_tracing`
writes its `origin_node` alone. That is the case of the matrix multiplies (their tuned choice is
the node's result) and of a convolution without a bias; a convolution with a bias returns the
pointwise that adds it (on the GPU the bias is peeled off), and a fallback kernel returns its
`MultiOutput`, so those list every origin (`of_extern`). An input the call realizes in its own
lowering (a convolution's, stored channels-last) is realized after `gather_origins` ran: the
call keeps its origins.

A graph input a convolution prefers channels-last (layout optimization, training convnets) is
lowered as `require_stride_order`; where its channels-last strides differ from its own only on
dimensions of size 1 (a depthwise or 1x1 weight) that is a `ReinterpretView`, no copy: it stays
unrealized, with the input itself as origin, and the convolution gathers it (`viewed`: the inputs
the output code passes as `reinterpret_tensor(name, its own size, channels-last strides)`).

What counts as realized before a consumer is lowered (Inductor's own rules, approximated):
- graph inputs and constants held as attributes;
- the output of an extern op, except a convolution with a bias (the bias is added by a pointwise);
- a matrix multiply or convolution also when a template kernel computes it;
- a size computed on the host (dynamic shapes), which is no device buffer at all;
- a node with several users of which one is an extern op (`needs_realized_inputs`) or the graph's
  output (unless it is a view), or whose inlined computation reads more than `realize_reads_threshold` (4) buffers;
- any node whose inlined computation reads more than `realize_acc_reads_threshold` (8) buffers
  (a size is a number, no read);
- a reduction over at most `unroll_reductions_threshold` (8) elements (unrolled, then stored);
- a scan (cumsum, ...), which its lowering realizes, and a sort's values (not its indices);
- a node an earlier consumer already realized in its own lowering: a matrix multiply or an extern
  call reads its inputs from buffers (`realize_input`), so only the first of them in graph order
  gathers what was inlined into a shared input (the query projection of a layer gathers its norm,
  the key and value projections read the norm's buffer).
Everything else (pointwise ops, views, reductions' results) passes its origins on.
"""

from __future__ import annotations

import re

from compile_viz.artifacts.model import FxNode
from compile_viz.linking.reasons import SYMBOLIC, VIEW_OPS, op_name

REALIZE_READS = 4  # torch._inductor.config.realize_reads_threshold: a reused result reading more is stored
REALIZE_ACC_READS = 8  # realize_acc_reads_threshold: any result reading more is stored
UNROLL_REDUCTIONS = 8  # unroll_reductions_threshold: a reduction over this few elements is unrolled
MATMULS = {"mm", "addmm", "bmm", "baddbmm", "convolution", "_int_mm", "_scaled_mm"}  # extern or template
# lowerings that realize their results before returning them (OnlineSoftmaxReduction.create), over
# at least unroll_reductions_threshold elements (over fewer, their results pass their origins on)
REALIZED_BY_LOWERING = {"prepare_softmax_online"}
# lowerings that realize every result, whatever their size (Scan.create; a sort's values too, below)
SCANS = {"cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"}
REDUCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "var_mean", "std", "argmax", "argmin"}


class Origins:
    """Origins and read sets of the nodes the asked-for calls depend on, worked out on first ask:
    a node after its arguments, with an explicit stack (no deep recursion), and only back to the
    nodes that are buffers whatever their arguments (graph inputs, matrix multiplies, extern
    calls), so a call's cone, not the whole graph, is visited."""

    def __init__(self, nodes: list[FxNode], users: dict[str, list[str]], extern: set[str],
                 viewed: frozenset[str] = frozenset(), known: dict[str, FxNode] | None = None,
                 pos: dict[str, int] | None = None) -> None:
        # `known` and `pos`: the nodes by name and their positions, where the caller has them
        self.known = known if known is not None else {n.name: n for n in nodes}
        self.pos = pos if pos is not None else {n.name: i for i, n in enumerate(nodes)}
        self.realizer: dict[str, int] = {}  # node -> position of the first consumer realizing it (_first_realizer)
        self.users = users
        self.extern = extern
        self.viewed = viewed  # graph inputs lowered as a view of other strides (see the module's docstring)
        self.passed: dict[str, frozenset[str]] = {}  # what a node passes on to a consumer
        self.reads: dict[str, frozenset[str]] = {}  # the realized nodes its inlined computation reads

    def of_call(self, name: str) -> set[str]:
        """The origins of the IR built for node `name`: itself and what its arguments pass on."""
        node = self.known.get(name)
        if node is None:
            return {name}
        self._work_out(node.args)
        return self._own(node)

    def of_extern(self, name: str) -> set[str]:
        """What the provenance JSON lists for the extern call of node `name`: the node alone when
        its buffer is the node's result (its `origin_node`), else `of_call`."""
        node = self.known.get(name)
        if node is not None and self._is_own_result(node):
            return {name}
        return self.of_call(name)

    def _is_own_result(self, node: FxNode) -> bool:
        """Whether the extern call's buffer is the node's lowering result, which `assign_origin_node`
        marks: a tuned choice (mm, addmm, bmm, _grouped_mm, a convolution without a bias) and a
        fallback with one tensor out (its `MultiOutput` without indices hands the mark to the kernel);
        not a convolution with a bias (the result is the pointwise adding it) nor a call with several
        outputs (its users take tuple elements)."""
        if is_conv_with_bias(node) or op_name(node.target) in VIEW_OPS:  # a view the call reads: no call
            return False
        known = self.known
        return not any((u := known.get(name)) is not None and u.target == "operator.getitem"
                       for name in self.users.get(node.name, ()))

    def _own(self, n: FxNode) -> set[str]:
        """The node and what its (worked out) arguments pass on; a tuple element (`getitem`) is
        no IR node of its own, only what its parent made, so it passes that alone."""
        out = set() if n.target == "operator.getitem" else {n.name}
        at = self.pos.get(n.name)
        for a in n.args:
            if not self._realized_before(a, at):
                out |= self.passed.get(a, frozenset())
        return out

    def _realized_before(self, a: str, at: int | None) -> bool:
        """Whether node `a` is realized by a consumer lowered before position `at` (not a view:
        a view stays one and hands on the origins it was made with)."""
        if at is None or (node := self.known.get(a)) is None or op_name(node.target) in VIEW_OPS:
            return False
        hit = self.realizer.get(a)
        if hit is None:
            hit = self.realizer[a] = self._first_realizer(a)
        return hit < at

    def _first_realizer(self, a: str) -> int:
        """The position of the first extern call or matrix multiply that reads node `a`, through
        views (it realizes their base); past the graph's end when none does."""
        first = len(self.pos)
        known, users = self.known, self.users
        stack, seen = list(users.get(a, ())), set()
        while stack:
            u = stack.pop()
            if u in seen or (node := known.get(u)) is None or node.op != "call_function":
                continue
            seen.add(u)
            if u in self.extern or op_name(node.target) in MATMULS:
                first = min(first, self.pos[u])
            elif op_name(node.target) in VIEW_OPS:
                stack.extend(users.get(u, ()))
        return first

    def _work_out(self, names) -> None:
        passed, known = self.passed, self.known
        stack = [(a, False) for a in names if a not in passed]
        while stack:
            name, args_done = stack.pop()
            if name in passed:
                continue
            n = known.get(name)
            if n is None:
                passed[name] = frozenset()
                continue
            if not args_done and not self._boundary(n):
                pending = [a for a in n.args if a not in passed]
                if pending:
                    stack.append((name, True))
                    stack.extend((a, False) for a in pending)
                    continue
            realized, reads = self._realized(n)
            self.reads[name] = reads
            passed[name] = frozenset() if realized else frozenset(self._own(n))

    def _boundary(self, n: FxNode) -> bool:
        """A buffer whatever its arguments: nothing behind it needs working out."""
        return n.op != "call_function" or (
            (n.name in self.extern or op_name(n.target) in MATMULS) and not is_conv_with_bias(n))

    def _realized(self, n: FxNode) -> tuple[bool, frozenset[str]]:
        """Whether node `n` is a buffer by the time its consumers are lowered, and what it reads."""
        users, extern = self.users, self.extern
        if n.name in self.viewed:
            return False, frozenset((n.name,))  # a ReinterpretView: passes itself on, one read
        if self._boundary(n):
            return True, frozenset((n.name,))  # a graph input, an extern call's or a template kernel's buffer
        if n.dtype == "Sym" or any(s in n.target for s in SYMBOLIC):
            return True, frozenset()  # a size computed on the host: no origin of a device buffer
        if n.target == "operator.getitem" and n.args and n.args[0] in extern:
            return True, frozenset((n.name,))  # an element of a multi-output extern call
        if n.target == "operator.getitem" and n.constants[:1] == ("0",) and op_name(_target(self.known, n.args[0])) == "sort":
            # a sort's values: the buffer Sort.create realizes; its indices are a conversion made in
            # the sort's lowering (int16 to int64), not realized, that passes the sort's origins on
            return True, frozenset((n.name,))
        reads: set[str] = set()
        at = self.pos.get(n.name)
        for a in n.args:
            if (k := self.known.get(a)) is not None and k.dtype == "Sym":
                continue  # a size (dynamic shapes): a number in the kernel's code, no buffer read
            if not self.passed.get(a) or self._realized_before(a, at):  # a realized argument is one read
                reads.add(a)
            else:
                reads |= self.reads.get(a, frozenset())
        op = op_name(n.target)
        if op in REDUCTIONS or is_conv_with_bias(n):
            # passes its origins on (gathered before a consumer's lowering realizes it), but a
            # consumer loads its buffer: a reduction's result, or the convolution whose bias a
            # pointwise adds (the convolution is an extern call)
            reads = {n.name} | (set(self.reads.get(n.args[2], {n.args[2]})) if op not in REDUCTIONS else set())
        node_users = users.get(n.name, ())
        if op_name(n.target) in VIEW_OPS:
            if "output" in node_users and op_name(n.target) == "expand":
                # a graph output keeps eager's strides: an overlapping (expanded) view is copied
                # into a buffer of its own (require_stride_order), which its consumers then read
                return True, frozenset((n.name,))
            # a view realized for its users realizes its base, but stays a view: `gather_origins`
            # counts it unrealized and hands on the origins it was made with
            return False, frozenset(reads)
        if len(node_users) > 1 and not self._tuple(node_users) and (
                len(reads) > REALIZE_READS or any(u in extern for u in node_users) or "output" in node_users):
            return True, frozenset((n.name,))  # a reused result: stored rather than recomputed
        if op in SCANS:
            return True, frozenset((n.name,))  # its lowering realizes what it returns
        if op in REALIZED_BY_LOWERING:
            # realized where it is lowered, but over fewer elements than the threshold it is lowered
            # as two reductions, unrolled, that pass their origins on (a MoE router's softmax over 4
            # experts, in its topk's origins; over 8 it is realized)
            return not (1 < self._reduced_over(n) < UNROLL_REDUCTIONS), frozenset((n.name,))
        if len(reads) > REALIZE_ACC_READS or self._unrolled(n):
            return True, frozenset((n.name,))
        return False, frozenset(reads)

    def _tuple(self, node_users) -> bool:
        """Whether the users are tuple elements: the lowering returned a tuple (var_mean), which
        `run_node` neither realizes for reuse nor counts the users of."""
        known = self.known
        return all((u := known.get(name)) is not None and u.target == "operator.getitem" for name in node_users)

    def _unrolled(self, n: FxNode) -> bool:
        """A reduction over a few elements: Inductor unrolls it into a pointwise that inlines its
        input once per element, too large an inner function to pass on (it is stored)."""
        return op_name(n.target) in REDUCTIONS and 1 < self._reduced_over(n) <= UNROLL_REDUCTIONS

    def _reduced_over(self, n: FxNode) -> int:
        """How many elements node `n` reduces each of its results over (its results' shape: a
        tuple's first element's, for a node with several); 0 when unknown."""
        if not n.args:
            return 0
        source = self.known.get(n.args[0])
        shape = n.shape or next((u.shape for name in self.users.get(n.name, ())
                                 if (u := self.known.get(name)) is not None and u.target == "operator.getitem"), None)
        size_in, size_out = _numel(source.shape if source else None), _numel(shape)
        return size_in // size_out if size_in is not None and size_out else 0


def returns_own_tensor(node: FxNode, known: dict[str, FxNode], users: dict[str, list[str]]) -> bool:
    """Whether an extern call of `node` returns one tensor, the node's own result (its
    `origin_node`): not a mutating op (none), nor a call with several (its users take tuple
    elements), nor a convolution with a bias (a pointwise adds it)."""
    return (node.op == "call_function" and node.dtype is not None and not is_conv_with_bias(node)
            and op_name(node.target) not in VIEW_OPS
            and not any((u := known.get(name)) is not None and u.target == "operator.getitem"
                        for name in users.get(node.name, ())))


def _target(known: dict[str, FxNode], name: str) -> str:
    return node.target if (node := known.get(name)) is not None else ""


def _numel(shape) -> int | None:
    if not shape or not all(d.isdigit() for d in shape):
        return None  # symbolic (dynamic shapes) or unknown
    out = 1
    for d in shape:
        out *= int(d)
    return out




def viewed_inputs(launches, known: dict[str, FxNode]) -> frozenset[str]:
    """The 4-D graph inputs the output code passes as `reinterpret_tensor(name, its own size,
    channels-last strides, 0)`: lowered as a view of other strides, not copied."""
    out = set()
    for la in launches:
        for arg in la.args:
            # the node first, by the name _REINTERPRET would read (up to the first comma): most
            # reinterpreted tensors are buffers, not graph inputs, and need no regex
            if not arg.startswith("reinterpret_tensor(") or (node := known.get(arg[19:arg.find(",", 19)])) is None \
                    or node.op != "placeholder":
                continue
            m = _REINTERPRET.match(arg)
            if m is None or m["name"] in out:
                continue
            if len(node.shape) != 4 or not all(d.isdigit() for d in node.shape):
                continue
            size = tuple(int(d) for d in node.shape)
            if m["size"] == ", ".join(map(str, size)) and m["stride"] == ", ".join(map(str, _channels_last(size))):
                out.add(m["name"])
    return frozenset(out)


_REINTERPRET = re.compile(r"reinterpret_tensor\((?P<name>\w+), \((?P<size>[\d, ]+)\), \((?P<stride>[\d, ]+)\), 0\)$")


def _channels_last(size: tuple[int, ...]) -> tuple[int, ...]:
    n, c, h, w = size
    return (h * w * c, 1, w * c, c)


def is_conv_with_bias(node: FxNode) -> bool:
    return node.target.startswith("aten.convolution") and len(node.args) >= 3


# ops whose constant a generated kernel takes as an argument, not in its code: every layer's
# dropout kernel is one kernel, passed its seed's offset (`load_seed_offset`)
KERNEL_ARGUMENTS = {"inductor_lookup_seed"}


def kernel_constants(n: FxNode) -> tuple[str, ...] | None:
    """The constants a kernel with node `n` among its origins is specialised to; None for a matrix
    multiply or convolution, computed by its extern call (a kernel that adds a convolution's bias
    is the same code whatever the stride, padding or groups). The device a constant is made on is
    left out: FX writes it on some `full` nodes of a graph and not on others."""
    op = op_name(n.target)
    if op in MATMULS or op in KERNEL_ARGUMENTS:
        return None
    constants = n.constants
    for c in constants:  # a loop, not any(genexpr): called for every node a template is tried on
        if c.startswith("device = "):
            return tuple(c for c in constants if not c.startswith("device = "))
    return constants
