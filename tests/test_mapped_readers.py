"""Every reader of a TORCH_TRACE log's bytes takes a big log mapped (index.MappedLog) as it takes
bytes (issue 33, point 1: a run with its debug folder and a log over the mapping threshold died in
kernel_stacks.scan_log with "'MappedLog' object has no attribute 'count'").

Checked on real captures with the mapping threshold brought down to 0, as tests/test_big_logs.py
does: the scale fixture (a 48-layer GPT-2 on an H100: debug folder plus a 30 MB log) and the
third-party captures, each read once as bytes and once mapped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_viz.artifacts.trace import index, read
from compile_viz.artifacts.trace.aot import with_aot_payloads
from compile_viz.artifacts.trace.index import MappedLog, map_log
from compile_viz.artifacts.trace.kernel_stacks import scan_log
from compile_viz.artifacts.trace.module_paths import scan_dynamo_inputs
from tests.conftest import ROOT
from tests.test_big_logs import _plain

DEEP = ROOT / "tests" / "fixtures" / "scale" / "gpt2_deep.zip"
THIRD_PARTY = sorted((ROOT / "tests" / "fixtures" / "third_party").glob("*.zip"))
# what each reader of log bytes gives; each must give the same for the bytes and the mapped log
READERS = {
    "scan_log": scan_log,
    "scan_dynamo_inputs": scan_dynamo_inputs,
    # a mapped log leaves its big payloads in the file: compared by their text
    "parse_trace": lambda data: _plain(with_aot_payloads(read.parse_trace(data, path="t.log"), data)),
}


def _log_of(run_zip, tmp_path):
    """The trace log of a run zip, written out as the store keeps it (a plain file)."""
    with zipfile.ZipFile(run_zip) as z:
        (name,) = [n for n in z.namelist() if n.startswith("trace/") and n.endswith(".log")]
        target = tmp_path / f"{run_zip.stem}.log"
        target.write_bytes(z.read(name))
    return target


@pytest.mark.parametrize("run_zip", [DEEP, *THIRD_PARTY], ids=lambda p: p.stem)
def test_every_reader_reads_a_mapped_log_as_its_bytes(run_zip, tmp_path):
    path = _log_of(run_zip, tmp_path)
    data = path.read_bytes()
    mapped = map_log(str(path))
    try:
        for name, reader in READERS.items():
            assert reader(mapped) == reader(data), (run_zip.stem, name)
        assert scan_log(mapped), run_zip.stem  # each of these runs has its launches' stacks
    finally:
        mapped.close()


@pytest.fixture(scope="module")
def deep_log(tmp_path_factory):
    path = _log_of(DEEP, tmp_path_factory.mktemp("deep"))
    mapped = map_log(str(path))
    yield path.read_bytes(), mapped
    mapped.close()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, 1 << 30), size=st.integers(0, 40), start=st.none() | st.integers(-(1 << 26), 1 << 26),
       end=st.none() | st.integers(-(1 << 26), 1 << 26), chunk=st.sampled_from([4099, 1 << 20, index.COUNT_CHUNK]))
def test_a_mapped_log_answers_the_bytes_methods_as_bytes(deep_log, monkeypatch, at, size, start, end, chunk):
    """count, startswith, endswith, index and rindex of a piece of the real log, anywhere in it, with
    count's chunks cut anywhere."""
    data, mapped = deep_log
    monkeypatch.setattr(index, "COUNT_CHUNK", chunk)
    at %= len(data)
    sub = data[at:at + size]
    for method in ("count", "startswith", "endswith", "index", "rindex"):
        for args in ((sub,), (sub, start), (sub, start, end)):
            assert _call(mapped, method, args) == _call(data, method, args), (method, at, size, start, end)
    assert mapped.count(b"\n") == data.count(b"\n") and mapped.count(data[at]) == data.count(data[at])
    assert mapped.startswith((b"#", data[:5])) and mapped.endswith(data[-3:])


def _call(obj, method, args):
    try:
        return getattr(obj, method)(*args)
    except ValueError:
        return ValueError


def _parse_json(run_dir, *, mapped: bool) -> dict:
    """`python -m compile_viz parse RUN --json` in a fresh process; with every log mapped when asked."""
    lower = "import compile_viz.artifacts.trace.index as i; i.LAZY_FILE_BYTES = 0; " if mapped else ""
    code = lower + "import runpy; runpy.run_module('compile_viz', run_name='__main__', alter_sys=True)"
    proc = subprocess.run([sys.executable, "-c", code, "parse", str(run_dir), "--json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_parse_json_of_a_run_with_its_debug_folder_and_a_mapped_log(tmp_path):
    with zipfile.ZipFile(DEEP) as z:
        z.extractall(tmp_path / "run")
    assert os.path.isdir(tmp_path / "run" / "debug") and os.listdir(tmp_path / "run" / "trace")
    mapped = _parse_json(tmp_path / "run", mapped=True)
    assert mapped == _parse_json(tmp_path / "run", mapped=False)
    stacked = [la for g in mapped["graphs"] for la in g["links"]["launches"]
               if la["basis"]["source_lines"] == "stack_traces"]
    assert len(mapped["graphs"]) == 2 and len(stacked) > 500  # the trace's stacks, read from the mapped log


def test_viewer_opens_a_run_with_its_debug_folder_and_a_mapped_log(monkeypatch, tmp_path):
    import streamlit as st
    from test_app_fixtures import no_errors, run_app

    from compile_viz.store import RunStore
    from compile_viz.ui import loaders

    monkeypatch.setattr(index, "LAZY_FILE_BYTES", 0)
    monkeypatch.setattr(loaders, "LAZY_FILE_BYTES", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    run = RunStore(tmp_path / "home").import_zip(DEEP)
    seen: list = []
    real_scan = scan_log

    def spy(data):
        seen.append(type(data))
        return real_scan(data)

    monkeypatch.setattr("compile_viz.artifacts.trace.kernel_stacks.scan_log", spy)
    st.cache_resource.clear()
    try:
        parse = loaders.load_parse(run.id)
        graph = parse.graph(next(g.id for g in parse.graphs if g.kind == "forward"))  # opened when asked for
        assert MappedLog in seen and graph.kernel_stacks is not None and graph.kernel_stacks.launches
        launch = graph.output_code.launches[0]
        at = run_app(ROOT / "app.py", run=run.id, graph=graph.id, kernel=launch.kernel, launch="0")
        no_errors(at)
    finally:
        st.cache_resource.clear()
