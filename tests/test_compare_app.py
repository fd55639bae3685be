"""The Compare page under AppTest: ?run=A&compare=B over the bundled runs and the third-party pair."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, SAMPLE_RUNS, THIRD_PARTY
from tests.test_app_fixtures import fresh_store, no_errors, run_app

APP = ROOT / "app.py"


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch)


def app(**params) -> AppTest:
    return run_app(APP, **params)


def html(at: AppTest) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def row_classes(at: AppTest) -> list[str]:
    """Return the class of every row of the matched-groups table."""
    return re.findall(r'class="cv-match[^"]*" data-class="([^"]*)"', html(at))


def box(at: AppTest, label: str):
    return next(s for s in at.selectbox if s.label == label)


def param(at: AppTest, name: str) -> str:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def test_a_run_with_itself_shows_both_summaries_and_only_same(store):
    at = app(run="bundled:mlp_gelu", compare="bundled:mlp_gelu")
    no_errors(at)
    assert at.subheader[0].value == "MLP with GELU · bundled run mlp_gelu  vs  MLP with GELU · bundled run mlp_gelu"
    page = html(at)
    assert 'data-label="latency (compiled)"' in page and 'data-label="kernels"' in page
    assert row_classes(at) == ["same"] * 3  # one row per group, every launch once
    assert ">=<" in page  # no delta anywhere


def test_default_vs_autotune_colours_moved_groups_and_diffs_code(store):
    a = store.import_zip(THIRD_PARTY / "bert_mask.zip").id
    b = store.import_zip(THIRD_PARTY / "bert_mask_autotune.zip").id
    at = app(run=a, compare=b)
    no_errors(at)
    page = html(at)
    assert "12 moved" in page and "1 split" in page and "11 same" in page
    assert Counter(row_classes(at)) == {"moved": 12, "same": 11, "split": 1}
    # the first changed group is picked: extern addmm in A, a Triton template in B (its code shown)
    assert "extern call" in " ".join(c.value for c in at.caption)
    assert "triton_tem_fused_addmm_t_view_1" in page
    # pick a same-kind group: both kernels' code and a text diff
    picker = box(at, "Group")
    same = next(i for i in picker.options if ": same · triton_per_fused_add_embedding" in i)
    at = picker.set_value(int(same.split(":")[0])).run()
    no_errors(at)
    assert param(at, "group") == same.split(":")[0]
    assert 'class="cv-diff"' in html(at)


def test_repairing_graphs_is_kept_in_the_url(store):
    at = app(run="bundled:gpt_small", compare="bundled:gpt_small")
    no_errors(at)
    repair = box(at, "Pair A's graph with")
    backward = next(o for o in repair.options if "backward" in o).split(" · ")[1]  # labels are "kind · id"
    at = repair.set_value(backward).run()
    no_errors(at)
    assert param(at, "pair") == f"model__0_forward_1.0:{backward}"
    pairs = box(at, "Graphs").options  # A's forward with B's backward; A's backward and B's forward alone
    assert pairs[0].endswith(f"B {backward}") and any(p.endswith("B (none)") for p in pairs)
    assert any("A (none) ↔ B model__0_forward_1.0" in p for p in pairs)


def test_the_run_pickers_change_the_url(store):
    at = app(run="bundled:mlp_gelu", compare="bundled:mlp_gelu")
    at = box(at, "Run B").set_value("bundled:pointwise_chain").run()
    no_errors(at)
    assert param(at, "run") == "bundled:mlp_gelu" and param(at, "compare") == "bundled:pointwise_chain"
    classes = set(row_classes(at))  # two different models: nothing in common
    assert classes == {"only_in_a", "only_in_b"}


def test_without_compare_the_viewer_opens(store):
    at = app(run="bundled:mlp_gelu")
    no_errors(at)
    assert not any(s.label == "Run B" for s in at.selectbox)


def test_both_graphs_are_coloured_by_class_and_a_click_picks_the_group(store):
    from compile_viz.render.compare import class_color

    a = store.import_zip(THIRD_PARTY / "bert_mask.zip").id
    b = store.import_zip(THIRD_PARTY / "bert_mask_autotune.zip").id
    at = app(run=a, compare=b)
    no_errors(at)
    svgs = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")]
    assert len(svgs) == 2 and all("<svg" in s for s in svgs)
    moved, same = class_color("moved"), class_color("same")
    assert all(f'fill="{moved}"' in s and f'fill="{same}"' in s for s in svgs)
    # the chosen group (the first that changed: launch 1 in both runs) is outlined in both graphs
    assert all('id="cvL1" class="node cv-sel"' in s for s in svgs)
