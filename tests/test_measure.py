"""Measurement (issue 6): per-kernel costs over bundled GPU runs, and a real CPU capture with --measure."""

from __future__ import annotations

import json
import zipfile

import pytest

from compile_viz.verify import kernel_costs
from compile_viz.verify.kernel_costs import GraphCode, attribute, launch_bytes, peak_bandwidth_gbps
from tests.conftest import SAMPLE_RUNS


def _graphs(tmp_path, name: str) -> list[GraphCode]:
    from compile_viz.verify.measure import load_graphs

    with zipfile.ZipFile(SAMPLE_RUNS / f"{name}.zip") as zf:
        zf.extractall(tmp_path)
    return load_graphs(tmp_path / "debug")


def test_peak_bandwidth_table():
    assert peak_bandwidth_gbps("NVIDIA H100 80GB HBM3") == 3350.0
    assert peak_bandwidth_gbps("NVIDIA H200") == 4800.0
    assert peak_bandwidth_gbps("NVIDIA H100 PCIe") == 2000.0
    assert peak_bandwidth_gbps("Some CPU") is None and peak_bandwidth_gbps(None) is None


def test_extern_op_names():
    assert kernel_costs.extern_op("extern_kernels.addmm") == "addmm"
    assert kernel_costs.extern_op("aten._scaled_dot_product_cudnn_attention.default") == \
        "_scaled_dot_product_cudnn_attention"
    assert kernel_costs.extern_op("torch.ops.aten.convolution.default") == "convolution"


def test_bytes_of_the_pointwise_chain_kernel(tmp_path):
    (g,) = _graphs(tmp_path, "pointwise_chain")
    # one fp32 4096x4096 read and one written: the whole point of fusing the chain
    assert list(launch_bytes(g.code, g.input_dtypes).values()) == [(2 * 4096 * 4096 * 4, "signature x buffer sizes")]


def test_bytes_in_gpt_small_are_known_for_most_launches(tmp_path):
    graphs = _graphs(tmp_path, "gpt_small")
    assert {g.name for g in graphs} == {"model__0_forward_1.0", "model__0_backward_3.1"}
    fwd = next(g for g in graphs if "forward" in g.name)
    sizes = launch_bytes(fwd.code, fwd.input_dtypes)
    # launch 3: bf16 copy of a 768x2304 fp32 weight: read 4 bytes, write 2 per element
    assert sizes[3][0] == 768 * 2304 * (4 + 2)
    known = sum(1 for b, _ in sizes.values() if b)
    assert known >= 0.9 * len(sizes)


def test_attribute_matches_triton_names_externs_and_outside(tmp_path):
    (g,) = _graphs(tmp_path, "matmul_softmax")
    names = [k.name for k in g.code.kernels]
    externs = [la.kernel for la in g.code.launches if la.is_extern]
    assert externs == ["extern_kernels.mm"] and len(names) == 1
    records = []
    for step in range(2):  # two profiled calls, one region each
        records += [{"name": "sm90_xmma_gemm_f32f32", "op": "aten::mm", "dur_us": 4.0, "region": step},
                    {"name": names[0], "op": names[0], "dur_us": 6.0, "region": step},
                    {"name": "elementwise_kernel", "op": "aten::add", "dur_us": 1.0, "region": None}]
    out = attribute(records, [g], steps=2)
    rows = {r["kernel"]: r for r in out["graphs"][g.name]["kernels"]}
    assert rows[names[0]]["time_us"] == 6.0 and rows[names[0]]["share"] == 0.6
    assert rows["extern_kernels.mm"]["library_kernels"] == {"sm90_xmma_gemm_f32f32": 4.0}
    assert rows[names[0]]["gbps"] == pytest.approx(rows[names[0]]["bytes_per_launch"] / 6e3, rel=1e-3)
    assert out["outside"] == [{"op": "aten::add", "time_us": 1.0, "count_per_call": 1.0}]
    assert out["graphs"][g.name]["invocations_per_call"] == 1.0


def test_time_calls_takes_at_least_fifty_calls():
    torch = pytest.importorskip("torch")
    from compile_viz.verify.measure import time_calls

    x = torch.randn(64, 64)
    stats = time_calls(torch, lambda a: a[0] @ a[0], (x,), "cpu", budget_s=0.05)
    assert stats["calls"] >= 50 and stats["warmup_calls"] >= 3
    assert stats["min_ms"] <= stats["median_ms"] <= max(stats["p90_ms"], stats["median_ms"])


@pytest.mark.slow
def test_real_cpu_capture_with_measure(tmp_path):
    pytest.importorskip("torch")
    from compile_viz.capture import CaptureOptions, capture
    from compile_viz.store import RunStore

    store = RunStore(tmp_path / "home")
    run = capture("tiny_linear_relu", CaptureOptions(device="cpu", train=True, measure=True, timeout_s=300),
                  store=store)
    assert run.ok, f"{run.reason}\n{run.meta.get('stderr_tail')}"
    summary = run.meta["measure"]
    assert summary["file"] == "measure.json" and summary["errors"] == 0 and summary["ok"] is True
    assert summary["speedup"] > 0 and summary["compile_s"] > 0
    full = json.loads((run.path / "measure.json").read_text())
    assert full["correctness"]["grads_compared"] and full["correctness"]["compared"] == 3  # output + 2 grads
    for side in ("eager", "compiled"):
        assert full[side]["latency"]["calls"] >= 50 and full[side]["latency"]["method"] == "wall clock"
        assert full[side]["profile"]["kernels_per_call"] > 0
    graphs = full["kernels"]["graphs"]
    assert set(graphs) == {"model__0_forward_1.0", "model__0_backward_3.1"}
    fwd = {r["kernel"]: r for r in graphs["model__0_forward_1.0"]["kernels"]}
    cpp = [r for r in fwd.values() if r["kind"] == "cpp"]
    assert cpp and all(r["time_us"] and r["count_per_call"] == 1.0 and r["bytes_per_launch"] for r in cpp)
    assert fwd["extern_kernels.addmm"]["time_us"] > 0  # the aten::addmm under the graph's call
    assert 0.99 <= sum(r["share"] or 0 for g in graphs.values() for r in g["kernels"]) <= 1.01
    assert any(r["op"].startswith("aten::") for r in full["kernels"]["outside"])  # the eager loss
    # the measurement survives export and import
    zip_path = store.export_run(run.id, tmp_path / "run.zip")
    again = store.import_zip(zip_path)
    assert json.loads((again.path / "measure.json").read_text()) == full
