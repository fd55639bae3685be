"""The frozen dataclasses every artifact parser returns, named in Inductor's own words.

Nothing here knows how a file looks; the parsers fill these in. Every parse result carries
its own `warnings`: a line the parser did not understand, or a file that was missing or cut.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import field, fields
from functools import lru_cache

from compile_viz.artifacts.frozen import frozen, once

# --------------------------------------------------------------------------- lazy fields


class _Lazy:
    """A dataclass field that a parser may leave to be read on first access.

    Installed on the class after @dataclass, so the field keeps its place in __init__, repr,
    eq and hash; a value passed to __init__ lands in the instance __dict__ and wins. A parser
    that defers the field instead puts `_fill = (function, args)` in the __dict__: the first
    read calls `function(name, *args)`, which returns a dict holding at least that field,
    and stores what it returns.
    `_fill` holds module-level functions and plain data, so the object still pickles.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        d = obj.__dict__
        fn, args = d["_fill"]
        d.update(fn(self.name, *args))
        return d[self.name]


def _lazy_fields(*names: str):
    def install(cls):
        for name in names:
            setattr(cls, name, _Lazy(name))
        return cls
    return install


def deferred(cls, values: dict):
    """Return an instance of a dataclass built by a parser from `values`, a dict of its fields.

    A field missing from `values` is filled on first read by `values["_fill"]`, a pair
    (function, args): `function(field_name, *args)` returns that field, and any others it
    had to compute on the way, as a dict. Skips the frozen
    __init__ (one object.__setattr__ per field), most of the cost of building many nodes.
    `values` becomes the instance's __dict__: pass a dict made for it.
    """
    obj = object.__new__(cls)
    _set_attr(obj, "__dict__", values)  # the dict itself becomes the instance's: no copy
    return obj


_set_attr = object.__setattr__


# The linking layer builds LaunchLinks and GroupLinks field by field, not through the frozen
# __init__ (one object.__setattr__ per field): hundreds a graph, at half the cost. The same trick
# as `deferred`, for slotted classes.
blank = object.__new__  # blank(LaunchLink): an instance with no field set yet


def slot_setters(cls, names: tuple[str, ...]) -> tuple:
    """Return the setter of each named slot of a frozen, slotted dataclass, in the order given.

    `names` must be every field of `cls`, so that an instance made with `blank` and filled
    through them has none unset (checked once, at import).
    """
    if set(names) != {f.name for f in fields(cls)}:
        raise TypeError(f"slot_setters({cls.__name__}): {sorted(names)} are not its fields")
    return tuple(cls.__dict__[name].__set__ for name in names)


# --------------------------------------------------------------------------- common


@frozen(slots=True)
class ParseWarning:
    """A line the parser did not understand, or a problem with a whole file (line 0)."""

    file: str
    line: int
    text: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.text}"


@frozen(slots=True)
class SourceLocation:
    """Where in the user's code an FX node came from (`# File: path:line in fn, code: ...`)."""

    file: str
    line: int
    function: str
    code: str


# --------------------------------------------------------------------------- FX graphs


@_lazy_fields("constants")
@frozen
class FxNode:
    """One node of an FX graph as `print_readable` writes it."""

    name: str
    op: str  # placeholder | call_function | get_attr | output
    target: str  # "aten.mm.default", "operator.getitem", "" for placeholders and output
    dtype: str | None  # "f32", "bf16", "Sym" for symbolic ints; None when unannotated
    shape: tuple[str, ...] | None  # sizes as written, symbolic ones ("s0", "2*s0") kept as text
    stride: tuple[str, ...] | None  # only where the file writes it
    args: tuple[str, ...]  # names of the nodes it uses, in order (the graph's edges)
    constants: tuple[str, ...]  # the other arguments, as text
    source: SourceLocation | None
    line: int  # 1-based line in the file
    subgraph: str = ""  # "" for the top-level forward, else the nested class name


@frozen(slots=True)
class FxGraph:
    """An FX graph file: `fx_graph_readable.py` (AOT) or `fx_graph_transformed.py` (post-grad)."""

    path: str
    class_name: str
    nodes: tuple[FxNode, ...]  # every node of the top-level forward, output last
    inputs: tuple[str, ...]
    outputs: tuple[str | None, ...]  # returned names, None where `None` is returned
    subgraphs: tuple[str, ...]  # names of nested graph classes, their nodes carry `subgraph`
    subgraph_nodes: tuple[FxNode, ...]
    warnings: tuple[ParseWarning, ...]

    def node(self, name: str) -> FxNode | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    @property
    def call_nodes(self) -> tuple[FxNode, ...]:
        return tuple(n for n in self.nodes if n.op == "call_function")


# --------------------------------------------------------------------------- scheduler IR


@frozen(slots=True)
class Dependency:
    """A read or write of a scheduler node: `MemoryDep('buf0', 100*d0 + d1, {d0: 100})`."""

    kind: str  # MemoryDep | StarDep | WeakDep | ...
    buffer: str
    index: str  # index expression ("" for StarDep/WeakDep)
    ranges: str  # "{d0: 100, d1: 100}" as written


@frozen(slots=True)
class Layout:
    """A buffer's layout as the IR prints it: `FixedLayout('cuda:0', torch.float32, size=[8, 64], stride=[64, 1])`."""

    kind: str  # FixedLayout | FlexibleLayout | NoneLayout | ...
    device: str
    dtype: str  # "torch.float32"
    size: tuple[str, ...]
    stride: tuple[str, ...]


@frozen(slots=True)
class Buffer:
    """An output buffer of a scheduler node (`buf3: ComputedBuffer`)."""

    name: str
    ir_type: str  # ComputedBuffer | ExternKernelOut | MultiOutput | ...
    layout: Layout | None
    users: tuple[str, ...]  # scheduler node names, "OUTPUT" for graph outputs


@_lazy_fields("writes", "reads", "unmet", "outputs", "loop_body_ops", "device", "iteration", "sizes", "extern_kernel", "line")
@frozen
class SchedulerNode:
    """One scheduler node of `ir_pre_fusion.txt` / `ir_post_fusion.txt`."""

    name: str  # op3, op1_op2_op3; buf3, buf1_buf2 in older torch
    node_type: str  # as written: "SchedulerNode(ComputedBuffer)", "FusedSchedulerNode(...)"
    kind: str  # scheduler | extern | fused | foreach | template | nop | outer_loop | grouped | other
    writes: tuple[Dependency, ...]
    reads: tuple[Dependency, ...]  # unmet then met dependencies
    unmet: tuple[str, ...]  # buffers read that other scheduler nodes write
    outputs: tuple[Buffer, ...]
    device: str
    iteration: str  # group.iteration as written, e.g. "(100, 100)"
    sizes: str
    loop_body_ops: tuple[str, ...]  # ops.* calls of the loop body, in order ("load", "exp", ...)
    extern_kernel: str  # "extern_kernels.mm" for extern nodes, else ""
    members: tuple[str, ...]  # for fused/foreach/grouped: the member nodes, in order
    line: int

    @once
    def buffer_names(self) -> tuple[str, ...]:
        found = self._outputs_apart("buffer_names")
        return found["buffer_names"] if found else tuple(b.name for b in self.outputs)

    @once
    def buffer_users(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(buffer, its users) per output buffer: the outputs without their layouts."""
        found = self._outputs_apart("buffer_users")
        return found["buffer_users"] if found else tuple((b.name, b.users) for b in self.outputs)

    def _outputs_apart(self, field: str) -> dict | None:
        """`field` from the parser without parsing the layouts, while `outputs` is unread (None
        after); what the parser read on the way (names with users) is kept too."""
        d = self.__dict__
        if "outputs" in d or "_fill" not in d:
            return None
        fn, args = d["_fill"]
        found = fn(field, *args)
        d.update(found)
        return found


@_lazy_fields("line")
@frozen
class FusionGroup:
    """A node of the post-fusion IR that holds several scheduler nodes fused into one kernel."""

    name: str
    kind: str  # fused | foreach | grouped | ...
    node_type: str
    members: tuple[str, ...]  # member scheduler nodes, in order
    buffers: tuple[str, ...]  # buffers written by the group
    line: int


@frozen(slots=True)
class SchedulerIR:
    """The scheduler nodes of one IR dump (`ir_pre_fusion.txt` or `ir_post_fusion.txt`)."""

    path: str
    stage: str  # pre_fusion | post_fusion
    nodes: tuple[SchedulerNode, ...]  # top-level nodes in file order
    member_nodes: tuple[SchedulerNode, ...]  # nodes nested inside fused groups
    fusion_groups: tuple[FusionGroup, ...]  # every FusedSchedulerNode header, nested ones too
    warnings: tuple[ParseWarning, ...]


# --------------------------------------------------------------------------- output_code.py


@frozen(slots=True)
class KernelComments:
    """The comments Inductor writes above a kernel definition or launch."""

    source_nodes: tuple[str, ...] = ()
    original_aten: tuple[str, ...] = ()
    source_to_aten: tuple[tuple[str, tuple[str, ...]], ...] = ()  # "softmax => div" per line
    graph_fragment: tuple[str, ...] = ()  # the fragment's lines, without "# "
    provenance_handle: str = ""  # "triton_poi_fused_add_0:3" on launches
    sorted_nodes: bool = True  # False for "Unsorted Source Nodes"


@frozen(slots=True)
class Kernel:
    """A kernel defined in output_code.py (`name = async_compile.triton('name', '''...''')`)."""

    name: str
    backend: str  # triton | cpp | cuda | halide | ...
    kind: str  # pointwise | reduction | persistent_reduction | template | foreach | split_scan | cpp | other
    heuristics: str  # the decorator: "pointwise", "persistent_reduction", ... ("" for cpp)
    kernel_path: str
    comments: KernelComments
    source: str  # the kernel's own code, as in the file (metadata: artifacts.kernel_meta)
    line: int  # line of `name = async_compile...`
    source_line: int  # line in output_code.py where `source` starts
    end_line: int


@_lazy_fields("args")
@frozen
class KernelLaunch:
    """One call in `call()`: a launch of a defined kernel, or an extern / fallback call."""

    index: int  # position among launches in call()
    kernel: str  # definition it launches, or e.g. "extern_kernels.mm", "aten._scaled_dot_product..."
    is_extern: bool
    args: tuple[str, ...]  # top-level argument texts (split on first access)
    buffers: tuple[str, ...]  # buffer and input names among the arguments
    outputs: tuple[str, ...]  # names assigned by the statement (`buf5 = aten...`) or `out=` buffers
    comments: KernelComments
    line: int
    function: str  # "call" or "partition_0" ...


@frozen(slots=True)
class BufferAllocation:
    """`buf0 = empty_strided_cuda(...)`, or a reuse `buf3 = buf0; del buf0  # reuse`."""

    name: str
    kind: str  # empty_strided | reuse | alloc_from_pool | element (`buf16 = buf15[0]`; reused_from: `buf15[0]`) | other
    size: str
    stride: str
    dtype: str
    device: str
    reused_from: str
    line: int


@frozen(slots=True)
class SizeAssert:
    """`assert_size_stride(name, size, stride)` in call(): a graph input's expected size and stride."""

    name: str
    size: str
    stride: str
    line: int


@frozen(slots=True)
class OutputCode:
    """What `output_code.py` holds: its kernels, the launches of call(), its buffers and asserts."""

    path: str
    aot_id: str
    kernels: tuple[Kernel, ...]
    launches: tuple[KernelLaunch, ...]
    allocations: tuple[BufferAllocation, ...]
    asserts: tuple[SizeAssert, ...]
    graph_inputs: tuple[str, ...]
    returns: str  # the return statement of call(), as written
    warnings: tuple[ParseWarning, ...]

    def kernel(self, name: str) -> Kernel | None:
        for k in self.kernels:
            if k.name == name:
                return k
        return None


# --------------------------------------------------------------------------- provenance


@frozen(slots=True)
class ProvenanceMap:
    """`inductor_provenance_tracking_node_mappings.json`: node and kernel mappings, as written."""

    path: str
    pre_to_post: dict[str, tuple[str, ...]]
    post_to_pre: dict[str, tuple[str, ...]]
    code_to_post: dict[str, tuple[str, ...]]  # "kernel:handle" -> post-grad nodes
    post_to_code: dict[str, tuple[str, ...]]
    warnings: tuple[ParseWarning, ...]


# --------------------------------------------------------------------------- discovery


@frozen(slots=True)
class GraphBreak:
    """A graph break reported in torchdynamo/debug.log (or by the capture)."""

    reason: str
    file: str
    line: int
    code: str


@frozen(slots=True)
class StackFrame:
    """One frame of a user stack (`dynamo_start`) or of a kernel's stack trace."""

    file: str
    line: int
    function: str
    code: str  # the source line as Dynamo logged it ("" when it did not)


@frozen(slots=True)
class GraphFolder:
    """One compiled graph found by discovery: `torchinductor/model__0_forward_1.0/`."""

    id: str  # folder name, prefixed by the run's folder when several runs are present
    name: str  # folder name
    kind: str  # inference | forward | backward | unknown
    location: str  # path inside the source (folder path, or "zip:member/prefix")
    files: tuple[str, ...]  # artifact file names present


# --------------------------------------------------------------------------- fusion log


@frozen(slots=True)
class FusionRound:
    """One round of Inductor's fusion loop (`===== attempting fusion (2/10): 5 nodes =====`)."""

    index: int  # 1-based, as the log numbers it
    limit: int  # the most rounds Inductor would run (10)
    nodes_before: int
    nodes_after: int | None  # None: the log ends before the round completed
    line: int


@frozen(slots=True)
class FusionPair:
    """A pair of scheduler nodes the scheduler fused (`fusing op2 with op3`) or refused
    (`cannot fuse op2 with op5: no shared data`)."""

    round: int
    first: str
    second: str
    result: str  # fused: the node it made (`op2_op3`); refused: ""
    reason: str  # refused: the reason as logged; fused: ""
    kind: str  # refused: a short stable key of the reason (fusion_log.REASON_KINDS); fused: ""
    line: int


@frozen(slots=True)
class FusionDecisions:
    """Every fusion decision Inductor logged while compiling one graph."""

    graph: str  # the graph folder the log names (`model__0_forward_1.0`), or "" when it names none
    compile_id: str  # `0/0`, from the lines' `[0/0]`
    rounds: tuple[FusionRound, ...]
    fused: tuple[FusionPair, ...]
    refused: tuple[FusionPair, ...]


@frozen(slots=True)
class FusionLog:
    """A run's `logs/fusion.log` (or any saved `TORCH_LOGS="+fusion"` output), graph by graph."""

    path: str
    graphs: tuple[FusionDecisions, ...]
    warnings: tuple[ParseWarning, ...]


# --------------------------------------------------------------------------- kernel stacks (TORCH_TRACE)

EXTERN_PREFIX = "torch.ops."  # `torch.ops.aten.x.default` in the trace is `aten.x.default` in call()


@frozen(slots=True)
class KernelStack:
    """The user stacks of one launch."""

    index: int  # position in call(): the handle less one
    kernel: str  # as call() names it (the trace's `torch.ops.` prefix of extern ops dropped)
    stacks: tuple[tuple[StackFrame, ...], ...]  # each outermost frame first

    @property
    def innermost(self) -> tuple[tuple[str, int], ...]:
        """The (file, line) of each stack's innermost frame, sorted, no repeats."""
        return tuple(sorted({(s[-1].file, s[-1].line) for s in self.stacks if s}))

    @property
    def source_lines(self) -> tuple[tuple[str, int], ...]:
        """The (file, line) each stack points the user at, sorted, no repeats: its innermost frame
        outside torch's own files, where the user's code (or a library's) calls into torch (the
        `flex_attention(...)` call, not torch's flex_attention.py; `F.pad(...)`, not functional.py);
        the innermost frame when every frame is torch's."""
        return tuple(sorted({(f.file, f.line) for f in map(user_frame, self.stacks) if f is not None}))


# torch's own files: installed (site-packages/torch/…, dist-packages/torch/…) or a source checkout's
# packages (…/torch/nn/…, …/torch/_higher_order_ops/…); a user's folder named torch is not one
TORCH_FILE = re.compile(r"[/\\](?:site|dist)-packages[/\\]torch[/\\]"
                        r"|[/\\]torch[/\\](?:_[a-z_]+|nn|fx|autograd|distributed|utils|amp|cuda|export)[/\\]")


def user_frame(stack: tuple[StackFrame, ...]) -> StackFrame | None:
    """Return the innermost frame of `stack` outside torch's own files, else its innermost (None if empty)."""
    return next((f for f in reversed(stack) if not _torch_file(f.file)), stack[-1] if stack else None)


_torch_file = lru_cache(maxsize=1 << 12)(lambda file: TORCH_FILE.search(file) is not None)  # a graph: a few dozen files


@frozen(slots=True)
class KernelStacks:
    """A graph's per-launch stacks, in handle order."""

    launches: tuple[KernelStack, ...]
    warnings: tuple[ParseWarning, ...]

    def of_launch(self, index: int, kernel: str, handle: str = "") -> KernelStack | None:
        """The stacks of launch `index` when the trace names the same kernel there, else None.
        With the launch's own `[Provenance debug handles]` comment (`extern_kernels.mm:12`), the
        stacks under that handle: a graph's handles need not count its launches from 1 (a T5
        backward's start at 4, which put every extern mm on another mm's stack)."""
        name, _, number = handle.rpartition(":")
        if number.isdigit():
            index, kernel = int(number) - 1, name
        at = bisect_left(self.launches, index, key=_index_of)  # launches are in index order
        if at < len(self.launches) and (ks := self.launches[at]).index == index:
            return ks if ks.kernel == kernel.removeprefix(EXTERN_PREFIX) else None
        return None


def _index_of(ks: KernelStack) -> int:
    return ks.index


@frozen(slots=True)
class GraphParse:
    """Everything parsed for one compiled graph. A missing file leaves its field None."""

    folder: GraphFolder
    aot_graph: FxGraph | None  # fx_graph_readable.py (field names: the `name`s of artifacts/kinds.py)
    post_grad_graph: FxGraph | None  # fx_graph_transformed.py
    pre_fusion: SchedulerIR | None
    post_fusion: SchedulerIR | None
    output_code: OutputCode | None
    provenance: ProvenanceMap | None
    warnings: tuple[ParseWarning, ...]  # of all files, plus one per missing file
    # from the run's logs/fusion.log, when it has one (captured since issue 11); None otherwise
    fusion_decisions: FusionDecisions | None = None
    # Inductor's per-launch user stacks (read by artifacts/trace/kernel_stacks.py), from the TORCH_TRACE log beside
    # the debug folder (a run's trace/) or from the trace alone; None when there is none
    kernel_stacks: KernelStacks | None = None
    # ahead of time: the program torch.export made (the run's export/exported_program.txt, a trace's
    # exported_program entry); None for a JIT graph
    exported_program: ExportedProgram | None = None

    @property
    def id(self) -> str:
        return self.folder.id

    @property
    def kind(self) -> str:
        return self.folder.kind

    def artifact(self, name: str):
        """The parse of the artifact named `name` in artifacts/kinds.py (None when absent)."""
        return getattr(self, name, None)


@frozen(slots=True)
class DebugParse:
    """The parse of a whole debug tree (one or several runs)."""

    root: str
    graphs: tuple[GraphParse, ...]
    graph_breaks: tuple[GraphBreak, ...]
    warnings: tuple[ParseWarning, ...] = field(default=())
    profiles: tuple[str, ...] = field(default=())  # torch.profiler traces in the tree (paths in it)

    def graph(self, graph_id: str) -> GraphParse | None:
        for g in self.graphs:
            if g.id == graph_id:
                return g
        return None


# --------------------------------------------------------------------------- torch.export


@frozen(slots=True)
class InputSpec:
    """One input of an exported program's graph signature (torch.export's InputSpec)."""

    name: str  # the graph's placeholder: "p_linear_weight", "x"
    kind: str  # USER_INPUT | PARAMETER | BUFFER | CONSTANT_TENSOR | CUSTOM_OBJ | TOKEN
    target: str  # the module's attribute ("linear.weight"); "" for user inputs
    persistent: bool | None  # buffers only


@frozen(slots=True)
class OutputSpec:
    """One output of an exported program's graph signature (torch.export's OutputSpec)."""

    name: str
    kind: str  # USER_OUTPUT | BUFFER_MUTATION | USER_INPUT_MUTATION | LOSS_OUTPUT | GRADIENT_TO_... | TOKEN
    target: str


@frozen(slots=True)
class ExportedProgram:
    """`str(ExportedProgram)`: what torch.export made, as the `exported_program` trace entry and
    the run's export/exported_program.txt hold it: the graph, its signature, the range constraints."""

    path: str
    graph: FxGraph
    inputs: tuple[InputSpec, ...]
    outputs: tuple[OutputSpec, ...]
    range_constraints: str
    warnings: tuple[ParseWarning, ...]

    def inputs_of(self, kind: str) -> tuple[InputSpec, ...]:
        return tuple(i for i in self.inputs if i.kind == kind)
