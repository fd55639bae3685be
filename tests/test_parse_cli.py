"""`compile-viz parse`: summary, JSON schema, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

from tests.conftest import GPU_CORPUS, corpus_required


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "compile_viz", *args], capture_output=True, text=True, timeout=120)


def test_json_has_the_promised_fields():
    corpus_required()
    proc = run_cli("parse", str(GPU_CORPUS / "matmul_softmax"), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (g,) = doc["graphs"]
    assert {"id", "kind", "files", "fx_nodes", "post_grad_nodes", "scheduler_nodes", "fusion_groups", "kernels", "launches", "warnings"} <= set(g)
    node = g["fx_nodes"][2]
    assert {"name", "op", "target", "dtype", "shape", "source_file", "source_line", "source_code"} <= set(node)
    assert g["scheduler_nodes"][0] == {"name": "op0", "type": "ExternKernelSchedulerNode(ExternKernelOut)", "kind": "extern", "buffers": ["buf0"]}
    assert g["fusion_groups"][0]["members"] == ["op1", "op2", "op3"]
    k = g["kernels"][0]
    assert {"name", "backend", "kind", "source", "source_nodes", "original_aten", "graph_fragment"} <= set(k)
    assert [(la["index"], la["kernel"], la["is_extern"]) for la in g["launches"]] == [
        (0, "extern_kernels.mm", True),
        (1, k["name"], False),
    ]


def test_summary_and_exit_codes(tmp_path):
    corpus_required()
    proc = run_cli("parse", str(GPU_CORPUS / "graph_break_item"))
    assert proc.returncode == 0
    assert "model__1_inference_1.1 [inference]" in proc.stdout and "graph break at capture_cases.py:85" in proc.stdout

    missing = run_cli("parse", str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such file" in missing.stderr

    empty = run_cli("parse", str(tmp_path))
    assert empty.returncode == 2 and "no Inductor debug artifacts" in empty.stderr

    bad_zip = tmp_path / "bad.zip"
    bad_zip.write_bytes(b"PK\x03\x04 this is not a zip")
    proc = run_cli("parse", str(bad_zip))
    assert proc.returncode == 2 and "zip" in proc.stderr and proc.stderr.count("\n") == 1


def test_missing_files_give_a_partial_result(tmp_path):
    corpus_required()
    src = next(GPU_CORPUS.glob("tiny_linear_relu/torch_compile_debug/run_*/torchinductor/*"))
    zpath = tmp_path / "partial.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for f in src.iterdir():
            if f.name not in ("ir_post_fusion.txt", "output_code.py"):
                zf.write(f, f"{src.name}/{f.name}")
    proc = run_cli("parse", str(zpath), "--json")
    assert proc.returncode == 0
    (g,) = json.loads(proc.stdout)["graphs"]
    assert g["fx_nodes"] and g["kernels"] == [] and g["fusion_groups"] == []
    assert any("output_code.py: missing" in w for w in g["warnings"])
    assert any("ir_post_fusion.txt: missing" in w for w in g["warnings"])


def test_strict_exits_non_zero_on_any_warning(tmp_path):
    """--strict: 0 on a clean capture; 1 with every warning on stderr when a file is cut."""
    corpus_required()
    clean = run_cli("parse", "--strict", str(GPU_CORPUS.parent / "public" / "dwarez-torch-compile-blogpost"))
    assert clean.returncode == 0 and clean.stderr == ""
    src = next(GPU_CORPUS.glob("tiny_linear_relu/torch_compile_debug/run_*/torchinductor/*"))
    cut = tmp_path / src.name
    cut.mkdir()
    for f in src.iterdir():
        data = f.read_bytes()
        (cut / f.name).write_bytes(data[: len(data) // 2] if f.name == "output_code.py" else data)
    proc = run_cli("parse", "--strict", str(cut))
    assert proc.returncode == 1
    assert "output_code.py" in proc.stderr and "--strict: " in proc.stderr.splitlines()[-1]
    assert run_cli("parse", str(cut)).returncode == 0  # without --strict a partial parse is no failure


def test_parse_loads_only_what_it_uses_and_prints_one_compact_line():
    """`compile-viz parse` imports none of the other commands' modules (cli.COMMANDS) and, without
    --json, not the linking layer; --json prints one line of compact JSON."""
    from compile_viz.cli import COMMANDS
    from tests.conftest import SAMPLE_RUNS

    script = (
        "import sys, io, contextlib\n"
        "from compile_viz.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main(['parse', {str(SAMPLE_RUNS / 'tiny_linear_relu.zip')!r}] + sys.argv[1:])\n"
        "print(sorted({m.removeprefix('compile_viz.') for m in sys.modules if m.startswith('compile_viz.')}))\n"
        "print(out.getvalue(), end='')\n"
    )
    others = {m.removeprefix("compile_viz.") for m in COMMANDS.values()} - {"cli.parse"}
    others |= {"compare", "capture", "store", "render", "ui"}

    def loaded_by(*argv: str) -> tuple[set[str], str]:
        proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        first, text = proc.stdout.split("\n", 1)
        return {m.split(".")[0] if m.split(".")[0] != "cli" else m
                for m in json.loads(first.replace("'", '"'))}, text

    loaded, _ = loaded_by()
    assert "cli.parse" in loaded and not loaded & (others | {"linking"}), loaded
    loaded, text = loaded_by("--json")
    assert "linking" in loaded and not loaded & others, loaded
    assert text.count("\n") == 1 and text.startswith('{"root":') and ", " not in text[:200]
    assert json.loads(text)["graphs"]


def test_json_written_a_graph_at_a_time_is_the_whole_document():
    """`parse --json` streams graph by graph (write_parse_json): the same text as encoding
    debug_parse_json's one document, for a debug run and for a TORCH_TRACE log."""
    import io

    from compile_viz.artifacts import parse_path
    from compile_viz.artifacts.trace.discover import parse_trace_path
    from compile_viz.cli.parse_json import debug_parse_json, write_json, write_parse_json
    from tests.conftest import SAMPLE_RUNS

    for parsed in (parse_path(str(SAMPLE_RUNS / "graph_break_item.zip")),
                   parse_trace_path(str(SAMPLE_RUNS / "graph_break_item.zip"))):
        whole, streamed = io.StringIO(), io.StringIO()
        write_json(debug_parse_json(parsed), whole)
        write_parse_json(parsed, streamed)
        assert len(parsed.graphs) >= 2 and streamed.getvalue() == whole.getvalue()


def test_json_is_the_same_whatever_the_hash_seed():
    """A launch's post-grad nodes that the log names but the graph lacks (tlparse's provenance
    log has no post-grad graph) come in name order, not in a set's order: the output was
    different from one process to the next."""
    import os

    corpus_required()
    log = GPU_CORPUS.parent / "traces" / "tlparse-tests" / "inductor_provenance_jit_cuda_log.txt"
    outs = {subprocess.run([sys.executable, "-m", "compile_viz", "parse", "--json", str(log)], capture_output=True,
                           text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "3")}
    assert len(outs) == 1 and '"evidence":"provenance"' in outs.pop()


def test_launch_links_written_by_hand_are_the_encoders_text():
    """parse_json writes a graph's launch links by hand: the same text the encoder gives for the
    dicts it used to build, alternatives included."""
    from dataclasses import replace

    from compile_viz.artifacts import parse_path
    from compile_viz.cli.parse_json import _ENCODE, _launch_links_text
    from compile_viz.linking import build_index
    from tests.conftest import SAMPLE_RUNS

    def encoded(launches):
        return _ENCODE([{
            "index": la.index, "kernel": la.kernel, "is_extern": la.is_extern, "kind": la.kind,
            "post_grad_nodes": list(la.post_grad_nodes), "fx_nodes": list(la.fx_nodes),
            "scheduler_nodes": list(la.scheduler_nodes), "fusion_group": la.fusion_group, "buffers": list(la.buffers),
            "source_lines": [list(x) for x in la.source_lines], "evidence": la.evidence,
            "basis": {"nodes": la.basis.nodes, "source_lines": la.basis.source_lines},
            **({"alternatives": [list(a) for a in la.alternatives]} if la.alternatives else {}),
        } for la in launches])

    checked = 0
    for name in ("gpt_small", "transformer_layer"):
        for g in parse_path(str(SAMPLE_RUNS / f"{name}.zip")).graphs:
            launches = list(build_index(g).launches)
            launches[0] = replace(launches[0], alternatives=(("a\u00e9", "b"), ("c",)))
            assert _launch_links_text(launches, None) == encoded(launches)
            # a name that needs an escape: the name lists go through the encoder's escape
            launches[1] = replace(launches[1], fx_nodes=('q"x', "\u00e9"), buffers=("b\\1",))
            assert _launch_links_text(launches, None) == encoded(launches)
            checked += len(launches)
    assert checked > 500


def test_launches_written_by_hand_are_the_encoders_text():
    """parse_json writes a graph's launches by hand: the same text the encoder gives for the dicts
    it used to build, with an argument or a name that needs an escape too."""
    from dataclasses import replace

    from compile_viz.artifacts import parse_path
    from compile_viz.cli.parse_json import _ENCODE, _launches_text
    from tests.conftest import SAMPLE_RUNS

    def encoded(launches):
        return _ENCODE([{
            "index": la.index, "kernel": la.kernel, "is_extern": la.is_extern, "args": list(la.args),
            "buffers": list(la.buffers), "source_nodes": list(la.comments.source_nodes),
            "original_aten": list(la.comments.original_aten), "provenance_handle": la.comments.provenance_handle,
            "line": la.line,
        } for la in launches])

    checked = 0
    for name in ("gpt_small", "transformer_layer"):
        for g in parse_path(str(SAMPLE_RUNS / f"{name}.zip")).graphs:
            launches = list(g.output_code.launches)
            assert _launches_text(launches) == encoded(launches)
            launches[1] = replace(launches[1], args=('"q\\x"', "s\u00e9"), kernel="k\u00e9")
            assert _launches_text(launches) == encoded(launches)
            checked += len(launches)
    assert checked > 500
    assert _launches_text(()) == "[]"


def test_node_lists_written_by_hand_are_the_encoders_text():
    """parse_json writes the node lists by hand, each str between quotes as it is when none needs
    an escape: the same text the encoder gives for the nodes' dicts, also when one str of a node
    (any field) needs escaping, which sends the whole list through the encoder's escape."""
    from dataclasses import replace

    from compile_viz.artifacts import parse_path
    from compile_viz.cli.parse_json import _ENCODE, _nodes_parts
    from tests.conftest import SAMPLE_RUNS

    def encoded(nodes):
        return _ENCODE([{
            "name": n.name, "op": n.op, "target": n.target, "dtype": n.dtype,
            "shape": None if n.shape is None else list(n.shape), "stride": None if n.stride is None else list(n.stride),
            "args": list(n.args), "constants": list(n.constants),
            "source_file": n.source.file if n.source else None, "source_line": n.source.line if n.source else None,
            "source_code": n.source.code if n.source else None, "subgraph": n.subgraph,
        } for n in nodes])

    def written(nodes):
        parts: list[str] = []
        _nodes_parts(tuple(nodes), parts)
        return "".join(parts)

    checked = 0
    odd = ("a\u00e9", 'q"uote', "back\\slash", "tab\t", "del\x7f", "\u2028")
    for name in ("gpt_small", "transformer_layer"):
        for g in parse_path(str(SAMPLE_RUNS / f"{name}.zip")).graphs:
            for graph in (g.aot_graph, g.post_grad_graph):
                nodes = list(graph.nodes)
                assert written(nodes) == encoded(nodes)
                checked += len(nodes)
                with_args = next(i for i, n in enumerate(nodes) if n.args)
                for field in ("name", "op", "target", "dtype", "subgraph", "args"):
                    for text in odd:
                        changed = list(nodes)
                        value = (nodes[with_args].args[0], text) if field == "args" else text
                        changed[with_args] = replace(nodes[with_args], **{field: value})
                        assert written(changed) == encoded(changed), (field, text)
    assert checked > 1000


def test_node_lists_across_chunks_are_the_encoders_text(monkeypatch):
    """The node lists are joined a chunk of nodes at a time: the same text at any chunk size,
    an escape anywhere still sending the whole list through the encoder's escape."""
    from dataclasses import replace

    from compile_viz.artifacts import parse_path
    from compile_viz.cli import parse_json
    from tests.conftest import SAMPLE_RUNS

    g = parse_path(str(SAMPLE_RUNS / "gpt_small.zip")).graphs[0]
    nodes = list(g.post_grad_graph.nodes)
    whole = "".join(parse_json._nodes_parts(tuple(nodes), p := []) or p)
    odd = list(nodes)
    odd[-1] = replace(nodes[-1], name='last"\u00e9')
    odd_whole = "".join(parse_json._nodes_parts(tuple(odd), p := []) or p)
    assert parse_json.graph_json(g)["post_grad_nodes"] == json.loads(whole)
    for size in (1, 2, 7, len(nodes) - 1, len(nodes)):
        monkeypatch.setattr(parse_json, "_CHUNK", size)
        assert "".join(parse_json._nodes_parts(tuple(nodes), p := []) or p) == whole
        assert "".join(parse_json._nodes_parts(tuple(odd), p := []) or p) == odd_whole
    assert json.loads(odd_whole)[-1]["name"] == 'last"\u00e9'
    assert "".join(parse_json._nodes_parts((), p := []) or p) == "[]"


def test_links_and_groups_written_by_hand_are_the_encoders_text():
    """The per-node maps of the links, the links' fusion groups, and the graph's scheduler nodes
    and fusion groups are written by hand: the encoder's text for the values they stand for, with
    names that need escapes too, and from any mapping of NodeLinks (not only the linker's)."""
    from dataclasses import replace
    from types import SimpleNamespace as NS

    from compile_viz.artifacts import parse_path
    from compile_viz.cli.parse_json import (
        _ENCODE,
        _fusion_groups_text,
        _group_links_text,
        _links_parts,
        _scheduler_nodes_text,
        graph_parts,
        graph_text,
    )
    from compile_viz.linking import build_index
    from compile_viz.linking.model import NodeLink
    from tests.conftest import SAMPLE_RUNS

    def links(index):
        return "".join(_links_parts(index, p := []) or p)

    def expected(index):
        return _ENCODE({
            "launches": json.loads(links(index))["launches"],
            **{key: {name: {"launches": list(link.launches), "no_kernel_reason": link.no_kernel_reason or None}
                     for (graph, name), link in index.nodes.items() if graph == g}
               for key, g in (("fx_nodes", "aot_graph"), ("post_grad_nodes", "post_grad_graph"))},
            "fusion_groups": [{"name": x.name, "kind": x.kind, "members": list(x.members), "buffers": list(x.buffers),
                               "fused_away": list(x.fused_away), "launches": list(x.launches)} for x in index.groups],
            "summary": json.loads(links(index))["summary"], "warnings": list(index.warnings),
        })

    odd = ("a\u00e9", 'q"uote', "back\\slash", "tab\t", "del\x7f", "\u2028")
    checked = 0
    for name in ("gpt_small", "transformer_layer"):
        for g in parse_path(str(SAMPLE_RUNS / f"{name}.zip")).graphs:
            index = build_index(g)
            assert links(index) == expected(index)
            plain = dict(index.nodes.items())  # a plain mapping: grouped by graph here
            assert links(replace(index, nodes=plain)) == links(index)
            for text in odd:
                changed = dict(plain)
                (graph, first), link = next(iter(plain.items()))
                changed[(graph, first + text)] = NodeLink(first + text, graph, (0, 1), "")
                changed[("aot_graph", text)] = NodeLink(text, "aot_graph", (), "why " + text)
                assert links(replace(index, nodes=changed)) == expected(replace(index, nodes=changed))
            groups = [NS(name=x.name, kind=x.kind, members=x.members, buffers=x.buffers) for x in g.post_fusion.fusion_groups]
            nodes = [NS(name=n.name, node_type=n.node_type, kind=n.kind, buffer_names=n.buffer_names)
                     for n in g.pre_fusion.nodes]
            for text in ("plain",) + odd:
                groups.append(NS(name=text, kind=text, members=(text, "m"), buffers=()))
                nodes.append(NS(name=text, node_type=text, kind="k", buffer_names=(text,)))
                link = NS(name=text, kind="fused", members=(), buffers=(text,), fused_away=(text, "x"), launches=(3, 4))
                assert _group_links_text([link]) == _ENCODE([{
                    "name": text, "kind": "fused", "members": [], "buffers": [text], "fused_away": [text, "x"],
                    "launches": [3, 4]}])
            assert _fusion_groups_text(groups) == _ENCODE(
                [{"name": x.name, "kind": x.kind, "members": list(x.members), "buffers": list(x.buffers)} for x in groups])
            assert _scheduler_nodes_text(nodes) == _ENCODE([
                {"name": n.name, "type": n.node_type, "kind": n.kind, "buffers": list(n.buffer_names)} for n in nodes])
            # a forked child's parts, encoded a section at a time: the same text
            assert b"".join(graph_parts(g, index=index, encoded=True)) == graph_text(g, index=index).encode()
            checked += len(index.nodes)
    assert checked > 1000
    assert _group_links_text(()) == _fusion_groups_text(()) == _scheduler_nodes_text(()) == "[]"


def test_parse_of_a_folder_never_imports_shutil(tmp_path):
    """argparse's help formatter imports shutil to find the terminal's width; cli._Formatter is told
    it, so `parse --json` of a debug folder (no zipfile, which imports it too) never loads it."""
    from tests.conftest import SAMPLE_RUNS, modules_after_parse_json

    with zipfile.ZipFile(SAMPLE_RUNS / "tiny_linear_relu.zip") as z:
        z.extractall(tmp_path)
    assert modules_after_parse_json(tmp_path / "debug", ("shutil",)) == []
