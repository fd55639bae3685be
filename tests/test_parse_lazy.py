"""The fast paths of the parsers read exactly what the line-by-line readers read, and fields
filled on first access equal the ones an eager constructor takes."""

from __future__ import annotations

import dataclasses
import pickle
import random
import re

import pytest

from compile_viz.artifacts import PARSERS, fx_graph, scheduler_ir
from compile_viz.artifacts.model import FxNode, SchedulerNode
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


FAST_PATHS = {
    "ir_pre_fusion.txt": (scheduler_ir, "CHUNK"),
    "ir_post_fusion.txt": (scheduler_ir, "CHUNK"),
    "fx_graph_readable.py": (fx_graph, "NODE_LINE"),
    "fx_graph_transformed.py": (fx_graph, "NODE_LINE"),
}


@pytest.mark.parametrize("name", list(FAST_PATHS))
def test_fast_path_matches_line_by_line(name, monkeypatch):
    corpus_required()
    files = artifact_files(name)
    if not files:
        pytest.skip(f"no {name} in the corpus")
    parser = PARSERS[name][1]
    module, pattern = FAST_PATHS[name]
    for k, path in enumerate(files):
        for data in _variants(path.read_bytes(), k):
            fast = plain(parser(data, path=name))
            with monkeypatch.context() as m:
                m.setattr(module, pattern, NEVER)  # every line through the line reader
                slow = plain(parser(data, path=name))
            assert fast == slow, path


def test_deferred_fields_equal_eager_ones():
    corpus_required()
    for name in ("ir_post_fusion.txt", "fx_graph_transformed.py"):
        path = max(artifact_files(name), key=lambda p: p.stat().st_size)
        result = PARSERS[name][1](path.read_bytes(), path=name)
        nodes = result.nodes if hasattr(result, "nodes") else ()
        assert nodes
        for node in nodes:
            cls = type(node)
            assert cls in (SchedulerNode, FxNode)
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
