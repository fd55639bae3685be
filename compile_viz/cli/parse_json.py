"""What `compile-viz parse --json` prints: the document of a parse, a graph at a time, and the
compile ids of a TORCH_TRACE log."""

from __future__ import annotations

import json
import sys
from itertools import chain
from json.encoder import encode_basestring_ascii

from compile_viz.artifacts.model import FxNode, GraphParse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from compile_viz.artifacts.trace.model import CompileRecord, TraceLog
    from compile_viz.linking.model import GraphIndex


# Compact, because an indent makes `json` use its pure-Python encoder (gpt_small: 0.13 s against
# 0.024 s for the same values); no check for cycles (15% of the encoding): the documents are built
# here as trees. `python -m json.tool` lays the output out for reading.
_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_str = encode_basestring_ascii  # what _ENCODE writes for a str (ensure_ascii, the default)


def write_json(doc: dict, out) -> None:
    """Write `doc` to `out` as compact JSON on one line, in one write (`json.dump` makes ~10^5)."""
    out.write(_ENCODE(doc))
    out.write("\n")  # not `+ "\n"`: that copies the whole text once more


def write_parse_json(parsed, out) -> None:
    """Write `write_json(debug_parse_json(parsed), out)`'s text a graph at a time: each graph's
    document is built, encoded, written and dropped before the next (gpt_deep: a third less peak
    memory than the whole document at once)."""
    write_document(parsed, (graph_text(g) for g in parsed.graphs), out)


def write_document(run_part, graph_texts, out, profile: dict | None = None) -> None:
    """Write the document of `debug_parse_json` from its parts: the run's (`root`, graph breaks,
    warnings, traces; its `graphs` unused) and each graph's JSON text, written as it comes; with
    `profile`, the run's profile summary last. A text is a str, or an object that writes itself
    (`write_to(out)`: cli/forked.FileText, a text left where the process that made it wrote it)."""
    out.write('{"root":' + _ENCODE(run_part.root) + ',"graphs":[')
    tail = None
    for i, text in enumerate(graph_texts):
        if i:
            out.write(",")
        if type(text) is str:
            out.write(text)
        else:
            text.write_to(out)
        if tail is None:  # after the first graph, while forked processes may still make the others
            tail = _tail_text(run_part, profile)  # (a 48-layer log's compile ids: 2.6 MB, ~8 ms)
    out.write(tail or _tail_text(run_part, profile))


def _tail_text(run_part, profile: dict | None) -> str:
    """The document's keys after "graphs", to its end."""
    tail = _run_json(run_part) | ({"profile": profile} if profile is not None else {})
    return "]," + _ENCODE(tail)[1:] + "\n"  # without the "{"


# A node's JSON is written by hand: the same text the encoder gives for the same values, without
# building a dict per node first (nodes are two thirds of the document; gpt_small's backward:
# 6 ms against 12). tests/test_parse_cli.py checks it against the encoder. The document is made of
# parts joined once: on a 2 MB document, concatenating its pieces copied ~6 MB more, and fresh
# memory costs a page fault per 4 KB (~3 us on the VM of bench/RESULTS.md).
def _nodes_parts(nodes: tuple[FxNode, ...], parts: list[str]) -> None:
    """Append the JSON list of `nodes` to `parts`, each {"name", "op", "target", "dtype", "shape",
    "stride", "args", "constants", "source_file", "source_line", "source_code", "subgraph"}."""
    # Each name, op, target, dtype, subgraph and arg is written between quotes as it is (the
    # encoder's escape call for each, 6 a node, was a third of the time of the lists); they are
    # kept in `raw` and checked at the end, all at once: if any needs an escape, the list is
    # written again through the encoder's escape (_nodes_parts_escaped).
    start = len(parts)
    raw: list[str] = []
    sources: dict[int, str] = {}  # the nodes of one source line share its SourceLocation
    # the JSON of a shape, stride or constants tuple, written once: a graph has few distinct ones
    # (gpt2_deep's backward: 12,285 nodes, ~300 shapes), a third of the node lists' time
    seqs: dict[tuple[str, ...], str] = {(): "[]"}
    # "op" to "stride" for each (op, target, dtype, shape, stride): ~1,000 of them in the 12,285
    # nodes of gpt2_deep's backward, each made once (fewer pieces to join per node)
    mids: dict[tuple, str] = {}
    parts.append("[")
    out: list[str] = []  # the nodes' texts since the last part
    sep = ""
    last_src = where = None
    for n in nodes:
        name, args, consts, subgraph, src = n.name, n.args, n.constants, n.subgraph, n.source
        raw += (name, subgraph)
        raw += args
        key = (n.op, n.target, n.dtype, n.shape, n.stride)
        if (mid := mids.get(key)) is None:
            mid = mids[key] = _mid_text(*key, seqs)
            raw += (key[0], key[1], key[2] or "")
        if src is not last_src or where is None:  # runs of nodes share one (a line's ops)
            last_src = src
            where = sources.get(id(src))
            if where is None:
                where = sources[id(src)] = _source_text(src)
        if (consts_text := seqs.get(consts)) is None:
            consts_text = seqs[consts] = _strs(consts)
        args_text = f'["{_QQ.join(args)}"]' if args else "[]"
        out.append(
            f'{sep}{{"name":"{name}",{mid},"args":{args_text},'
            f'"constants":{consts_text}{where},"subgraph":"{subgraph}"}}'
        )
        sep = ","
        if len(out) == _CHUNK:
            parts.append("".join(out))
            out.clear()  # their strs freed: the next nodes' reuse their memory
    out.append("]")
    parts.append("".join(out))
    if not _plain("".join(raw)):
        del parts[start:]
        _nodes_parts_escaped(nodes, parts)


class _Memo(dict):
    """A dict that makes a missing key's value with `make` and keeps it: looked up through map(),
    a hit runs no Python code."""

    __slots__ = ("make",)

    def __init__(self, make) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key):
        value = self[key] = self.make(key)
        return value


# Nodes joined into one part: packing encodes a part at a time (a part for each node was ~12,000
# small strs encoded one by one at 48 layers), and a chunk's node texts, freed once joined, leave
# their memory to the next chunk's.
_CHUNK = 512


def _mid_text(op: str, target: str, dtype: str | None, shape, stride, seqs: dict) -> str:
    """A node's "op", "target", "dtype", "shape" and "stride" as JSON, without braces; the strs
    between quotes as they are (checked by `_nodes_parts`), the tuples through `seqs`."""
    if shape is not None and (shape_text := seqs.get(shape)) is None:
        shape_text = seqs[shape] = _strs(shape)
    if stride is not None and (stride_text := seqs.get(stride)) is None:
        stride_text = seqs[stride] = _strs(stride)
    dtype_text = "null" if dtype is None else f'"{dtype}"'
    return (f'"op":"{op}","target":"{target}","dtype":{dtype_text},'
            f'"shape":{"null" if shape is None else shape_text},"stride":{"null" if stride is None else stride_text}')


_QQ = '","'
# What encode_basestring_ascii escapes besides non-ASCII (json.encoder's ESCAPE_ASCII)
_ESCAPED_ASCII = bytes(range(0x20)) + b'"\\\x7f'


def _plain(text: str) -> bool:
    """Whether encode_basestring_ascii writes `text` as itself between quotes: it escapes '"',
    '\\' and anything outside ' '..'~' (for ASCII text, bytes.translate drops those: ~1
    instruction a character, where str.isprintable takes ~10)."""
    return text.isascii() and len(text.encode("ascii").translate(None, _ESCAPED_ASCII)) == len(text)


def _nodes_parts_escaped(nodes: tuple[FxNode, ...], parts: list[str]) -> None:
    """`_nodes_parts` for nodes with a str that needs escaping: each through the encoder's escape."""
    sources: dict[int, str] = {}
    seqs: dict[tuple[str, ...], str] = {(): "[]"}
    parts.append("[")
    sep = ""
    for n in nodes:
        shape, stride, src, args, consts, dtype = n.shape, n.stride, n.source, n.args, n.constants, n.dtype
        where = sources.get(id(src))
        if where is None:
            where = sources[id(src)] = _source_text(src)
        if shape is None:
            shape_text = "null"
        elif (shape_text := seqs.get(shape)) is None:
            shape_text = seqs[shape] = _strs(shape)
        if stride is None:
            stride_text = "null"
        elif (stride_text := seqs.get(stride)) is None:
            stride_text = seqs[stride] = _strs(stride)
        if (consts_text := seqs.get(consts)) is None:
            consts_text = seqs[consts] = _strs(consts)
        parts.append(
            f'{sep}{{"name":{_str(n.name)},"op":{_str(n.op)},"target":{_str(n.target)},'
            f'"dtype":{"null" if dtype is None else _str(dtype)},"shape":{shape_text},"stride":{stride_text},'
            f'"args":{_strs(args) if args else "[]"},"constants":{consts_text}{where},"subgraph":{_str(n.subgraph)}}}'
        )
        sep = ","
    parts.append("]")


def _source_text(src) -> str:
    if src is None:
        return ',"source_file":null,"source_line":null,"source_code":null'
    return (',"source_file":' + _opt(src.file) + ',"source_line":' + _ENCODE(src.line)
            + ',"source_code":' + _opt(src.code))


def _strs(items: tuple[str, ...]) -> str:
    """The JSON list of `items`, each through the encoder's escape."""
    return "[" + ",".join(map(_str, items)) + "]"


def _plain_strs(items: tuple[str, ...]) -> str:
    """The JSON list of `items`, when none needs an escape (`_plain`)."""
    return f'["{_QQ.join(items)}"]' if items else "[]"


def _opt(text: str | None) -> str:
    return "null" if text is None else _str(text)


def graph_json(g: GraphParse) -> dict:
    """One graph's document as values (tests, and anything in-process that wants them)."""
    return json.loads(graph_text(g))


def graph_text(g: GraphParse, times=None, index: GraphIndex | None = None) -> str:
    """One graph's document as JSON text: its keys in order, the node lists written by hand; with
    `times` (linking.profile.GraphTime, or False for a profiled run's graph that none joined), each
    launch's measured time (or why it has none). `index`: the graph's, when already built."""
    return "".join(graph_parts(g, times, index))


def graph_parts(g: GraphParse, times=None, index: GraphIndex | None = None, encoded: bool = False) -> list:
    """graph_text(g, times, index) as the strs it is made of, not joined (cli/forked.Parts); with
    `encoded`, as their ASCII bytes, each section's encoded as soon as it is made (_encode_from)."""
    from compile_viz.linking import build_index  # the linking layer is loaded for --json only

    # Encoding a section at once frees its strs for the next section's to reuse: encoded all at the
    # end, the text was in memory twice (gpt2_deep's backward: 6.6 MB, a page fault per fresh 4 KB).
    encode = _encode_from if encoded else _keep
    parts = [_ENCODE({"id": g.id, "kind": g.kind, "files": list(g.folder.files)})[:-1], ',"fx_nodes":']
    _nodes_parts(g.aot_graph.nodes if g.aot_graph else (), parts)
    encode(parts, 0)
    start = len(parts)
    parts.append(',"post_grad_nodes":')
    _nodes_parts(g.post_grad_graph.nodes if g.post_grad_graph else (), parts)
    encode(parts, start)
    start = len(parts)
    parts += [",", _rest_text(g), ',"links":']
    _links_parts(index or build_index(g), parts, times)
    parts.append("}")
    encode(parts, start)
    return parts


def _encode_from(parts: list, start: int) -> None:
    """Encode parts[start:] as ASCII, as a document's text is (the encoder escapes the rest, and a
    str is written between quotes as it is only when it needs no escape): forked.Parts takes its
    bytes parts for ASCII without reading them again. A section that is not is left as strs."""
    try:
        parts[start:] = [p.encode("ascii") for p in parts[start:]]
    except UnicodeEncodeError:
        pass


def _keep(parts: list, start: int) -> None:
    pass


def _rest_text(g: GraphParse) -> str:
    """The graph's keys between its node lists and its links, as JSON without the braces: its
    scheduler nodes, fusion groups, kernels, launches, warnings, fusion decisions (and, ahead of
    time, exported program). The launches are written by hand, as the launch links are: a dict and
    four lists made for each of a 48-layer backward's 919 launches took longer than their encoding."""
    oc = g.output_code
    post = g.post_fusion
    kernels = _ENCODE([
        {
            "name": k.name,
            "backend": k.backend,
            "kind": k.kind,
            "heuristics": k.heuristics,
            "kernel_path": k.kernel_path,
            "source": k.source,
            "line": k.line,
            "source_nodes": list(k.comments.source_nodes),
            "original_aten": list(k.comments.original_aten),
            "source_to_aten": {src: list(nodes) for src, nodes in k.comments.source_to_aten},
            "graph_fragment": list(k.comments.graph_fragment),
        }
        for k in (oc.kernels if oc else ())
    ])
    after = {
        "warnings": [str(w) for w in g.warnings],
        "fusion_decisions": fusion_json(g.fusion_decisions),
        # ahead of time only (a JIT graph's document is as it was): the exported program's signature
        **({"exported_program": exported_json(g.exported_program)} if g.exported_program is not None else {}),
    }
    return "".join([
        '"scheduler_nodes":', _scheduler_nodes_text(g.pre_fusion.nodes if g.pre_fusion else ()),
        ',"fusion_groups":', _fusion_groups_text(post.fusion_groups if post else ()),
        ',"kernels":', kernels, ',"launches":', _launches_text(oc.launches if oc else ()), ",",
        _ENCODE(after)[1:-1]])


# Scheduler nodes and fusion groups are written by hand too: the encoder took ~1.2 us for each of a
# 48-layer backward's 1,451 scheduler nodes (the dict and list made for each, then its many small
# strs gathered and joined), against ~0.4 us here. Each str goes through the encoder's escape, so
# the text is the encoder's whatever the names; tests/test_parse_cli.py checks it against it.
def _scheduler_nodes_text(nodes) -> str:
    """The JSON list of pre-fusion scheduler nodes, each {"name", "type", "kind", "buffers"}."""
    return "[" + ",".join([
        f'{{"name":{_str(n.name)},"type":{_str(n.node_type)},"kind":{_str(n.kind)},"buffers":{_strs(n.buffer_names)}}}'
        for n in nodes]) + "]"


def _fusion_groups_text(groups) -> str:
    """The JSON list of post-fusion scheduler nodes, each {"name", "kind", "members", "buffers"}."""
    return "[" + ",".join([
        f'{{"name":{_str(f.name)},"kind":{_str(f.kind)},"members":{_strs(f.members)},"buffers":{_strs(f.buffers)}}}'
        for f in groups]) + "]"


def _group_links_text(groups) -> str:
    """The JSON list of a graph's GroupLinks, each {"name", "kind", "members", "buffers",
    "fused_away", "launches"}."""
    return "[" + ",".join([
        f'{{"name":{_str(g.name)},"kind":{_str(g.kind)},"members":{_strs(g.members)},"buffers":{_strs(g.buffers)},'
        f'"fused_away":{_strs(g.fused_away)},"launches":[{",".join(map(int.__repr__, g.launches))}]}}'
        for g in groups]) + "]"


def _launches_text(launches) -> str:
    """The JSON list of a graph's launches, each {"index", "kernel", "is_extern", "args", "buffers",
    "source_nodes", "original_aten", "provenance_handle", "line"}; tests/test_parse_cli.py checks it
    against the encoder."""
    plain = _plain("".join([x for la in launches for names in (
        la.args, la.buffers, la.comments.source_nodes, la.comments.original_aten) for x in names]))
    strs = _plain_strs if plain else _strs
    return "[" + ",".join([
        f'{{"index":{_value(la.index)},"kernel":{_value(la.kernel)},"is_extern":{_value(la.is_extern)},'
        f'"args":{strs(la.args)},"buffers":{strs(la.buffers)},"source_nodes":{strs(la.comments.source_nodes)},'
        f'"original_aten":{strs(la.comments.original_aten)},"provenance_handle":{_value(la.comments.provenance_handle)},'
        f'"line":{_value(la.line)}}}'
        for la in launches]) + "]"


def exported_json(ep) -> dict:
    """An exported program's graph signature: inputs (name, kind, target, persistent), outputs, range constraints."""
    return {
        "inputs": [{"name": i.name, "kind": i.kind, "target": i.target, "persistent": i.persistent} for i in ep.inputs],
        "outputs": [{"name": o.name, "kind": o.kind, "target": o.target} for o in ep.outputs],
        "range_constraints": ep.range_constraints,
    }


def fusion_json(decisions) -> dict:
    """A graph's fusion decisions (empty lists when its run has no fusion log)."""
    if decisions is None:
        return {"rounds": [], "fused": [], "refused": []}
    return {
        "rounds": [{"index": r.index, "nodes_before": r.nodes_before, "nodes_after": r.nodes_after}
                   for r in decisions.rounds],
        "fused": [{"round": p.round, "first": p.first, "second": p.second, "result": p.result} for p in decisions.fused],
        "refused": [{"round": p.round, "first": p.first, "second": p.second, "reason": p.reason, "kind": p.kind}
                    for p in decisions.refused],
    }


def links_json(index: GraphIndex) -> dict:
    """A graph's links as values (tests, and anything in-process that wants them)."""
    return json.loads(links_text(index))


def links_text(index: GraphIndex) -> str:
    """A graph's links as JSON text: its launches, each node's launches (or why it has none), its
    fusion groups, summary and warnings."""
    parts: list[str] = []
    _links_parts(index, parts)
    return "".join(parts)


def _links_parts(index: GraphIndex, parts: list[str], times=None) -> None:
    """Append links_text(index) to `parts`. The per-node maps are written by hand, as the node lists
    are (a small object for each of thousands of nodes)."""
    from compile_viz.linking.model import AOT, POST_GRAD, NodeLinks

    maps = {POST_GRAD: "", AOT: ""}  # each graph's "name":{...} entries, joined with ","
    links = index.nodes
    if isinstance(links, NodeLinks):
        per_graph = list(links.by_graph())
    else:  # any other mapping of NodeLinks: grouped by graph the same way
        grouped: dict[str, dict[str, tuple]] = {}
        for (g, name), link in links.items():
            grouped.setdefault(g, {})[name] = (link.launches, link.no_kernel_reason)
        per_graph = list(grouped.items())
    # the names between quotes as they are when none needs an escape (checked at once, in C)
    plain = _plain("".join(chain.from_iterable(by_name for _, by_name in per_graph)))
    quote = '"' if plain else ""
    # (launches, reason) -> ':{...}', its JSON after the name: most nodes share theirs with others
    values = _Memo(lambda value: f'{quote}:{{"launches":[{",".join(map(str, value[0]))}],'
                                 f'"no_kernel_reason":{_opt(value[1] or None)}}}')
    for g, by_name in per_graph:
        if g not in maps or not by_name:
            continue
        # entries laid out side by side (separator, name, value) and joined once: no str made per
        # node (12,000 at 48 layers), and no Python code run per node but a new value's
        pieces = ["," + quote] * (3 * len(by_name))
        pieces[1::3] = by_name if plain else map(_str, by_name)
        pieces[2::3] = map(values.__getitem__, by_name.values())
        pieces[0] = quote
        maps[g] = "".join(pieces)
    s = index.summary
    head = _launch_links_text(index.launches, times)
    tail = _ENCODE({
        "summary": {
            "fx_ops": s.fx_ops, "post_grad_ops": s.post_grad_ops, "kernels": s.kernels, "launches": s.launches,
            "extern_calls": s.extern_calls, "fusion_groups": s.fusion_groups, "ops_per_kernel": s.ops_per_kernel,
        },
        "warnings": list(index.warnings),
    })
    parts += ['{"launches":', head, ',"fx_nodes":{', maps[AOT], '},"post_grad_nodes":{', maps[POST_GRAD],
              '},"fusion_groups":', _group_links_text(index.groups), ",", tail[1:]]


def _launch_links_text(launches, times) -> str:
    """The JSON list of a graph's LaunchLinks, each {"index", "kernel", "is_extern", "kind",
    "post_grad_nodes", "fx_nodes", "scheduler_nodes", "fusion_group", "buffers", "source_lines",
    "evidence", "basis"[, "alternatives"][, "profile"]}, written by hand as the node lists are (the
    encoder took ~10 us a launch, most of it a dict and lists made for it, and the same source
    file's path escaped again in every launch); tests/test_parse_cli.py checks it against the encoder."""
    lines: dict = {}  # (file, line) -> its JSON: a layer's launches share their lines' files
    out = []
    # the name lists' strs between quotes as they are when none needs an escape (checked at once)
    plain = _plain("".join([
        x for la in launches for names in (la.post_grad_nodes, la.fx_nodes, la.scheduler_nodes, la.buffers)
        for x in names
    ]))
    strs = _plain_strs if plain else _strs
    for la in launches:
        source = []
        for x in la.source_lines:
            if (text := lines.get(x)) is None:
                text = lines[x] = _ENCODE(list(x))
            source.append(text)
        basis = la.basis
        out.append(
            f'{{"index":{_value(la.index)},"kernel":{_value(la.kernel)},"is_extern":{_value(la.is_extern)},'
            f'"kind":{_value(la.kind)},"post_grad_nodes":{strs(la.post_grad_nodes)},"fx_nodes":{strs(la.fx_nodes)},'
            f'"scheduler_nodes":{strs(la.scheduler_nodes)},"fusion_group":{_value(la.fusion_group)},'
            f'"buffers":{strs(la.buffers)},"source_lines":[{",".join(source)}],"evidence":{_value(la.evidence)},'
            f'"basis":{{"nodes":{_value(basis.nodes)},"source_lines":{_value(basis.source_lines)}}}'
            # an uncertain inference: the other placements as good, graph order chose between
            + (f',"alternatives":{_ENCODE([list(a) for a in la.alternatives])}' if la.alternatives else "")
            + ("" if times is None else f',"profile":{_ENCODE(_launch_time(times, la.index))}')
            + "}"
        )
    return "[" + ",".join(out) + "]"


def _value(v) -> str:
    """What the encoder writes for `v`: a str, an int, a bool or None by hand, anything else by it."""
    t = type(v)
    if t is str:
        return _str(v)
    if t is int:
        return int.__repr__(v)
    if t is bool:
        return "true" if v else "false"
    return "null" if v is None else _ENCODE(v)


def _launch_time(times, index: int) -> dict:
    if times is False:
        from compile_viz.linking.profile import NOT_RUN

        return {"reason": NOT_RUN}
    return times.launch_json(index)


def debug_parse_json(parsed) -> dict:
    return {"root": parsed.root, "graphs": [graph_json(g) for g in parsed.graphs], **_run_json(parsed)}


def _run_json(parsed) -> dict:
    """The keys of the document after "graphs": what belongs to the whole run."""
    return {
        "graph_breaks": [
            {"reason": b.reason, "file": b.file, "line": b.line, "code": b.code} for b in parsed.graph_breaks
        ],
        "warnings": [str(w) for w in parsed.warnings],
        **trace_json(parsed),  # only for a TORCH_TRACE log: its compile ids
    }


def is_trace(parsed) -> bool:
    """Whether `parsed` was read from TORCH_TRACE logs (a TraceParse). Its module is loaded only
    when a trace is read, so a debug folder's parse is told apart without importing it."""
    module = sys.modules.get("compile_viz.artifacts.trace.model")
    return module is not None and isinstance(parsed, module.TraceParse)


def compile_json(c: CompileRecord) -> dict:
    return {
        "id": c.id,
        "rank": c.rank,
        "status": c.status,
        "co_name": c.co_name,
        "co_filename": c.co_filename,
        "co_firstlineno": c.co_firstlineno,
        "fail_reason": c.fail_reason,
        "restart_reasons": list(c.restart_reasons),
        "graph_break_reasons": list(c.graph_break_reasons),
        "recompile_reasons": list(c.recompile_reasons),
        "guard_count": c.guard_count,
        "guards": list(c.guards),
        "cache": list(c.cache),
        "stack": [{"file": f.file, "line": f.line, "function": f.function, "code": f.code} for f in c.stack],
        "graphs": [{"kind": g.kind, "aot_id": g.aot_id} for g in c.graphs],
        "phases": [
            {"name": p.name, "start_us": p.start_us, "duration_us": p.duration_us, "depth": p.depth,
             "is_backward": p.is_backward, "ended": p.ended}
            for p in c.phases
        ],
        "times_s": {k: c.metrics.get("compilation_metrics", {}).get(k) for k in TIMES},
    }


TIMES = ("entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s")


def log_json(log: TraceLog) -> dict:
    return {
        "path": log.path,
        "rank": log.rank,
        "entries": log.entries,
        "compiles": [compile_json(c) for c in log.compiles],
        "warnings": [str(w) for w in log.warnings],
    }


def trace_json(parsed) -> dict:
    """{"traces": [...]} for a TraceParse; {} for a debug folder's parse (its JSON stays as it was)."""
    if not is_trace(parsed):
        return {}
    return {"traces": [log_json(log) for log in parsed.logs], "not_in_trace": list(parsed.not_in_trace)}
