"""scripts/timing-check.sh on the CPU (issue 17): one tiny sample, the do_bench stand-in, the JSON and the table.

The GPU run itself (triton's do_bench, 18 models in parallel) is the lead's; this checks the
script's plumbing end to end with the project's own CLI, as it will run there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_the_script_captures_benches_and_tabulates_on_the_cpu(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    env = dict(os.environ, ONLY="tiny_linear_relu", REPEATS="2", BENCH="standin", JOBS="1", PYTHON=sys.executable,
               CUDA_VISIBLE_DEVICES="", DO_BENCH_REP_MS="100")
    proc = subprocess.run(["bash", "scripts/timing-check.sh", str(out), "--device", "cpu"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    record = json.loads((out / "tiny_linear_relu.json").read_text())
    assert "error" not in record, record
    tool = record["tool"]
    assert tool["rounds"] >= 5 and tool["low_ms"] <= tool["compiled_ms"] <= tool["high_ms"]
    assert "interleaved" in tool["method"]
    resolved = json.loads((Path(record["run"]) / "meta.json").read_text())["resolved"]
    benches = record["do_bench"]
    assert len(benches) == 2 and len({b["pid"] for b in benches}) == 2  # two fresh processes
    for b in benches:
        assert b["bench"].startswith("stand-in") and b["q20_ms"] <= b["median_ms"] <= b["q80_ms"]
        assert b["debug_env"] is None and b["settings"] == resolved  # the same model, without the debug output
    assert set(record["agreement"]) >= {"agree", "gap", "db_median"}
    table = (out / "timing.md").read_text()
    assert "| tiny_linear_relu |" in table and "reference: stand-in" in table and " of 1 agree" in table
    assert (out / "gpu.lock").exists()  # every timing went through the lock
