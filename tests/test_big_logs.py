"""Big TORCH_TRACE logs (issue 25): a mapped log leaves its graph payloads in the file and gives
the same compiles and graphs as one read whole; its index is kept between processes; a viewer's
parse opens graphs one by one. Checked on real logs with the size thresholds brought down to 0:
tlparse's inputs (one rank, four ranks, a corrupted line, provenance, export and AOTI) and the
recorded jobs' per-rank logs."""

from __future__ import annotations

import dataclasses
import os
import shutil
import zipfile

import pytest

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.forking import map_forked
from compile_viz.artifacts.trace import discover, graphs, index, index_cache, read
from compile_viz.artifacts.trace.index import map_log
from tests.conftest import CORPUS, ROOT, corpus_required

TLPARSE = CORPUS / "traces" / "tlparse-tests"
JOBS = ROOT / "tests" / "fixtures" / "jobs"


def _logs(tmp_path):
    corpus_required()
    found = sorted(p for p in TLPARSE.rglob("*") if p.suffix in (".log", ".txt"))
    for job in ("gpt2_fsdp2_2gpu.zip", "gpt2_ddp_2gpu.zip"):  # recorded 2-GPU jobs: one log per rank
        with zipfile.ZipFile(JOBS / job) as z:
            for name in z.namelist():
                if name.startswith("trace/") and name.endswith(".log"):
                    target = tmp_path / os.path.basename(name)
                    target.write_bytes(z.read(name))
                    found.append(target)
    return found


@pytest.fixture
def lazy(monkeypatch, tmp_path):
    """Every graph payload left in its file, whatever its size; the index cache in tmp_path."""
    monkeypatch.setattr(read, "LAZY_PAYLOAD_BYTES", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _plain(log):
    """A TraceLog with every payload's text in place of its span (to compare the two readings)."""
    def payload(p):
        return None if p is None else dataclasses.replace(p, body=p.text, span=None)

    def graph(g):
        return dataclasses.replace(g, **{f.name: payload(getattr(g, f.name)) for f in dataclasses.fields(g)
                                         if f.name not in ("compile_id", "kind", "aot_id")})
    return dataclasses.replace(log, compiles=tuple(dataclasses.replace(c, graphs=tuple(graph(g) for g in c.graphs))
                                                   for c in log.compiles))


def test_mapped_log_reads_as_the_whole_text(lazy, tmp_path):
    logs = _logs(tmp_path)
    assert len(logs) >= 12
    lazy_payloads, stacked = 0, 0
    for path in logs:
        eager = read.parse_trace(path.read_bytes(), path=path.name)
        mapped = map_log(str(path))
        left = read.parse_trace(mapped, path=path.name)
        mapped.close()
        lazy_payloads += sum(p.body is None for c in left.compiles for g in c.graphs
                             for p in (g.aot_graph, g.post_grad_graph, g.output_code) if p is not None)
        assert _plain(left) == _plain(eager), path.name  # a log read into memory holds its graph payloads as logged too
        assert not any("recompile_reasons: not understood" in w.text for w in eager.warnings)
        reasons = [r for c in eager.compiles for r in c.recompile_reasons]
        assert all(r[:1].isdigit() for r in reasons)  # torch 2.11's text: one reason, its stack with it
        stacked += sum("\nUser stack trace:" in r for r in reasons)
        for c in left.compiles:  # and each graph parses the same from the file as from the text
            for g, e in zip(c.graphs, next(x for x in eager.compiles if x.id == c.id).graphs, strict=True):
                assert graphs.graph_parse(path.name, g, "g") == graphs.graph_parse(path.name, e, "g")
    assert lazy_payloads > 50 and stacked >= 2


def test_a_log_walked_in_two_processes_reads_as_walked_in_one(lazy, monkeypatch, tmp_path):
    """A big log is cut where a frame's compile starts after its middle and its second part read by
    a fork (read.SPLIT_BYTES, here 0): the same compiles, lines, warnings and stacks, whether the
    parts are merged or the second is read again (a compile id read on both sides)."""
    monkeypatch.setattr(read, "SPLIT_BYTES", 0)
    merged = 0
    real_merge = read._Reader.merge

    def counted(self, other, before):
        nonlocal merged
        took = real_merge(self, other, before)
        merged += took
        return took

    monkeypatch.setattr(read._Reader, "merge", counted)
    split = 0
    for path in _logs(tmp_path):
        one = read.parse_trace(map_log(str(path)), path=path.name)
        mapped = map_log(str(path))
        split += read._cut(mapped) is not None
        two = read.parse_trace(mapped, path=path.name, processes=2)
        assert two == one, path.name
    assert split >= 4 and 1 <= merged < split  # both ways taken
    crlf = tmp_path / "crlf.log"  # a part with a carriage return: the log is read whole, line ends made plain
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    two = read.parse_trace(map_log(str(crlf)), path="crlf.log", processes=2)
    assert two == read.parse_trace(crlf.read_bytes(), path="crlf.log") and two.compiles


def test_index_is_kept_and_found_again_under_another_name(lazy, tmp_path):
    path = _logs(tmp_path)[-1]  # rank 1 of the DDP job
    first = discover.parse_logs([(path.name, map_log(str(path)))])[0]
    linked = tmp_path / "store" / "trace.log"
    linked.parent.mkdir()
    os.link(path, linked)  # the run an import makes: the same file under another name
    again = index_cache.load(str(linked), "trace/trace.log")
    assert again is not None and again.path == "trace/trace.log"
    assert _plain(dataclasses.replace(again, path=first.path)) == _plain(first)
    spans = [p.span for c in again.compiles for g in c.graphs for p in (g.post_grad_graph, g.output_code)
             if p is not None and p.span is not None]
    assert spans and {s.path for s in spans} == {str(linked)}  # read from where it is opened
    os.utime(path, ns=(1, 1))  # the file changed: the index is not used
    assert index_cache.load(str(linked), "trace/trace.log") is None


def test_a_big_log_with_carriage_returns_is_indexed_with_its_texts(lazy, tmp_path):
    """A mapped log with Windows line ends is read whole (its payloads held in memory, not left in
    the file, whose offsets moved): its kept index holds their texts, and reads as the log does."""
    path = _logs(tmp_path)[-1]
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    first = discover.parse_logs([("crlf.log", map_log(str(crlf)))])[0]
    again = index_cache.load(str(crlf), "crlf.log")
    assert again is not None and _plain(again) == _plain(first)
    assert any(g.output_code is not None and g.output_code.body for c in again.compiles for g in c.graphs)


def test_a_log_cut_short_says_so_when_its_graph_is_opened(lazy, tmp_path):
    path = _logs(tmp_path)[-1]
    log = read.parse_trace(map_log(str(path)), path=path.name)
    code = next(g.output_code for c in log.compiles for g in c.graphs if g.output_code is not None)
    data = bytearray(path.read_bytes())  # the log altered inside that output code, after it was indexed
    data[code.span.start + 100: code.span.start + 110] = b"#" * 10
    path.write_bytes(bytes(data))
    index.read_span.cache_clear()
    g = next(g for c in log.compiles for g in c.graphs if g.output_code is code)
    parsed = graphs.graph_parse(path.name, g, "g")
    assert any("does not match its MD5" in w.text for w in parsed.warnings)


def test_viewer_parse_opens_graphs_one_by_one(monkeypatch, tmp_path):
    corpus_required()
    folder = tmp_path / "ranks"
    shutil.copytree(TLPARSE / "multi_rank_logs", folder)
    whole = parse_path(str(folder))
    lazy = parse_path(str(folder), lazy_above=0)
    assert [g.id for g in lazy.graphs] == [g.id for g in whole.graphs] and len(whole.graphs) > 4
    assert all(g.output_code is None for g in lazy.graphs)  # folders alone until opened
    for g in whole.graphs:
        assert lazy.graph(g.id) == g
    assert len(lazy.opened) <= 8


def test_map_forked_keeps_the_order():
    items = list(range(23))
    assert map_forked(_square, items, 3) == [i * i for i in items]


def _square(i: int) -> int:
    return i * i


def test_pages_on_a_run_whose_graphs_open_one_by_one(monkeypatch, tmp_path):
    """The Viewer (rank picker, a graph of each rank), the Compiles page and the Compare page on an
    imported 4-rank run read as a big one: logs mapped, graphs parsed when opened."""
    corpus_required()
    import streamlit as st
    from streamlit.testing.v1 import AppTest
    from test_app_fixtures import no_errors

    from compile_viz.store import RunStore
    from compile_viz.trace_import import import_path
    from compile_viz.ui import loaders

    monkeypatch.setattr(index, "LAZY_FILE_BYTES", 0)
    monkeypatch.setattr(read, "LAZY_PAYLOAD_BYTES", 0)
    monkeypatch.setattr(loaders, "LAZY_FILE_BYTES", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    logs = tmp_path / "job"
    shutil.copytree(TLPARSE / "multi_rank_logs", logs)
    run = import_path(RunStore(tmp_path / "home"), logs).run
    assert os.path.samefile(run.path / "trace" / "dedicated_log_torch_trace_rank_1.log",
                            logs / "dedicated_log_torch_trace_rank_1.log")  # linked, not copied
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.query_params["run"] = run.id
        at.run()
        no_errors(at)
        assert isinstance(loaders.load_parse(run.id).pending, dict) and loaders.load_parse(run.id).pending
        assert at.selectbox[0].options == ["rank 1 (15 graphs)", "rank 3 (7 graphs)"]
        at.selectbox[0].set_value(3).run()
        no_errors(at)
        assert at.selectbox[1].value.startswith("rank 3 [") and at.selectbox[1].options[0].startswith("rank 3 · ")
        assert len(loaders.load_parse(run.id).opened) >= 2  # one graph of each rank parsed, no more than shown
        for page in ("compile_viz/ui/compiles_page.py",):
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
            at.query_params["run"] = run.id
            at.switch_page(page).run()
            no_errors(at)
        assert loaders.load_trace(run.id).pending  # the Compiles page lists graphs, parses none
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.query_params.update(run=run.id, compare=run.id, rank="1", compare_rank="3")
        at.run()
        no_errors(at)
    finally:
        st.cache_resource.clear()


def test_the_cache_keeps_the_most_recent_indexes(lazy, tmp_path, monkeypatch):
    monkeypatch.setattr(index_cache, "KEPT", 2)
    logs = _logs(tmp_path)[:3]
    for path in logs:
        index_cache.save(str(path), read.parse_trace(map_log(str(path)), path=path.name))
    assert len(os.listdir(index_cache.cache_dir())) == 2
    assert index_cache.load(str(logs[-1]), logs[-1].name) is not None
