"""Inductor's per-launch user stacks (the trace's `inductor_provenance_tracking_kernel_stack_traces`)
joined to the debug folder of every bundled run and third-party capture, and our own linking
measured against them with the trace hidden.

"Agree" means: every stack the trace lists for a launch has its innermost frame's (file, line)
among the launch's source lines as our linking gives them (LaunchLink.source_lines of
build_index(graph, use_stacks=False)). The innermost frame is the line the op was written on,
which is what an FX node's `# File:` comment names; a launch that runs nodes from several lines
has several stacks, and we must name each of their lines. Naming more lines than the trace (an
op the trace attributes to one line that our linking also credits to a neighbour's) still
agrees: the trace's lines are all there to click. The launches that do not are listed in
test-artifacts/trace_stack_agreement.txt.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.trace.kernel_stacks import parse_kernel_stacks, parse_stack
from compile_viz.linking import build_index
from tests.conftest import ROOT

RUNS = sorted((ROOT / "sample_runs").glob("*.zip")) + sorted((ROOT / "tests/fixtures/third_party").glob("*.zip"))
REPORT = ROOT / "test-artifacts" / "trace_stack_agreement.txt"
# our own figures when this test was written (launches agreeing / launches with stacks):
# backward 476/478, forward 243/243, inference 326/326; none may drop below 98%
TARGET = 0.98


def _graphs():
    for run in RUNS:
        for g in parse_path(str(run)).graphs:
            yield run, g


def _handle(g, index: int) -> str:
    return g.output_code.launches[index].comments.provenance_handle


def test_every_run_gets_the_traces_stacks_on_every_graph():
    """Every stack the trace lists is one launch's, found by the launch's own debug handle (the
    handles of a graph need not count its launches from 1, nor list every launch)."""
    for run, g in _graphs():
        assert g.kernel_stacks is not None, (run.name, g.folder.name)
        assert not g.kernel_stacks.warnings
        found = [g.kernel_stacks.of_launch(la.index, la.kernel, la.comments.provenance_handle)
                 for la in g.output_code.launches]
        assert sorted(ks.index for ks in found if ks is not None) == [ks.index for ks in g.kernel_stacks.launches], \
            (run.name, g.folder.name)


def test_source_lines_are_the_traces_user_frames_when_it_is_there():
    """Each stack's innermost frame outside torch's own files (tests/test_source_pane.py holds the rule)."""
    for run, g in _graphs():
        for la in build_index(g).launches:
            traced = g.kernel_stacks.of_launch(la.index, la.kernel, _handle(g, la.index))
            if traced is not None and traced.innermost:
                assert la.source_lines == traced.source_lines, (run.name, g.folder.name, la.index)


def test_linking_with_the_trace_hidden_agrees_with_its_stacks():
    agree, total = Counter(), Counter()
    report = []
    for run, g in _graphs():
        hidden = build_index(replace(g, kernel_stacks=None))
        assert hidden.launches == build_index(g, use_stacks=False).launches
        kind = g.kind
        for la in hidden.launches:
            traced = g.kernel_stacks.of_launch(la.index, la.kernel, _handle(g, la.index))
            if traced is None or not traced.innermost:
                continue
            total[kind] += 1
            missing = sorted(set(traced.innermost) - set(la.source_lines))
            if not missing:
                agree[kind] += 1
            else:
                report.append(f"  {run.stem} {g.folder.name} launch {la.index} {la.kernel[:70]}: trace's "
                              f"{_where(missing)} not among ours {_where(la.source_lines)}")
    lines = [f"{k}: {agree[k]}/{total[k]} launches agree ({100 * agree[k] / total[k]:.1f}%)" for k in sorted(total)]
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text("\n".join(lines + ["launches that do not:"] + report) + "\n")
    print(REPORT.read_text())
    assert total["forward"] > 200 and total["backward"] > 200
    for kind in total:
        assert agree[kind] / total[kind] >= TARGET, f"{kind}: see {REPORT}"


def _where(lines) -> str:
    return ", ".join(f"{f.rsplit('/', 1)[-1]}:{n}" for f, n in lines)


def test_stack_payload_parse_is_tolerant():
    text = ('{"triton_poi_fused_add_0:1": ["  File \\"m.py\\", line 3, in forward\\n    y = x + 1\\n"],'
            ' "torch.ops.aten.mm.default:2": [], "version": 2, "bad key": ["x"]}')
    parsed = parse_kernel_stacks(text, path="p")
    assert [(ks.index, ks.kernel) for ks in parsed.launches] == [(0, "triton_poi_fused_add_0"), (1, "aten.mm.default")]
    assert parsed.launches[0].innermost == (("m.py", 3),)
    assert parsed.launches[0].stacks[0][0].code == "y = x + 1"
    assert parsed.of_launch(1, "torch.ops.aten.mm.default") is parsed.launches[1]
    assert parsed.of_launch(0, "triton_other") is None
    assert [w.text[:9] for w in parsed.warnings] == ["entry 'ba"]
    assert parse_kernel_stacks(b"{not json", path="p").warnings
    assert parse_stack("junk") == ()


def test_cut_payload_never_raises():
    from compile_viz.artifacts.trace.discover import parse_trace_path

    (g,) = [g for c in parse_trace_path(str(ROOT / "sample_runs/mlp_gelu.zip")).logs[0].compiles for g in c.graphs]
    text = g.kernel_stack_traces.text
    for cut in range(0, len(text), max(1, len(text) // 97)):
        assert isinstance(parse_kernel_stacks(text[:cut], path="cut").warnings, tuple)


def test_the_quick_scan_finds_what_the_full_reader_finds():
    from compile_viz.artifacts.trace.discover import trace_logs
    from compile_viz.artifacts.trace.kernel_stacks import scan_log
    from compile_viz.artifacts.trace.read import parse_trace

    for run in RUNS:
        ((name, data),) = trace_logs(str(run))
        full = [(g.aot_id, g.kernel_stack_traces.line, g.kernel_stack_traces.text)
                for c in parse_trace(data, path=name).compiles for g in c.graphs if g.kernel_stack_traces]
        assert scan_log(data) == full, run.name


def test_viewer_shows_a_launchs_whole_stack_on_demand(tmp_path, monkeypatch):
    import zipfile

    from tests.test_app_fixtures import no_errors, run_app

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    with zipfile.ZipFile(ROOT / "tests/fixtures/third_party/timm_vit_train.zip") as z:
        z.extractall(tmp_path / "run")
    (g,) = [g for g in parse_path(str(tmp_path / "run")).graphs if g.kind == "backward"]
    la = g.output_code.launches[0]
    at = run_app(ROOT / "app.py", run=f"path:{tmp_path / 'run' / 'debug'}", graph=g.id, kernel=la.kernel, launch="0")
    no_errors(at)
    (exp,) = [e for e in at.expander if e.label.startswith("User stack")]
    page = "\n".join(h.proto.body for h in exp.get("html"))
    frames = g.kernel_stacks.launches[0].stacks[0]
    assert page.count("<li") >= len(frames) and "cv-frame-last" in page
    assert f"{frames[-1].file}:{frames[-1].line}" in page


def test_kernel_stacks_handed_over_as_tuples_are_the_same():
    """stacks_state / stacks_from_state: what parse --json's parent hands a forked child, the same
    KernelStacks read back, each distinct stack shared as the parse shares it."""
    import zipfile

    from compile_viz.artifacts.trace.kernel_stacks import parse_kernel_stacks, stacks_from_state, stacks_state
    from tests.conftest import SAMPLE_RUNS

    with zipfile.ZipFile(SAMPLE_RUNS / "gpt_small.zip") as zf:
        name = next(n for n in zf.namelist() if n.startswith("trace/") and n.endswith(".log"))
        log = zf.read(name).decode()
    entries = [line for line in log.split("\n") if line.startswith("\t{") and "File \\\"" in line]
    assert entries  # the stacks payloads are one JSON line each
    for entry in entries:
        ks = parse_kernel_stacks(entry[1:], path="x")
        back = stacks_from_state(stacks_state(ks))
        assert back == ks and len(back.launches) > 100
        assert len({id(s) for k in back.launches for s in k.stacks}) == len({id(s) for k in ks.launches for s in k.stacks})
