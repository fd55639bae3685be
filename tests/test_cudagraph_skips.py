"""Why CUDA graphs were skipped (mode="reduce-overhead"): Inductor's `[__cudagraphs]` warning, read from
a run's stderr, shown at the top of the Viewer with the user's line and what to do.

The run is real: sample_runs/cudagraph_skip_mutation.zip, `compile-viz capture cudagraph_skip_mutation
--device cuda --mode reduce-overhead --measure` on an H200 (torch 2.11). Its stderr's warning is the only
place the reason is kept: the compilation metrics leave `cudagraph_skip_reason` null.
"""

from __future__ import annotations

import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_app_fixtures import fresh_store, no_errors, run_app

from compile_viz.artifacts.cudagraphs import cudagraph_skips, run_cudagraph_skips
from compile_viz.render.cudagraphs import skip_markdown
from tests.conftest import ROOT, SAMPLE_RUNS

RUN = SAMPLE_RUNS / "cudagraph_skip_mutation.zip"


def _stderr() -> str:
    with zipfile.ZipFile(RUN) as zf:
        return zf.read("logs/stderr.txt").decode("utf-8")


def test_the_skip_names_the_reason_and_the_users_line():
    (skip,) = cudagraph_skips(_stderr())
    assert skip.reason == "mutated inputs (1 instances)"
    assert skip.file.endswith("sample_models/cudagraph_skip_mutation.py") and skip.line == 11
    assert skip.function == "forward" and skip.code.startswith("total.add_(x.relu())")
    assert skip.rank is None and skip.log_line == 4
    line = skip_markdown(skip)
    assert "**CUDA graphs skipped**: mutated inputs (1 instances) at cudagraph\\_skip\\_mutation.py:11" in line
    assert "return a new tensor instead of writing into an input in place" in line and "\n" not in line


def test_a_multi_rank_stderr_keeps_each_ranks_skip():
    """torch.distributed prefixes each line with its rank: the same warning from two ranks is two skips."""
    lines = [ln for ln in _stderr().splitlines() if "[__cudagraphs]" in ln]
    text = "\n".join([f"[rank0]:{ln}" for ln in lines] + [f"[rank1]:{ln}" for ln in lines])
    assert [(s.rank, s.line) for s in cudagraph_skips(text)] == [(0, 11), (1, 11)]


def test_a_cut_warning_keeps_its_reason():
    """Cut after the reason's line (a log truncated mid-stack): the reason stays, no line is made up."""
    text = _stderr()
    cut = text[:text.index('File "')]
    (skip,) = cudagraph_skips(cut)
    assert skip.reason == "mutated inputs (1 instances)" and skip.file is None and skip.code is None
    assert "CUDA graphs skipped" in skip_markdown(skip) and " at " not in skip_markdown(skip)


def test_runs_without_a_skip_have_none(tmp_path):
    for z in sorted(SAMPLE_RUNS.glob("*.zip")):
        if z != RUN:
            with zipfile.ZipFile(z) as zf:
                names = set(zf.namelist())
                text = zf.read("logs/stderr.txt").decode("utf-8", "replace") if "logs/stderr.txt" in names else ""
            assert cudagraph_skips(text) == (), z.name
    assert run_cudagraph_skips(tmp_path / "no-such-run") == ()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_stderr().splitlines() + ["", "[__cudagraphs]", "junk ] [__cudagraphs] x"]),
                max_size=30), st.text(max_size=200))
def test_any_mix_of_real_lines_and_junk_parses_without_raising(lines, junk):
    skips = cudagraph_skips("\n".join(lines) + junk)
    for s in skips:
        assert s.reason and "\n" not in skip_markdown(s)


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch)


def test_the_viewer_says_why_cuda_graphs_were_skipped(store):
    at = run_app(ROOT / "app.py", run="bundled:cudagraph_skip_mutation")
    no_errors(at)
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("**CUDA graphs skipped**: mutated inputs") and ":11 `total.add_" in w
               for w in warnings), warnings
    at = run_app(ROOT / "app.py", run="bundled:tiny_linear_relu")
    no_errors(at)
    assert not any("CUDA graphs skipped" in w.value for w in at.warning)
