"""The fast paths of the parsers read exactly what the line-by-line readers read, and fields
filled on first access equal the ones an eager constructor takes."""

from __future__ import annotations

import dataclasses
import pickle
import random
import re
import zipfile
from pathlib import Path

import pytest

from compile_viz.artifacts import PARSERS, fx_graph, output_code, scheduler_ir
from compile_viz.artifacts.model import FxNode, KernelLaunch, SchedulerNode
from tests.conftest import artifact_files, corpus_required

NEVER = re.compile(r"(?!)")


def plain(obj):
    """Every field of a parse result, recursively, as tuples and dicts (reads lazy fields)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__,) + tuple((f.name, plain(getattr(obj, f.name))) for f in dataclasses.fields(obj))
    if isinstance(obj, (list, tuple)):
        return tuple(plain(x) for x in obj)
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    return obj


def _variants(data: bytes, seed: int) -> list[bytes]:
    """The file, and copies cut or with bytes flipped, to reach the line-by-line reader's corners."""
    rnd = random.Random(seed)
    out = [data]
    for _ in range(4):
        b = bytearray(data[: rnd.randrange(len(data) + 1)] if rnd.random() < 0.5 else data)
        for _ in range(rnd.randrange(0, 8)):
            if b:
                b[rnd.randrange(len(b))] = rnd.choice(b" \t\n[](){}:=.x\r")
        out.append(bytes(b))
    return out


# file -> (module, its fast patterns, outermost first: each is turned off in turn; a function
# names a pattern compiled on first use)
FAST_PATHS = {
    "ir_pre_fusion.txt": (scheduler_ir, ("NODE", "_chunk_pattern")),
    "ir_post_fusion.txt": (scheduler_ir, ("NODE", "_chunk_pattern")),
    "fx_graph_readable.py": (fx_graph, ("NODE_FAST_ASCII", "NODE_FAST")),
    "fx_graph_transformed.py": (fx_graph, ("NODE_FAST_ASCII", "NODE_FAST")),
}


@pytest.mark.parametrize("name", list(FAST_PATHS))
def test_fast_path_matches_line_by_line(name, monkeypatch):
    corpus_required()
    files = artifact_files(name)
    if not files:
        pytest.skip(f"no {name} in the corpus")
    parser = PARSERS[name][1]
    module, patterns = FAST_PATHS[name]
    for k, path in enumerate(files):
        for data in _variants(path.read_bytes(), k):
            result = parser(data, path=name)
            if hasattr(result, "member_nodes"):  # buffer names (and users) alone, read before the buffers
                for node in result.nodes + result.member_nodes:
                    names, users = node.buffer_names, node.buffer_users
                    assert names == tuple(b.name for b in node.outputs), (path, node.name)
                    assert users == tuple((b.name, b.users) for b in node.outputs), (path, node.name)
            fast = plain(result)
            with monkeypatch.context() as m:
                for pattern in patterns:  # the next one in, then every line through the line reader
                    m.setattr(module, pattern, (lambda: NEVER) if callable(getattr(module, pattern)) else NEVER)
                    slow = plain(parser(data, path=name))
                    assert fast == slow, (path, pattern)


def test_deferred_fields_equal_eager_ones():
    corpus_required()
    for name in ("ir_post_fusion.txt", "fx_graph_transformed.py", "output_code.py"):
        path = max(artifact_files(name), key=lambda p: p.stat().st_size)
        result = PARSERS[name][1](path.read_bytes(), path=name)
        nodes = result.launches if name == "output_code.py" else result.nodes
        assert nodes
        for node in nodes:
            cls = type(node)
            assert cls in (SchedulerNode, FxNode, KernelLaunch)
            eager = cls(**{f.name: getattr(node, f.name) for f in dataclasses.fields(cls)})
            assert eager == node and hash(eager) == hash(node) and repr(eager) == repr(node)
        again = pickle.loads(pickle.dumps(result))
        assert plain(again) == plain(result)


def test_deferred_fields_survive_pickling_before_first_access():
    corpus_required()
    path = max(artifact_files("ir_pre_fusion.txt"), key=lambda p: p.stat().st_size)
    data = path.read_bytes()
    untouched = pickle.loads(pickle.dumps(PARSERS["ir_pre_fusion.txt"][1](data, path="x")))
    assert plain(untouched) == plain(PARSERS["ir_pre_fusion.txt"][1](data, path="x"))


def _output_code_both_ways(data, monkeypatch):
    fast = plain(output_code.parse_output_code(data, path="output_code.py"))
    with monkeypatch.context() as m:
        m.setattr(output_code, "CALL_FAST", False)  # call() through the line reader
        slow = plain(output_code.parse_output_code(data, path="output_code.py"))
    return fast, slow


def _bundled(name: str) -> list[bytes]:
    """`name` from every graph of the bundled GPT training step (the largest call() bodies)."""
    path = Path(__file__).resolve().parents[1] / "sample_runs" / "gpt_small.zip"
    if not path.exists():
        return []
    with zipfile.ZipFile(path) as z:
        return [z.read(n) for n in z.namelist() if n.endswith("/" + name)]


def test_call_statement_pattern_matches_line_reader(monkeypatch):
    corpus_required()
    blobs = [p.read_bytes() for p in artifact_files("output_code.py")] + _bundled("output_code.py")
    for k, blob in enumerate(blobs):
        for data in _variants(blob, k) + [blob.replace(b"\n        ", b"\n        \n        ", 40)]:
            fast, slow = _output_code_both_ways(data, monkeypatch)
            assert fast == slow, k


# <SP>: trailing spaces, which the statement pattern leaves to the line reader
CALL_CORNERS = '''
triton_poi_fused_0 = async_compile.triton('triton_poi_fused_0', \'\'\'
@triton.jit
def triton_poi_fused_0(in_ptr0):
    pass
\'\'\', device_str='cuda')

class Runner:
    def call(self, args):
        primals_1, primals_2 = args
        args.clear()
        assert_size_stride(primals_1, (8, s0), (s0, 1))
        assert_size_stride(primals_2, (8, ), (1, ), 'op')
        buf0 = empty_strided_cuda((8, 256), (256, 1), torch.float32)
        stream_buf = empty_strided_cuda((8, ), (1, ), torch.float32)
        return_buf = extern_kernels.mm(primals_1, primals_2)
        # Topologically Sorted Source Nodes: [add], Original ATen: [aten.add]<SP>
        # [Provenance debug handles] triton_poi_fused_0:1
        triton_poi_fused_0.run(buf0, reinterpret_tensor(primals_1, (8, 256), (256, 1), 0), 2048, stream=stream0)
        triton_poi_fused_0.run(buf0, (primals_1,
            primals_2), 2048)
        extern_kernels.mm(buf0, primals_2, out=buf0)<SP>
        buf1 = torch.ops.aten.foo.default(buf0, [1,
            2])
        extern_kernels.run(buf0)
        # Source Nodes: [x]
        triton_poi_fused_0(buf0)
        \tdel buf0
        buf2 = buf0; del buf0  # reuse
        buf3 = reinterpret_tensor(buf2, (8, ), (1, ), 0); del buf2  # reuse
        buf4 = buf3[0]
        buf5 = reinterpret_tensor(buf4, (8, ), (1, ), 0)
        del buf5, buf4
        stream0 = get_raw_stream(0)
        assert_alignment(buf3, 16)
        something_odd(
        return (buf3, )
    def benchmark(self):
        pass
'''


def test_call_statement_pattern_corners(monkeypatch):
    data = CALL_CORNERS.replace("<SP>", "   ").encode()
    for variant in (data, data.replace(b"\n", b"\r\n"), data[:-40], data + b"\xc2\x85"):
        fast, slow = _output_code_both_ways(variant, monkeypatch)
        assert fast == slow
    result = output_code.parse_output_code(data, path="x")
    # `return_buf = ...` is read as a return by the line reader, so the first launch is the Triton one
    assert [la.kernel for la in result.launches][:3] == ["triton_poi_fused_0", "triton_poi_fused_0", "extern_kernels.mm"]
    assert result.launches[0].comments.provenance_handle == "triton_poi_fused_0:1"


def test_paused_gc_tenures_what_it_built_and_respects_frozen_objects():
    import gc

    from compile_viz.artifacts.gc_pause import paused_gc

    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        built = [[i] for i in range(5000)]
    assert gc.isenabled() and gc.get_count()[0] < 700 and gc.get_freeze_count() == 0
    assert built[-1] == [4999]
    gc.freeze()  # someone else's frozen objects stay frozen
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            more = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen and gc.isenabled() and len(more) == 100
    finally:
        gc.unfreeze()
    gc.disable()  # a collector that was off stays off
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_constants_shortcuts_match_the_general_rule():
    """The FX parser takes a node's constants at once for plain calls (`mul(a, b)`) and the
    node-first shape (`sum(x, [1], True)`), and leaves the others to `_constants`; on every FX node
    of the corpus read by the node pattern, either way gives what the general rule gives: the
    top-level arguments that use no other node."""
    corpus_required()
    from compile_viz.artifacts.text import IDENT, split_top_level

    checked = 0
    for name in ("fx_graph_readable.py", "fx_graph_transformed.py"):
        for path, data in [(p, p.read_bytes()) for p in artifact_files(name)] + [("gpt_small", d) for d in _bundled(name)]:
            graph = fx_graph.parse_fx_graph(data, path=name)
            lines = data.decode("utf-8", "replace").splitlines()
            for node in graph.nodes + graph.subgraph_nodes:
                m = fx_graph.NODE_LINE.match(lines[node.line - 1]) if node.op == "call_function" else None
                if m is None:
                    continue
                _, _, _, callee, arg_text, parent, index = m.groups()
                if callee is None:
                    arg_text = f"{parent}, {index}"
                args = node.args
                general = tuple(p for p in split_top_level(arg_text) if not set(args) & set(IDENT.findall(p)))
                assert node.constants == general, (path, node.name)
                checked += 1
    assert checked > 4000
