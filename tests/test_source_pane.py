"""The source pane opens on the user's own line (issue 33, point 6).

A FlexAttention template launch's stack runs through torch (`torch/nn/attention/flex_attention.py`
under the user's `flex_attention(...)` call): its innermost frame is torch's, which the pane opened
("not on this machine") while the user's call line went unmarked. A launch's source lines are now
each stack's innermost frame outside torch's own files; the pane opens on the first file of the
selection it can read, and scrolls to the first marked line.

Held on a real FlexAttention capture (tests/fixtures/flex/flex_attention_h100.zip, the H100, from
tests/third_party/flex_user.py), on other real stacks that end in torch (wav2vec2's weight norm in
torch/nn/utils/parametrizations.py, Qwen2-MoE's F.* calls in torch/nn/functional.py) and, for the
pane's choice of file, on a real stack of the bundled transformer_layer run made to pass through a
library file that is not on this machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from test_app_fixtures import fresh_store, no_errors, run_app

from compile_viz.artifacts import parse_path
from compile_viz.artifacts.model import TORCH_FILE, KernelStack, StackFrame, user_frame
from compile_viz.linking import build_index
from compile_viz.render.code_html import highlight_code
from tests.conftest import ROOT, SAMPLE_RUNS

THIRD = ROOT / "tests" / "fixtures" / "third_party"
SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
FLEX = StackFrame(f"{SITE}/torch/nn/attention/flex_attention.py", 1613, "flex_attention",
                  "out, lse, max_scores = flex_attention_hop(")
HOP = StackFrame(f"{SITE}/torch/_higher_order_ops/flex_attention.py", 98, "__call__", "return super().__call__(")
USER = "/work/main/sample_models/transformer_layer.py"
SOFTMAX = 6  # transformer_layer's softmax launch: its one real stack is [transformer_layer.py:18 forward]


def _name(lines) -> list[tuple[str, int]]:
    return [(f.rsplit("/", 1)[-1], n) for f, n in lines]


FLEX_RUN = ROOT / "tests" / "fixtures" / "flex" / "flex_attention_h100.zip"
FLEX_USER = ROOT / "tests" / "third_party" / "flex_user.py"
TEMPLATE = 3  # the FlexAttention template's launch


def test_a_flex_attention_template_marks_the_users_call_line():
    """The real capture: every stack of the template runs under the user's line 35, the first line of
    the two-line flex_attention(...) call; before, its lines were torch's flex_attention.py (1690, the
    HOP call, and the block mask it builds) and the user's line 30 (q, k, v), the line above."""
    (g,) = parse_path(str(FLEX_RUN)).graphs
    launch = build_index(g).launches[TEMPLATE]
    assert launch.kernel.startswith("triton_tem_fused_") and "flex_attention" in launch.kernel
    traced = g.kernel_stacks.of_launch(TEMPLATE, launch.kernel, g.output_code.launches[TEMPLATE].comments.provenance_handle)
    assert ("flex_attention.py", 1690) in _name(traced.innermost) and ("flex_user.py", 30) in _name(traced.innermost)
    assert _name(launch.source_lines) == [("flex_user.py", 30), ("flex_user.py", 35)]
    assert launch.basis.source_lines == "stack_traces"
    lines = FLEX_USER.read_text().splitlines()
    assert lines[34].strip() == "y = flex_attention(q, k, v," and lines[35].strip() == "score_mod=causal)"


def test_the_pane_opens_a_flex_attention_launch_on_the_users_call(tmp_path, monkeypatch):
    for store in fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch):
        run = store.import_zip(FLEX_RUN)
        (run.path / "source").mkdir()
        shutil.copy(FLEX_USER, run.path / "source" / FLEX_USER.name)  # the user's file, in the run
        (g,) = parse_path(str(run.path)).graphs
        kernel = g.output_code.launches[TEMPLATE].kernel
        at = run_app(ROOT / "app.py", run=run.id, kernel=kernel, launch=str(TEMPLATE))
        no_errors(at)
        # the stacks name the file where the GPU machine ran it; the FX comments add torch's files after it
        assert [s.value for s in at.selectbox if s.label == "Source file"] == ["/work/main/tests/third_party/flex_user.py"]
        assert any(c.value.endswith("flex_user.py` · 2 line(s) feed the selection") for c in at.caption)
        assert not any("not on this machine" in c.value for c in at.caption)
        (pane,) = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")
                   if "cv-code" in json.loads(c.proto.json).get("html", "")]
        marked = re.findall(r'<span class="cv-mark"[^>]*>(.*?)\n', pane)
        assert [re.search(r">(\d+)</span>", m).group(1) for m in marked] == ["30", "35"]
        assert "flex_attention" in marked[1]


def test_a_stack_that_ends_in_torch_points_at_the_line_that_calls_into_it():
    """Real stacks: wav2vec2's weight-norm kernels end in torch's parametrizations.py (called from the
    model's positional convolution, modeling_wav2vec2.py:366); the launch names the model's line."""
    (g,) = parse_path(str(THIRD / "wav2vec2.zip")).graphs
    ks = g.kernel_stacks.launches[7]
    assert _name(ks.innermost) == [("parametrizations.py", 327)]
    assert _name(ks.source_lines) == [("modeling_wav2vec2.py", 366)]
    assert _name(build_index(g).launches[7].source_lines) == [("modeling_wav2vec2.py", 366)]
    # Qwen2-MoE: F.* calls of transformers' MoE integration end in torch/nn/functional.py
    (g,) = parse_path(str(THIRD / "qwen2_moe_bf16.zip")).graphs
    lines = build_index(g).launches[22].source_lines
    assert _name(lines) == [("moe.py", 332)] and not any(TORCH_FILE.search(f) for f, _ in lines)


def test_a_flex_attention_stack_marks_the_users_call():
    """transformer_layer's real stack under torch's flex_attention frames: the user's call line, once;
    a stack that is torch's throughout keeps its innermost frame."""
    (g,) = parse_path(str(SAMPLE_RUNS / "transformer_layer.zip")).graphs
    (real,) = g.kernel_stacks.launches[SOFTMAX].stacks
    assert [(f.file, f.line) for f in real] == [(USER, 18)] and real[0].code == "a, _ = self.attn(x, x, x)"
    flex = KernelStack(SOFTMAX, "triton_tem_fused_0", (real + (FLEX, HOP), real + (FLEX,)))
    assert set(flex.innermost) == {(FLEX.file, FLEX.line), (HOP.file, HOP.line)}  # what the pane used to open
    assert flex.source_lines == ((USER, 18),)
    assert user_frame((FLEX, HOP)) == HOP and user_frame(()) is None


def test_a_file_that_starts_with_a_blank_line_is_marked_on_its_own_line():
    """Pygments drops leading blank lines unless told not to, which put every mark a line off its text."""
    html = highlight_code("\n\nimport torch\nout = flex_attention(q, k, v)\n", marked=(4,))
    (marked,) = re.findall(r'<span class="cv-mark"[^>]*>(.*?)\n', html)
    assert ">4<" in marked and "flex_attention" in marked


def _flex_shaped(run_dir) -> None:
    """Rewrite the softmax launch's stacks in the run's TORCH_TRACE log as a FlexAttention template's:
    the user's call, then torch's flex_attention.py; and one through a library not on this machine."""
    (log,) = (run_dir / "trace").glob("*.log")
    lines = log.read_text().split("\n")
    at = next(i for i, x in enumerate(lines) if "inductor_provenance_tracking_kernel_stack_traces" in x) + 1
    payload = json.loads(lines[at][1:])
    key = next(k for k in payload if k.endswith(f":{SOFTMAX + 1}"))
    user = payload[key][0]
    torch_frames = "".join(f'  File "{f.file}", line {f.line}, in {f.function}\n    {f.code}\n' for f in (FLEX, HOP))
    library = f'  File "{SITE}/transformers/integrations/flex_attention.py", line 318, in flex_attention_forward\n' \
              "    attn_output = flex_attention(\n"
    payload[key] = [user + torch_frames, user + library + torch_frames]
    lines[at] = "\t" + json.dumps(payload)
    log.write_text("\n".join(lines))


def test_the_pane_opens_on_the_users_file_with_the_call_marked_and_scrolled_to(tmp_path, monkeypatch):
    for store in fresh_store(tmp_path / "home", SAMPLE_RUNS, monkeypatch):
        run = store.import_zip(SAMPLE_RUNS / "transformer_layer.zip")
        _flex_shaped(run.path)
        (g,) = parse_path(str(run.path)).graphs
        launch = build_index(g).launches[SOFTMAX]
        assert _name(launch.source_lines) == [("flex_attention.py", 318), ("transformer_layer.py", 18)]
        assert launch.source_lines[0][0].startswith(SITE)  # sorted first, and not on this machine
        at = run_app(ROOT / "app.py", run=run.id, kernel=launch.kernel, launch=str(SOFTMAX))
        no_errors(at)
        (box,) = [s for s in at.selectbox if s.label == "Source file"]
        assert box.value == USER
        assert any(c.value.startswith("`") and c.value.endswith("transformer_layer.py` · 1 line(s) feed the selection")
                   for c in at.caption)
        (pane,) = [json.loads(c.proto.json)["html"] for c in at.get("bidi_component")
                   if "cv-code" in json.loads(c.proto.json).get("html", "")]
        (marked,) = re.findall(r'<span class="cv-mark"[^>]*>(.*?)\n', pane)
        assert ">18<" in marked and "attn" in marked  # the call line itself, the one the pane scrolls to


# -- in Chromium: the pane is scrolled to the first marked line ---------------------------------------------
@pytest.mark.slow
def test_the_pane_scrolls_to_the_first_marked_line_in_chromium(tmp_path):
    """gpt_small (bundled, H100): the embedding kernel comes from line 46 of an 85-line file, below the
    fold of the 320-pixel pane; the pane opens scrolled so the marked line is in view."""
    from test_browser import chromium_page, start_streamlit

    zip_path = SAMPLE_RUNS / "gpt_small.zip"
    graph = next(g for g in parse_path(str(zip_path)).graphs if g.kind == "forward")
    launch = build_index(graph).launches[0]
    assert [(f.rsplit("/", 1)[-1], n) for f, n in launch.source_lines] == [("gpt_small.py", 46)]
    env = dict(os.environ, COMPILE_VIZ_HOME=str(tmp_path / "home"), COMPILE_VIZ_SAMPLE_RUNS=str(SAMPLE_RUNS),
               COMPILE_VIZ_WARM="0")
    with open(tmp_path / "streamlit.log", "wb") as log:
        proc, url = start_streamlit(ROOT, env, log)
        try:
            assert url, (tmp_path / "streamlit.log").read_text()[-2000:]
            with chromium_page(1100) as page:
                page.goto(f"{url}/?run=bundled:gpt_small&graph={graph.id}&kernel={launch.kernel}&launch=0")
                page.wait_for_selector(".cv-code-host .cv-mark", state="attached", timeout=120_000)
                page.wait_for_timeout(500)
                box, mark, top = page.locator(".cv-code-host .cv-code").evaluate(
                    "b => { const m = b.querySelector('.cv-mark'); const r = b.getBoundingClientRect(), "
                    "s = m.getBoundingClientRect(); return [[r.top, r.bottom], [s.top, s.bottom], b.scrollTop]; }")
                assert top > 0 and box[0] <= mark[0] and mark[1] <= box[1], (box, mark, top)
                assert "46" in page.locator(".cv-code-host .cv-mark").first.inner_text()
                page.locator(".cv-code-host").screenshot(path=str(ROOT / "test-artifacts" / "source_pane_scrolled.png"))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
