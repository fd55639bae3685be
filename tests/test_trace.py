"""The TORCH_TRACE reader on real logs: tlparse's own test inputs, a public set, and the trace/
folder of every bundled run and third-party capture (the trace alone gives the debug folder's
graphs, FX nodes, kernels and launches)."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.trace.discover import parse_trace_path, trace_logs
from compile_viz.artifacts.trace.model import TraceParse
from compile_viz.artifacts.trace.read import parse_trace
from tests.conftest import CORPUS, ROOT, compile_viz_cli, corpus_required

RUNS = sorted((ROOT / "sample_runs").glob("*.zip")) + sorted((ROOT / "tests/fixtures/third_party").glob("*.zip"))
TLPARSE = CORPUS / "traces" / "tlparse-tests"
PUBLIC = CORPUS / "public" / "noisystreet-deep-dive-torch-compile" / "torch_compile_debug" / "tlparse"
DEBUG_NAME = re.compile(r"__(\d+)_(forward|backward|inference)_")


def _tlparse(name: str):
    corpus_required()
    return TLPARSE / name


def _by_aot_id(parsed) -> dict:
    """Graphs keyed by AOT id ("0_forward"): from the debug folder's name, or the trace's output code."""
    out = {}
    for g in parsed.graphs:
        m = DEBUG_NAME.search(g.folder.name)
        out[f"{m.group(1)}_{m.group(2)}" if m else g.folder.name] = g
    return out


def _facts(g) -> dict:
    aot, post, oc = g.aot_graph, g.post_grad_graph, g.output_code
    return {
        "kind": g.kind,
        "fx_nodes": [(n.name, n.op, n.target, n.source) for n in aot.nodes],
        "post_grad_nodes": [(n.name, n.target, n.source) for n in post.nodes],
        "kernels": [(k.name, k.kind) for k in oc.kernels],
        "launches": [(la.kernel, la.is_extern, la.buffers) for la in oc.launches],
    }


@pytest.mark.parametrize("run", RUNS, ids=[r.stem for r in RUNS])
def test_trace_alone_gives_the_debug_folders_graphs(run):
    debug = _by_aot_id(parse_path(str(run)))
    trace = parse_trace_path(str(run))
    assert isinstance(trace, TraceParse) and len(trace.logs) == 1
    traced = _by_aot_id(trace)
    assert sorted(traced) == sorted(debug)
    for key, g in debug.items():
        assert _facts(traced[key]) == _facts(g), key
        assert not traced[key].warnings, traced[key].warnings
        assert traced[key].pre_fusion is None and traced[key].post_fusion is None
    assert not trace.warnings


def test_graph_breaks_and_statuses_from_the_trace():
    trace = parse_trace_path(str(ROOT / "sample_runs/graph_break_item.zip"))
    (log,) = trace.logs
    assert [(c.id, c.status) for c in log.compiles] == [
        ("0/0", "graph break"), ("0/0_1", "ok after restart"), ("1/0", "ok")]
    first = log.compiles[0]
    assert "Tensor.item()" in first.graph_break_reasons[0]
    assert first.stack[-1].function == "forward" and first.stack[-1].file.endswith("graph_break_item.py")
    assert [p.name for p in first.phases][:2] == ["dynamo", "entire_frame_compile"]
    assert log.compiles[2].co_name == "torch_dynamo_resume_in_forward_at_12"
    assert len(log.compiles[2].guards) > log.compiles[2].guard_count > 0  # the tree has more lines
    assert trace.graph_breaks == parse_path(str(ROOT / "sample_runs/graph_break_item.zip")).graph_breaks


def test_corrupted_json_line_becomes_a_warning():
    good = parse_trace(_tlparse("simple.log").read_bytes(), path="simple.log")
    bad = parse_trace(_tlparse("simple_corrupted_json.log").read_bytes(), path="simple_corrupted_json.log")
    assert not good.warnings
    assert [(w.file, w.line) for w in bad.warnings] == [("simple_corrupted_json.log", 13)] * 2
    assert "not valid JSON" in bad.warnings[1].text
    assert [c.id for c in bad.compiles] == [c.id for c in good.compiles] == ["0/0"]
    # the lost event opened a phase outside any compile id: the compile's phases are all there
    assert [p.name for p in bad.compiles[0].phases] == [p.name for p in good.compiles[0].phases]
    assert len(bad.compiles[0].graphs) == 1 and bad.compiles[0].graphs[0].output_code is not None


def test_failure_metrics_cache_and_export_logs():
    failed = parse_trace(_tlparse("comp_failure.log").read_bytes(), path="comp_failure.log").compiles[0]
    assert failed.status == "failed" and failed.fail_reason.startswith("BackendCompilerFailed")
    metrics = parse_trace(_tlparse("comp_metrics.log").read_bytes(), path="comp_metrics.log")
    assert [(c.id, c.status) for c in metrics.compiles][:2] == [("0/0", "restarted"), ("0/0_1", "ok after restart")]
    cache = parse_trace(_tlparse("cache_hit_miss.log").read_bytes(), path="cache_hit_miss.log")
    kinds = {k for c in cache.compiles for k in c.cache}
    assert {"fx_graph_cache_hit", "fx_graph_cache_miss"} <= kinds
    export = parse_trace(_tlparse("export.log").read_bytes(), path="export.log")
    assert export.entries > 0  # blank lines inside payloads are a log stutter, read past


def test_multi_rank_folder_reads_every_rank_with_recompile_reasons():
    parsed = parse_path(str(_tlparse("multi_rank_logs")))
    assert isinstance(parsed, TraceParse)
    assert [log.rank for log in parsed.logs] == [0, 1, 2, 3]
    rank1 = parsed.logs[1]
    assert rank1.compile("0/1").recompile_reasons == ("0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3",)
    assert all(g.id.startswith("rank ") for g in parsed.graphs)
    assert not parsed.warnings  # CRLF line ends: the MD5s still match


def test_gzip_log_and_public_trace(tmp_path):
    corpus_required()
    (src,) = sorted(PUBLIC.glob("*.log"))
    gz = tmp_path / "rank_0.log.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    shutil.copy(src, tmp_path / "debug.log")  # a second copy, under a name that is not a trace's
    plain, zipped = parse_path(str(src)), parse_path(str(gz))
    assert [g.id for g in plain.graphs] == [g.id for g in zipped.graphs] == ["[0/0] inference"]
    assert len(trace_logs(str(tmp_path))) == 2
    assert plain.graphs[0].output_code.kernels and not plain.warnings


def test_cli_parse_json_on_a_trace_file():
    corpus_required()
    (src,) = sorted(PUBLIC.glob("*.log"))
    proc = compile_viz_cli("parse", "--json", str(src))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["graphs"][0]["kernels"] and doc["graphs"][0]["links"]["launches"]
    assert doc["traces"][0]["compiles"][0]["status"] == "ok"
    assert doc["not_in_trace"] == ["pre_fusion", "post_fusion"]
    summary = compile_viz_cli("parse", "--trace", str(ROOT / "sample_runs/graph_break_item.zip"))
    assert "[0/0] graph break" in summary.stdout and "not in a trace" in summary.stdout


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(cut=st.floats(0, 1), flip=st.floats(0, 1), byte=st.integers(0, 255))
def test_cut_or_flipped_trace_never_raises(cut, flip, byte):
    data = bytearray(_tlparse("inductor_provenance_jit_debug_handle_log.txt").read_bytes())
    data = data[: int(len(data) * cut)]
    if data:
        data[int((len(data) - 1) * flip)] = byte
    log = parse_trace(bytes(data), path="cut.log")
    assert isinstance(log.warnings, tuple)
    from compile_viz.artifacts.trace.graphs import trace_parse

    trace_parse("cut.log", [log])


def _log_lines() -> tuple[list[str], int]:
    """A real log's lines, and the index of the header of its output code entry (a long payload)."""
    ((_, data),) = trace_logs(str(ROOT / "sample_runs" / "mlp_gelu.zip"))
    lines = data.decode().split("\n")
    (at,) = [i for i, line in enumerate(lines) if '"inductor_output_code"' in line and not line.startswith("\t")][:1]
    return lines, at


def _read(lines: list[str]):
    return parse_trace("\n".join(lines).encode(), path="mlp_gelu.log")


def test_a_blank_line_inside_a_payload_is_read_past_and_two_end_it():
    lines, at = _log_lines()
    whole = _read(lines)
    stutter = _read(lines[: at + 5] + [""] + lines[at + 5:])
    texts = [[g.output_code.text for c in log.compiles for g in c.graphs] for log in (whole, stutter)]
    assert texts[0] == texts[1] and len(texts[0][0]) > 1000 and stutter.warnings == whole.warnings == ()
    ended = lines[: at + 5] + ["", ""] + lines[at + 5:]
    cut = _read(ended)
    payload_lines = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("\t")) - at - 1
    assert any(f"{payload_lines - 4} payload line(s)" in w.text for w in cut.warnings)  # the rest, orphaned
    assert any("MD5" in w.text and w.line == at + 1 for w in cut.warnings)  # the cut payload no longer matches


def test_an_altered_graph_payload_says_so_when_its_graph_is_parsed():
    """A graph payload of a log read into memory is made text, and its MD5 checked, by its graph's
    parse (in whichever process parses that graph): an altered one warns there, at its entry's line."""
    from compile_viz.artifacts.trace.graphs import graph_parse

    lines, at = _log_lines()
    assert len("\n".join(lines[at + 1: at + 200])) > 4096  # a payload held as logged, not read with the log
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("\t"))
    k = next(i for i in range(at + 1, end) if "buf" in lines[i])  # a line of its payload
    altered = list(lines)
    altered[k] = altered[k].replace("buf", "fub", 1)
    log = _read(altered)
    assert not any("MD5" in w.text for w in log.warnings)  # not read yet
    g = next(g for c in log.compiles for g in c.graphs if g.output_code is not None and g.output_code.line == at + 1)
    parsed = graph_parse("mlp_gelu.log", g, "g")
    assert [w.line for w in parsed.warnings if "inductor_output_code" in w.text and "MD5" in w.text] == [at + 1]
    assert not any("MD5" in w.text for w in graph_parse("mlp_gelu.log", next(
        g for c in _read(lines).compiles for g in c.graphs if g.output_code is not None), "g").warnings)


def test_an_altered_payload_left_unchecked_is_found_by_its_own_check():
    """GraphJob.unchecked: the graph parsed without its payloads' MD5s warns of none; its check
    (payloads_intact, what the parent of a forked parse runs) finds the altered one."""
    from compile_viz.artifacts.trace.graphs import graph_parse, payloads_intact

    lines, at = _log_lines()
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("\t"))
    k = next(i for i in range(at + 1, end) if "buf" in lines[i])
    altered = list(lines)
    altered[k] = altered[k].replace("buf", "fub", 1)
    for log, intact in ((_read(altered), False), (_read(lines), True)):
        g = next(g for c in log.compiles for g in c.graphs if g.output_code is not None and g.output_code.line == at + 1)
        assert not any("MD5" in w.text for w in graph_parse("mlp_gelu.log", g, "g", checks=False).warnings)
        assert payloads_intact("mlp_gelu.log", g, "g") is intact


def test_a_compiles_guards_are_read_when_shown():
    """A log read into memory holds its guards where they lie: made lines when first asked for (in
    parse --json, while another process parses a graph), the same lines as read at once."""
    from compile_viz.artifacts.trace.index import PayloadLines

    lines, at = _log_lines()
    log = _read(lines)
    guarded = [c for c in log.compiles if c.guards]
    assert guarded and all(isinstance(c.guards, PayloadLines) and c.guards._lines is None for c in guarded)
    for c in guarded:
        start = next(i for i, line in enumerate(lines) if '"dynamo_cpp_guards_str"' in line and f'"frame_compile_id": {c.id.split("/")[1]}' in line
                     and not line.startswith("\t"))
        end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("\t"))
        assert tuple(c.guards) == tuple(line[1:] for line in lines[start + 1:end] if line[1:].strip())
        assert c.guards[0].startswith("TREE_GUARD_MANAGER") and len(c.guards) == len(list(c.guards))


def test_an_entry_whose_metadata_is_cut_orphans_its_payload():
    lines, at = _log_lines()
    payload_lines = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("\t")) - at - 1
    broken = lines[:at] + [lines[at][: len(lines[at]) // 2]] + lines[at + 1:]
    parsed = _read(broken)
    assert [w.line for w in parsed.warnings if "not valid JSON" in w.text] == [at + 1]
    assert any(w.text.startswith(f"{payload_lines} payload line(s)") for w in parsed.warnings)


def test_every_payload_left_in_the_file_or_held_is_one_a_handler_reads():
    """The walk leaves (or holds) a LEFT_IN_FILE payload before asking whether any handler reads it."""
    from compile_viz.artifacts.trace import read

    assert read.LEFT_IN_FILE <= set(read.HANDLERS)
