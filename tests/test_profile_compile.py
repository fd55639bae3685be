"""A profile whose window spans a compile (issue 33): a plain GPT-2 training script recorded with
`record --profile` on an H100, its last profiled step recompiling at another sequence length
(tests/fixtures/jobs/gpt2_recompile_in_profile_1gpu.zip), against the same job profiled in steady
state (gpt2_steady_profile_1gpu.zip) and one whose window re-armed after the recompile
(gpt2_rearmed_profile_1gpu.zip). bench/gpu_trust.sh made all three.

Inductor autotuned the new graph's kernels inside the window: 15,646 kernels (the configs, and the
L2-flushing fills between their runs), 190 ms of device time, where the program's own four steps
take under 6 ms. Before, they were charged to the launches (`extern_kernels.mm` at 19 ms).
"""

from __future__ import annotations

import json
import zipfile

import pytest

from compile_viz.artifacts.profile import parse_profile
from compile_viz.linking.time_report import time_report
from compile_viz.render.profile import compile_line, summary_line
from tests.conftest import ROOT

JOBS = ROOT / "tests" / "fixtures" / "jobs"
SPANS = JOBS / "gpt2_recompile_in_profile_1gpu.zip"
STEADY = JOBS / "gpt2_steady_profile_1gpu.zip"
REARMED = JOBS / "gpt2_rearmed_profile_1gpu.zip"


def _means(report) -> dict:
    return {(r.label, r.launch, r.kernel): r.total_us / r.calls for r in report.rows}


def test_compile_and_autotune_kernels_are_set_apart_and_reported():
    s = time_report(str(SPANS)).summary
    c = s["compile"]
    assert c["steps"] == [7] and c["kernels"] > 10_000 and c["device_us"] > 100_000 and c["host_us"] > 1e6
    assert c["calls_compiled"] >= 1 and c["top"][0][0]  # the longest compile range, by name
    assert s["total_us"] < 10_000  # the program's own device time: under 10 ms, not 196 ms
    line = compile_line(s)
    assert line.startswith("step 7 compiled: ") and "of autotune kernels (15,646), not counted" in line
    assert line in summary_line(s)
    assert "compile" not in time_report(str(STEADY)).summary  # a steady window: nothing set apart


def test_per_launch_times_agree_with_the_steady_profile():
    spans, steady = _means(time_report(str(SPANS))), _means(time_report(str(STEADY)))
    common = [k for k in steady if k in spans]
    assert len(common) == len(steady) == 209  # every launch of the steady job, timed in both
    # each within 20% (or half a microsecond: a 1.5 us kernel moves that much between two runs)
    off = [(k, spans[k], steady[k]) for k in common if abs(spans[k] - steady[k]) > max(0.2 * steady[k], 0.5)]
    assert off == []
    assert abs(sum(spans[k] for k in common) / sum(steady[k] for k in common) - 1) < 0.05
    longest = max(spans.values())
    assert longest < 200  # no launch takes milliseconds: the longest kernel of the trace is 84 us
    by_module = time_report(str(SPANS)).by_module()
    assert by_module[0][1] < 1_000  # the time per module stays in microseconds per module


def test_the_recorded_window_says_which_steps_and_why():
    with zipfile.ZipFile(SPANS) as z:
        meta = json.loads(z.read("meta.json"))
    [proc] = meta["job"]["profile"]["processes"]
    assert (proc["first_step"], proc["last_step"], proc["compiled_steps"]) == (4, 7, [7])
    assert "re-armed, but the job ended before a quiet window" in proc["why"]
    with zipfile.ZipFile(REARMED) as z:
        meta = json.loads(z.read("meta.json"))
    [proc] = meta["job"]["profile"]["processes"]
    assert (proc["first_step"], proc["last_step"], proc["compiled_steps"]) == (9, 12, [])
    assert proc["why"] == "re-armed after step 7 compiled; step 8 compiled nothing"
    assert "compile" not in time_report(str(REARMED)).summary


def test_a_compile_range_cut_out_of_the_trace_leaves_the_rest_counted():
    """Mutating the real trace: drop the outermost compile ranges' names, and the autotune kernels are
    charged again (what the reader did before); the parse never raises either way."""
    with zipfile.ZipFile(SPANS) as z:
        name = next(n for n in z.namelist() if n.endswith(".pt.trace.json"))
        doc = json.loads(z.read(name))
    kept = parse_profile(json.dumps(doc), path=name)
    for e in doc["traceEvents"]:
        if str(e.get("name", "")).endswith(" (dynamo_timed)"):
            e["name"] = e["name"].removesuffix(" (dynamo_timed)")
    blind = parse_profile(json.dumps(doc), path=name)
    assert kept.compile is not None and blind.compile is None
    assert blind.device_us - kept.device_us == pytest.approx(kept.compile.device_us)
