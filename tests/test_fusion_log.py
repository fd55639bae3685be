"""The fusion log: captured with every run, parsed graph by graph, joined to launches, shown.

Real logs only: a CPU capture made here with the project's CLI (transformer_layer: refusals of two
kinds between its C++ kernels) and every bundled run that carries `logs/fusion.log`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.fusion_log import REASON_KINDS, parse_fusion_log, reason_kind
from compile_viz.linking import build_index
from compile_viz.linking.fusion import fusion_story, refusals_by_kind, unknown_names, why_separate
from compile_viz.render.fusion_notes import REASON_NOTES
from tests.conftest import ROOT, SAMPLE_RUNS, compile_viz_cli

GRAPH_MARK = re.compile(r"^# graph: (\S+)", re.M)
# independent greps (not the parser's patterns): the two decision lines Inductor writes
FUSED = re.compile(r"\] fusing \w+ with \w+\s*$", re.M)
REFUSED = re.compile(r"\] cannot fuse \w+ with \w+: ", re.M)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory) -> Path:
    """transformer_layer captured on this machine's CPU with the project's CLI."""
    pytest.importorskip("torch")
    home = tmp_path_factory.mktemp("fusion_home")
    proc = compile_viz_cli("capture", "transformer_layer", "--device", "cpu", "--home", str(home))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return Path(proc.stdout.strip().splitlines()[-1])


def _logs_of(source: Path) -> str | None:
    if source.suffix == ".zip":
        with zipfile.ZipFile(source) as zf:
            names = [n for n in zf.namelist() if n.endswith("logs/fusion.log")]
            return zf.read(names[0]).decode() if names else None
    log = source / "logs" / "fusion.log"
    return log.read_text() if log.exists() else None


def _sources_with_logs(cpu_run: Path) -> list[Path]:
    bundled = [z for z in sorted(SAMPLE_RUNS.glob("*.zip")) if _logs_of(z) is not None]
    return [cpu_run, *bundled]


def _grep_per_graph(text: str) -> dict[str, tuple[int, int]]:
    """graph folder -> (fused, refused) by plain greps between the `# graph:` marks."""
    out = {}
    marks = list(GRAPH_MARK.finditer(text))
    for i, m in enumerate(marks):
        chunk = text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        old = out.get(m.group(1), (0, 0))
        out[m.group(1)] = (old[0] + len(FUSED.findall(chunk)), old[1] + len(REFUSED.findall(chunk)))
    return out


@pytest.mark.slow
def test_counts_equal_greps_of_the_raw_log(cpu_run):
    for source in _sources_with_logs(cpu_run):
        expected = _grep_per_graph(_logs_of(source))
        parsed = parse_path(str(source))
        got = {g.folder.name: (len(g.fusion_decisions.fused), len(g.fusion_decisions.refused))
               for g in parsed.graphs if g.fusion_decisions is not None}
        assert got == expected, source.name
        assert expected, f"{source.name}: a log with no decisions"


@pytest.mark.slow
def test_refused_pairs_name_nodes_that_exist(cpu_run):
    for source in _sources_with_logs(cpu_run):
        for g in parse_path(str(source)).graphs:
            if g.fusion_decisions is not None:
                assert unknown_names(g, g.fusion_decisions) == [], (source.name, g.id)


@pytest.mark.slow
def test_transformer_layer_refusals_joined_to_launches(cpu_run):
    (g,) = parse_path(str(cpu_run)).graphs
    d = g.fusion_decisions
    assert [r.index for r in d.rounds] == list(range(1, len(d.rounds) + 1))
    assert d.rounds[0].nodes_before == len(g.pre_fusion.nodes)
    assert d.rounds[-1].nodes_after == d.rounds[-1].nodes_before  # the loop stops when a round fuses nothing
    kinds = dict(refusals_by_kind(d))
    assert kinds["no_shared_data"] > 0 and kinds["intermediate_nodes"] > 0
    idx = build_index(g)
    apart = [(a, b) for a in range(len(idx.launches)) for b in range(a + 1, len(idx.launches))
             if any(not p.result for p in why_separate(g, idx, d, a, b).pairs)]
    assert apart, "some pair of kernels was refused"
    a, b = apart[0]
    answer = why_separate(g, idx, d, a, b)
    assert not answer.never and not answer.same_kernel
    built = [i for i in range(len(idx.launches)) if fusion_story(idx, d, i)]
    assert built and all(set(p.result.split("_")) for i in built for p in fusion_story(idx, d, i))


@pytest.mark.slow
def test_why_command(cpu_run):
    (g,) = parse_path(str(cpu_run)).graphs
    idx = build_index(g)
    d = g.fusion_decisions
    a, b = next((a, b) for a in range(len(idx.launches)) for b in range(a + 1, len(idx.launches))
                if any(not p.result for p in why_separate(g, idx, d, a, b).pairs))
    proc = compile_viz_cli("why", str(cpu_run), f"L{a}", idx.launches[b].kernel)
    assert proc.returncode == 0, proc.stderr
    assert "refused (" in proc.stdout and f"L{a} " in proc.stdout.splitlines()[0]
    same = compile_viz_cli("why", str(cpu_run), f"L{a}", f"L{a}")
    assert "same fused node" in same.stdout
    missing = compile_viz_cli("why", str(cpu_run), "L0", "no_such_kernel")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


@pytest.mark.slow
def test_a_log_without_graph_marks_goes_to_the_graphs_in_order(cpu_run, tmp_path):
    """A user's own TORCH_LOGS="+fusion" output has no marks: round 1 starts each graph."""
    text = _logs_of(cpu_run)
    bare = GRAPH_MARK.sub("", text)
    folder = tmp_path / "run"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "fusion.log").write_text(bare)
    shutil.copytree(cpu_run / "debug", folder / "debug")
    marked = parse_path(str(cpu_run)).graphs[0].fusion_decisions
    unmarked = parse_path(str(folder)).graphs[0].fusion_decisions
    assert unmarked is not None and unmarked.fused == marked.fused and unmarked.refused == marked.refused


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0, max_value=1), flips=st.lists(st.integers(0, 255), max_size=8))
def test_cut_or_damaged_logs_never_raise(cpu_run, cut, flips):
    data = bytearray((cpu_run / "logs" / "fusion.log").read_bytes())
    data = data[: int(len(data) * cut)]
    for i, value in enumerate(flips):
        if data:
            data[(i * 7919) % len(data)] = value
    log = parse_fusion_log(bytes(data), path="fusion.log")
    assert isinstance(log.warnings, tuple)


def test_every_reason_kind_has_a_note():
    for _, kind in REASON_KINDS:
        assert kind in REASON_NOTES, kind
    assert reason_kind("no shared data due to indexing mismatch") == "indexing_mismatch"
    assert reason_kind("numel/rnumel mismatch (reduce) (64, 1), (64, 64)") == "numel_mismatch"
    assert reason_kind("something new (with, args)") == "something_new"


def test_a_run_without_a_log_says_so():
    zpath = SAMPLE_RUNS / "matmul_softmax.zip"
    for g in parse_path(str(zpath)).graphs:
        assert (g.fusion_decisions is None) == (_logs_of(zpath) is None)


@pytest.mark.slow
def test_parse_json_carries_the_decisions(cpu_run):
    import json

    proc = subprocess.run([sys.executable, "-m", "compile_viz", "parse", "--json", str(cpu_run)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    (g,) = json.loads(proc.stdout)["graphs"]
    fd = g["fusion_decisions"]
    assert set(fd) == {"rounds", "fused", "refused"}
    assert set(fd["rounds"][0]) == {"index", "nodes_before", "nodes_after"}
    assert set(fd["fused"][0]) == {"round", "first", "second", "result"}
    assert set(fd["refused"][0]) == {"round", "first", "second", "reason", "kind"}


@pytest.mark.slow
def test_viewer_answers_why_from_a_link(cpu_run, tmp_path, monkeypatch):
    """?why=a,b opens the section on two kernels Inductor refused to fuse and names the reason."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from compile_viz.store import RunStore

    (g,) = parse_path(str(cpu_run)).graphs
    idx = build_index(g)
    d = g.fusion_decisions
    a, b = next((a, b) for a in range(len(idx.launches)) for b in range(a + 1, len(idx.launches))
                if any(not p.result for p in why_separate(g, idx, d, a, b).pairs))
    kind = next(p.kind for p in why_separate(g, idx, d, a, b).pairs if not p.result)
    store = RunStore(tmp_path / "home")
    run = store.import_zip(RunStore(cpu_run.parents[1]).export_run(cpu_run.name, tmp_path / "run.zip"))
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["run"] = run.id
    at.query_params["why"] = f"{a},{b}"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    text = "\n".join(m.value for m in at.markdown)
    assert "refused" in text and f"**{kind.replace('_', ' ')}**" in text
    assert any(s.label == "First kernel" and s.value == a for s in at.selectbox)


@pytest.mark.slow
def test_names_and_reasons_from_the_log_are_escaped(cpu_run):
    """A log is data from someone else: a reason or node name with markup reaches HTML escaped."""
    from compile_viz.render.fusion import pairs_html, why_markdown

    text = _logs_of(cpu_run).replace("no shared data", "no shared <script>alert(1)</script> data", 1)
    log = parse_fusion_log(text, path="fusion.log")
    pairs = [p for d in log.graphs for p in d.refused]
    html = pairs_html(pairs)
    assert "<script>" not in html and "&lt;script&gt;" in html
    (g,) = parse_path(str(cpu_run)).graphs
    idx = build_index(g)
    answer = why_separate(g, idx, g.fusion_decisions, 0, 1)
    assert why_markdown(answer, idx)  # kernel names in backticks: code spans, shown as text


def test_the_gemm_between_two_refused_kernels_is_named():
    """layernorm_linear_gelu_residual (bundled, H100): the norm and the GELU kernels were refused
    ('intermediate nodes'); the addmm between them is named, as the sample's note says."""
    (g,) = parse_path(str(SAMPLE_RUNS / "layernorm_linear_gelu_residual.zip")).graphs
    if g.fusion_decisions is None:
        pytest.skip("this bundled run has no fusion log")
    idx = build_index(g)
    answer = why_separate(g, idx, g.fusion_decisions, 0, 2)
    assert {p.kind for p in answer.pairs} == {"intermediate_nodes"}
    assert [idx.launches[c].kernel for c in answer.between] == ["extern_kernels.addmm"]


# -- "no shared data" is about accesses, not buffers (issue 33, point 7) ----------------------------------
QWEN2 = ROOT / "tests" / "fixtures" / "third_party" / "qwen2_moe_bf16.zip"


def test_no_shared_data_names_the_buffer_both_read_and_how_their_accesses_differ():
    """Qwen2-MoE on the H100: the rotary embeddings of K (L6, op7) and Q (L8, op9) both pass `buf5` in
    call() and were refused for "no shared data". They read buf5 at one index over other loop ranges
    (2 KV heads against 4 query heads), which Inductor's score counts as nothing shared."""
    from compile_viz.render.fusion import why_markdown

    (g,) = parse_path(str(QWEN2)).graphs
    idx = build_index(g)
    assert "buf5" in g.output_code.launches[6].buffers and "buf5" in g.output_code.launches[8].buffers
    answer = why_separate(g, idx, g.fusion_decisions, 6, 8)
    assert {p.kind for p in answer.pairs} == {"no_shared_data"}
    ((first, second, (shared,)),) = answer.shared
    assert (first, second, shared.buffer) == ("op7", "op9", "buf5") and not shared.same_access
    (k,), (q,) = shared.first, shared.second
    assert k.dep.index == q.dep.index == "d1 + 32*(ModularIndexing(d3, 1, 16))"
    assert "d2: 2" in k.dep.ranges and "d2: 4" in q.dep.ranges
    text = why_markdown(answer, idx)
    assert "`op7` and `op9` both read `buf5`, but not alike (the same index over other loop ranges)" in text
    assert "`{d0: 2, d1: 32, d2: 4, d3: 32}`" in text and "scored 0" in text
    assert "they read no buffer in common" not in text  # what the tool used to say, untrue here


def test_why_command_names_the_two_index_patterns_of_one_buffer():
    """transformer_layer (bundled, H100): the Q and the K/V kernels read the qkv projection buf1 through
    other index expressions; `compile-viz why` says so, with both expressions."""
    proc = compile_viz_cli("why", str(SAMPLE_RUNS / "transformer_layer.zip"), "L2", "L3")
    assert proc.returncode == 0, proc.stderr
    assert "refused (no_shared_data): no shared data" in proc.stdout
    said = proc.stdout.splitlines()[-1]
    assert said.startswith("  op2 and op3 both read buf1, but not alike (other index expressions): op2 reads it at ")
    assert "op3 reads it at 512*d0 + 24576*d1 + 1536*d2 + d3 over {d0: 3, d1: 64, d2: 16, d3: 512}" in said
    assert "both read arg1_1" in said and "so the pair scored 0" in said


def test_viewer_names_the_shared_buffer_of_a_no_shared_data_refusal(tmp_path, monkeypatch):
    """The Viewer's "Why are these separate?" on the bundled transformer_layer run, from a link."""
    import streamlit as st
    from test_app_fixtures import fresh_store, no_errors, run_app

    for _ in fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch):
        at = run_app(ROOT / "app.py", run="bundled:transformer_layer", why="2,3")
        no_errors(at)
        text = "\n".join(m.value for m in at.markdown)
        assert "`op2` and `op3` both read `buf1`, but not alike (other index expressions)" in text
        assert "the same buffer at the same index over the same loop ranges" in text
    st.cache_data.clear()
