"""What each link rests on (LaunchLink.basis): PyTorch's provenance and the trace's stacks when the run
has them, "inferred" when they are hidden, in `parse --json` and in the Viewer."""

from __future__ import annotations

import json
import zipfile
from html import escape
from pathlib import Path

from compile_viz.linking.model import EXACT_HINT
from tests.conftest import ROOT
from tests.test_parse_cli import run_cli

RUN = ROOT / "tests/fixtures/third_party/timm_vit_train.zip"  # a training step: forward and backward


def _unpacked(tmp_path: Path, *, hidden: bool) -> Path:
    """The run's folder; `hidden`: without its provenance JSON and its trace, as a debug folder
    captured with torch before 2.8 or without TORCH_TRACE would be."""
    out = tmp_path / ("hidden" if hidden else "full")
    with zipfile.ZipFile(RUN) as z:
        z.extractall(out)
    if hidden:
        for p in out.rglob("inductor_provenance_tracking_node_mappings*.json"):
            p.unlink()
        for p in (out / "trace").iterdir():
            p.unlink()
        (out / "trace").rmdir()
    return out


def _launches(folder: Path) -> dict[str, list[dict]]:
    proc = run_cli("parse", "--json", str(folder))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return {g["id"]: g["links"]["launches"] for g in doc["graphs"]}


def test_parse_json_says_provenance_with_the_json_and_inferred_without(tmp_path):
    full = _launches(_unpacked(tmp_path, hidden=False))
    (forward,) = [launches for gid, launches in full.items() if "forward" in gid]
    assert len(forward) > 5
    for la in forward:
        assert la["basis"]["nodes"] == "provenance", la["index"]
        # a launch the trace lists no stack for (a copy of a graph input) takes the lines of the JSON's nodes
        assert la["basis"]["source_lines"] == ("stack_traces" if la["index"] >= 2 else "provenance"), la["index"]
    hidden = _launches(_unpacked(tmp_path, hidden=True))
    assert hidden.keys() == full.keys()
    for gid, launches in hidden.items():
        assert launches, gid
        for la in launches:
            assert la["basis"] == {"nodes": "inferred", "source_lines": "inferred"}, (gid, la["index"])
            assert la["evidence"] in ("comments", "structure", "order")
        # hidden or not, every other field of a launch is where it was (the links may differ)
        assert [la["kernel"] for la in launches] == [la["kernel"] for la in full[gid]]


def test_viewer_marks_inferred_links_and_says_what_makes_them_exact(tmp_path, monkeypatch):
    from compile_viz.artifacts import parse_path
    from tests.test_app_fixtures import no_errors, run_app

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    for hidden in (True, False):
        folder = _unpacked(tmp_path, hidden=hidden)
        (g,) = [g for g in parse_path(str(folder)).graphs if g.kind == "forward"]
        la = g.output_code.launches[3]
        at = run_app(ROOT / "app.py", run=f"path:{folder / 'debug'}", graph=g.id, kernel=la.kernel, launch="3")
        no_errors(at)
        page = "\n".join(h.proto.body for h in at.get("html"))
        if hidden:
            assert "cv-basis-inferred" in page and "Inferred links" in page and escape(EXACT_HINT) in page
        else:
            assert "cv-basis-exact" in page and "cv-basis-inferred" not in page


def test_the_mark_says_what_would_make_links_exact():
    """Hidden JSON and trace: capture with torch >= 2.8 and the trace. A backward graph captured so:
    its nodes are still inferred (PyTorch maps none of its launches), its lines are the trace's."""
    from dataclasses import replace

    from compile_viz.artifacts import parse_path
    from compile_viz.linking import build_index
    from compile_viz.render.panels import basis_html

    graphs = {g.kind: g for g in parse_path(str(RUN)).graphs}
    backward = build_index(graphs["backward"]).launches[3]
    assert (backward.basis.nodes, backward.basis.source_lines) == ("inferred", "stack_traces")
    assert "cv-basis-inferred" in basis_html(backward) and "none for a backward graph" in basis_html(backward)
    hidden = build_index(replace(graphs["forward"], provenance=None, kernel_stacks=None)).launches[3]
    assert escape(EXACT_HINT) in basis_html(hidden) and "the kernel&#x27;s own comments" in basis_html(hidden)
    exact = build_index(graphs["forward"]).launches[3]
    assert "cv-basis-exact" in basis_html(exact) and "Inferred" not in basis_html(exact)


# issue 38: Mixtral's backward computes the gradients of two projections of one input (view_25) with
# one matrix multiply each, both fed what either call is passed; only the calls' comments in call()
# tell them apart. Without those comments the inference is uncertain, and says so.
MIXTRAL = ROOT / "tests/fixtures/classes/mixtral_train.zip"
_EXTERN_COMMENT = "# Topologically Sorted Source Nodes:"


def _without_extern_comments(tmp_path: Path) -> Path:
    """Mixtral's run with the comment lines above its extern calls taken out of the backward's
    call(), as a wrapper that writes none would be."""
    out = tmp_path / "mixtral"
    with zipfile.ZipFile(MIXTRAL) as z:
        z.extractall(out)
    (code,) = out.rglob("model__0_backward_3.1/output_code.py")
    lines = code.read_text().splitlines(keepends=True)
    keep = [ln for k, ln in enumerate(lines) if not (ln.lstrip().startswith(_EXTERN_COMMENT) and any(
        "extern_kernels." in after for after in lines[k + 1:k + 3]))]
    assert len(keep) < len(lines)
    code.write_text("".join(keep))
    return out


def test_a_tie_says_its_alternatives_in_parse_json_and_the_viewer(tmp_path, monkeypatch):
    from compile_viz.artifacts import parse_path
    from compile_viz.linking import build_index
    from tests.test_app_fixtures import no_errors, run_app

    # with the comments: each call takes the multiply its comment names a view of, no tie
    (g,) = [g for g in parse_path(str(MIXTRAL)).graphs if g.kind == "backward"]
    full = build_index(g)
    assert [full.launches[i].post_grad_nodes for i in (30, 34)] == [("mm_17",), ("mm_21",)]
    assert not any(la.alternatives for la in full.launches)

    folder = _without_extern_comments(tmp_path)
    launches = {gid: ls for gid, ls in _launches(folder).items() if "backward" in gid}
    ((gid, backward),) = launches.items()
    tied = {la["index"]: la for la in backward if "alternatives" in la}
    assert sorted(tied) == [30, 34]
    # graph order chose the same as the comments did; the other placement is each one's alternative
    assert tied[30]["post_grad_nodes"] == ["mm_17"] and tied[30]["alternatives"] == [["mm_21"]]
    assert tied[34]["post_grad_nodes"] == ["mm_21"] and tied[34]["alternatives"] == [["mm_17"]]
    assert tied[30]["basis"]["nodes"] == "inferred" and tied[30]["evidence"] == "order"

    monkeypatch.setenv("COMPILE_VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COMPILE_VIZ_WARM", "0")
    at = run_app(ROOT / "app.py", run=f"path:{folder / 'debug'}", graph=gid, kernel="extern_kernels.mm", launch="30")
    no_errors(at)
    page = "\n".join(h.proto.body for h in at.get("html"))
    assert "cv-basis-inferred" in page and "another placement fits as well" in page and "[mm_21]" in page
