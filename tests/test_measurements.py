"""Typed measurement records over the real measure.json and meta.json of every bundled GPU run."""

from __future__ import annotations

import copy
import json
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_viz.measurements import FILE, Measurement, MeasureSummary, read_measurement, read_run
from compile_viz.render import perf
from compile_viz.verify.measure import summarize
from tests.conftest import SAMPLE_RUNS

BUNDLED = sorted(SAMPLE_RUNS.glob("*.zip"))
ISSUE_17 = ("speedup_low", "speedup_high", "eager_low_ms", "eager_high_ms", "compiled_low_ms", "compiled_high_ms",
            "rounds", "bound")


def _read(zip_path, name: str) -> dict:
    with zipfile.ZipFile(zip_path) as zf:
        return json.loads(zf.read(name))


@pytest.mark.parametrize("zip_path", BUNDLED, ids=lambda p: p.stem)
def test_from_json_keeps_every_field_of_a_real_file(zip_path):
    data, meta = _read(zip_path, FILE), _read(zip_path, "meta.json")
    m = Measurement.from_json(data)
    assert (m.schema, m.device, m.device_name, m.speedup) == (data["schema"], data["device"], data["device_name"],
                                                              data["speedup"])
    assert m.errors == tuple(data["errors"]) and m.compile_s == data["compile_s"]
    assert m.correctness.ok is data["correctness"]["ok"] and len(m.correctness.checks) == len(data["correctness"]["checks"])
    for variant in ("eager", "compiled"):
        assert getattr(m, variant).latency.median_ms == data[variant]["latency"]["median_ms"]
        assert getattr(m, variant).profile.kernels_per_call == data[variant]["profile"]["kernels_per_call"]
    graphs = data["kernels"]["graphs"]
    assert [g.name for g in m.graphs] == list(graphs)
    for g in m.graphs:
        assert len(g.kernels) == len(graphs[g.name]["kernels"])
        for row, raw in zip(g.kernels, graphs[g.name]["kernels"], strict=True):
            fields = {k: getattr(row, k) for k in raw if k != "library_kernels"}
            assert fields == {k: v for k, v in raw.items() if k != "library_kernels"}
            assert dict(row.library_kernels) == raw.get("library_kernels", {})
    assert m.bandwidth.peak_gbps == data["bandwidth"]["peak_gbps"]
    # the summary meta.json holds is the one the record makes, and reads back the same
    later = ("correctness", "correctness_note", "correctness_method", "eager_max_abs",  # issue 16: newer captures
             *ISSUE_17, "ladder_first", "ladder_note")  # issue 27: the backend ladder

    def kept(d: dict) -> dict:
        return {k: v for k, v in d.items() if k not in later or k in meta["measure"]}

    stored = dict(meta["measure"], bound=m.summary().bound) if "bound" in meta["measure"] else meta["measure"]
    # (who sets the pace is a verdict the reader makes anew: the capture's may come from an older rule)
    assert kept(m.summary().to_json()) == stored == kept(summarize(data))
    assert MeasureSummary.from_json(stored) == m.summary()


def test_graph_costs_by_folder_name_or_discovery_id():
    m = Measurement.from_json(_read(SAMPLE_RUNS / "gpt_small.zip", FILE))
    forward = m.graph_costs("model__0_forward_1.0")
    assert forward is m.graph_costs("run_x/model__0_forward_1.0") and forward.kernel("extern_kernels.mm")
    assert forward.kernel("no_such_kernel") is None and m.graph_costs("model__9_forward_9.9") is None


def test_read_run_prefers_meta_and_says_none_when_unmeasured(tmp_path):
    with zipfile.ZipFile(SAMPLE_RUNS / "pointwise_chain.zip") as zf:
        zf.extractall(tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    summary, full = read_run(tmp_path / "run", meta)
    assert summary == MeasureSummary.from_json(dict(meta["measure"], bound=full.summary().bound))
    assert full == read_measurement(tmp_path / "run")
    assert read_run(tmp_path / "run", {})[0] == summary  # made from measure.json when meta has none
    assert read_run(None, meta) == (MeasureSummary.from_json(meta["measure"]), None)  # as stored: no file to judge
    (tmp_path / "empty").mkdir()
    assert read_run(tmp_path / "empty", {}) == (None, None)
    text = (tmp_path / "run" / FILE).read_text()
    (tmp_path / "run" / FILE).write_text(text[: len(text) // 2])  # cut short: unreadable, not an exception
    assert read_measurement(tmp_path / "run") is None


_REAL = _read(SAMPLE_RUNS / "gpt_small.zip", FILE)


def _paths(node, prefix=()):
    yield prefix
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield from _paths(child, (*prefix, key))


_ALL_PATHS = list(_paths(_REAL))[1:]
_JUNK = st.sampled_from([None, "x", 0, -1, 2.5, float("nan"), True, [], {}, [1, "a"], {"kernel": 3}])


def _edit(data, path, value: tuple | None) -> None:
    """Replace the value at `path` by value[0], or delete it when value is None; skip a path an edit took away."""
    try:
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if value is None:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value[0]
    except (KeyError, IndexError, TypeError):
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_ALL_PATHS), _JUNK, st.booleans()), min_size=1, max_size=6))
def test_from_json_never_raises_on_a_mutated_real_file(edits):
    data = copy.deepcopy(_REAL)
    for path, junk, delete in edits:
        _edit(data, path, None if delete else (junk,))
    m = Measurement.from_json(data)
    perf.summary_html(m.summary())
    for g in m.graphs:
        perf.kernel_time_figure(g.kernels)
        perf.bandwidth_figure(g.kernels, peak_gbps=m.bandwidth.peak_gbps)
        for row in g.kernels:
            perf.kernel_cost_line(row, peak_gbps=m.bandwidth.peak_gbps)


@pytest.mark.parametrize("junk", [None, "text", 3, [], [{}]])
def test_from_json_takes_anything(junk):
    assert Measurement.from_json(junk) == Measurement()
    assert MeasureSummary.from_json(junk) is None
