"""Measurement views: Plotly figures and verdict HTML over the bundled GPU runs, and the panel in AppTest."""

from __future__ import annotations

import zipfile

import pytest

from compile_viz.measurements import MeasureSummary, read_run
from compile_viz.render import perf
from tests.conftest import SAMPLE_RUNS


def _measure(tmp_path, name: str):
    with zipfile.ZipFile(SAMPLE_RUNS / f"{name}.zip") as zf:
        zf.extractall(tmp_path / name)
    return read_run(tmp_path / name, {})


def test_bundled_runs_carry_a_measurement(tmp_path):
    for name in ("pointwise_chain", "matmul_softmax", "gpt_small"):
        summary, full = _measure(tmp_path, name)
        assert full and summary.ok is True and summary.device_name.startswith("NVIDIA")
        assert full.compiled.latency.calls >= 50 and not full.errors
    pw, _ = _measure(tmp_path, "pointwise_chain")
    assert pw.compiled_kernels_per_call < pw.eager_kernels_per_call and pw.speedup > 1
    assert perf.verdict(pw)[0] == "faster"
    mm, _ = _measure(tmp_path, "matmul_softmax")
    assert perf.verdict(mm)[0] == "slower"  # 100x100: launch overhead beats fusion


def test_time_figure_is_sorted_coloured_and_clickable(tmp_path):
    _, full = _measure(tmp_path, "gpt_small")
    rows = full.graph_costs("model__0_forward_1.0").kernels
    assert full.graph_costs("run_x/model__0_forward_1.0") is not None  # ids prefixed by discovery
    fig = perf.kernel_time_figure(rows, selected="extern_kernels.mm")
    names = [c[0] for trace in fig.data for c in trace.customdata]
    timed = [r for r in rows if r.time_us]
    assert sorted(names) == sorted(r.kernel for r in timed)
    assert {trace.name for trace in fig.data} >= {"extern call", "pointwise"}
    assert list(fig.layout.yaxis.categoryarray)[-1] == perf._short(max(timed, key=lambda r: r.time_us).kernel)
    widths = [w for trace in fig.data for w in trace.marker.line.width]
    assert widths.count(3) == 1  # the selected kernel is outlined


def test_bandwidth_figure_has_the_peak(tmp_path):
    _, full = _measure(tmp_path, "pointwise_chain")
    (block,) = full.graphs
    (row,) = block.kernels
    assert 500 < row.gbps < full.bandwidth.peak_gbps  # a memory-bound kernel near the roof
    fig = perf.bandwidth_figure(block.kernels, peak_gbps=3350.0, copy_gbps=2950.0)
    assert len(fig.data) == 1 and len(fig.layout.shapes) == 2
    assert "3,350 GB/s" in fig.layout.annotations[0].text
    line = perf.kernel_cost_line(row, peak_gbps=3350.0)
    assert "µs per call" in line and "100.0% of compiled kernel time" in line and "of peak" in line


def test_summary_html_escapes_and_says_when_unmeasured():
    html = perf.summary_html(MeasureSummary(ok=True, speedup=2.0, eager_median_ms=1.0, compiled_median_ms=0.5,
                                            device_name="<script>alert(1)</script>"))
    assert "<script>" not in html and "&lt;script&gt;" in html and "2.00x faster" in html
    assert "without measurement" in perf.summary_html(None)
    assert perf.verdict(MeasureSummary(ok=False, speedup=3.0))[0] == "mismatch"


def _panel_script():
    import os

    import streamlit as st

    from compile_viz.store import RunStore
    from compile_viz.ui.perf_panel import perf_panel
    from compile_viz.ui.runs import resolve

    run = resolve("bundled:gpt_small", RunStore(os.environ["COMPILE_VIZ_HOME"]))
    picked = perf_panel(run, "model__0_forward_1.0", st.session_state.get("kernel"))
    st.session_state["kernel"] = picked
    st.text(f"selected={picked}")


def test_panel_on_a_bundled_gpu_run(tmp_path, monkeypatch):
    testing = pytest.importorskip("streamlit.testing.v1")
    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path))
    at = testing.AppTest.from_function(_panel_script, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "faster" in html and "NVIDIA H100" in html
    assert len(at.get("plotly_chart")) == 2
    assert at.text[0].value == "selected=None"
    at.session_state["kernel"] = "extern_kernels.mm"
    at.run()
    assert not at.exception
    assert "extern_kernels.mm" in " ".join(c.value for c in at.caption) and "GB/s" in at.caption[-1].value


def test_viewer_shows_the_panel_and_the_code_pane_line(tmp_path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_SAMPLE_RUNS", str(SAMPLE_RUNS))
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["run"] = "bundled:pointwise_chain"
    at.query_params["kernel"] = "triton_poi_fused_abs_add_div_mul_sigmoid_tanh_0"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Measured: ") and "GB/s" in c for c in captions), captions
    assert len(at.get("plotly_chart")) == 2
    assert "faster" in " ".join(h.proto.body for h in at.get("html"))
    st.cache_resource.clear()
    st.cache_data.clear()
