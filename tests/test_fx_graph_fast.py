"""The FX parser's shortcuts read what the plain reading reads: lines split on "\\n" as splitlines()
splits them, NODE_FAST (and its ASCII twin) matching the lines NODE_LINE matches, REF's ASCII twin,
and a node line read from the memo of lines already read, in a graph that knows other names."""

from __future__ import annotations

import random
import re
import zipfile
from pathlib import Path

import pytest

from compile_viz.artifacts import fx_graph
from compile_viz.artifacts.text import REF
from tests.test_parse_lazy import plain

GPT_SMALL = Path(__file__).resolve().parents[1] / "sample_runs" / "gpt_small.zip"


def _fx_texts() -> list[str]:
    """The AOT and post-grad graphs of the bundled GPT training step."""
    if not GPT_SMALL.exists():
        pytest.skip("no sample_runs/gpt_small.zip")
    with zipfile.ZipFile(GPT_SMALL) as z:
        names = [n for n in z.namelist() if n.endswith(("/fx_graph_readable.py", "/fx_graph_transformed.py"))]
        return [z.read(n).decode() for n in names]


@pytest.mark.parametrize("text", [
    "a\nb", "a\nb\n", "a\n\n", "\n", "a\r\nb\n", "a\rb", "a\x0bb\x0cc", "a\x1cb\x1dc\x1ed\x1f", "a\x85b",
    "a\u2028b\u2029c\n", "é\nb\n\n", "  \n\t\n",
])
def test_lines_are_splitlines(text):
    assert fx_graph._lines(text) == text.splitlines()


def test_fast_node_patterns_match_what_node_line_matches():
    lines = [line for text in _fx_texts() for line in text.splitlines()]
    rnd = random.Random(7)
    # and the same lines with a character put in or taken out, to reach the patterns' corners
    for line in rnd.sample(lines, min(len(lines), 3000)):
        i = rnd.randrange(len(line) + 1)
        lines.append(line[:i] + rnd.choice("()[]\"' =;:,.xé_0\t") + line[i:])
        lines.append(line[:i] + line[i + 1:])
    checked = 0
    for line in lines:
        slow = fx_graph.NODE_LINE.match(line)
        for fast_pattern in (fx_graph.NODE_FAST, fx_graph.NODE_FAST_ASCII) if line.isascii() else (fx_graph.NODE_FAST,):
            fast = fast_pattern.match(line)
            assert (fast is None) == (slow is None), line
            if fast is not None:
                name, ann, bare, callee, args, parent, index = fast.groups()
                # the fast patterns keep the closing bracket in the group
                assert (args or index)[-1] == (")" if callee is not None else "]")
                args, index = (args[:-1], index) if callee is not None else (args, index[:-1])
                assert (name, ann, bare, callee, args, parent, index) == slow.groups(), line
                checked += 1
    assert checked > 1000


@pytest.mark.parametrize("line", [
    '    a = f(b);  b = None', '    a = f(b);  b = c = None', '    a = f(b);  None = None', '    a = f(b);  b = None = None',
    '    a = f(b);  b = None;  c = None', '    a = f(b);  = None', '    a = f(b);  b  = None', '    a = f(b);  b = Nonex',
    '    a = f(b) ;  b = None', '    a = f(b);  b = None ', '    a: "f32[4]" = f(b)', '    a: f32[4] = f(b)',
    '    a: f32[4][1] = f(b)', '    a: f32[4][1][2] = f(b)', '    a: Sym(s0) = f(b)', '    a: "" = f(b)', '    a:  = f(b)',
    '    a: f32[4]x = f(b)', '    a: "x" = b[0]', '    a = b[0];  b = None', '\ta = f(b)', '  \t a = f(x, (1, 2))',
    '    return = f(b)', '    returned = f(b)', '    class x = f(b)', '    a = f(b); b = None', '    a = f(b)(c)',
])
def test_ascii_node_pattern_corners(line):
    fast, slow = fx_graph.NODE_FAST_ASCII.match(line), fx_graph.NODE_LINE.match(line)
    assert (fast is None) == (slow is None)
    if fast is not None:
        assert fast.groups() == fx_graph.NODE_FAST.match(line).groups()


def test_ascii_ref_finds_what_ref_finds():
    rnd = random.Random(3)
    pieces = ["x", "view_1", "_a", "1e-05", "[8, 64]", "a.b", "'s'", '"t"', "k = v", "k=v", "a == b", "f(x)",
              "\x1c", "\x1f", "\t", " ", ", ", "=", "==", "torch.float32", "True", "9z", "z9"]
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 8)))
        assert fx_graph.REF_ASCII.findall(text) == REF.findall(text), text


def test_memo_of_lines_read_gives_the_fresh_reading(monkeypatch):
    texts = _fx_texts()
    # the same node lines in a graph that does not know primals_1 (its input renamed in the signature
    # alone): read from the memo, they must leave primals_1 out of their args and keep it a constant
    renamed = [re.sub(r"(def forward\(self.*?)\bprimals_1\b", r"\1primals_one", t, count=1) for t in texts]
    assert renamed != texts
    for text in texts + renamed:
        monkeypatch.setattr(fx_graph, "_SEEN_LINES", {})
        fresh = plain(fx_graph.parse_fx_graph(text, path="g.py"))
        monkeypatch.setattr(fx_graph, "_SEEN_LINES", {})
        for other in texts + renamed:
            fx_graph.parse_fx_graph(other, path="other.py")
        assert plain(fx_graph.parse_fx_graph(text, path="g.py")) == fresh
    # a memo emptied when full, at every line
    monkeypatch.setattr(fx_graph, "_SEEN_LINES_MAX", 1)
    for text in texts:
        assert plain(fx_graph.parse_fx_graph(text, path="g.py")) == plain(fx_graph.parse_fx_graph(text, path="g.py"))


def test_ascii_param_patterns_read_what_param_reads():
    rnd = random.Random(5)
    parts = ["a", "b_1", ': "f32[2, 3]"', ", ", ":", '"', "\\", " ", "x", ': ""', ",", "=", "*"]
    shaped = 0
    for _ in range(20000):
        text = "".join(rnd.choice(parts) for _ in range(rnd.randrange(1, 9)))
        shape = fx_graph.PARAMS_SHAPE.fullmatch(text) is not None
        assert (fx_graph.PARAMS_SHAPE_ASCII.fullmatch(text) is not None) == shape, text
        if shape:
            shaped += 1
            assert fx_graph.PARAM_AFTER_COMMA_ASCII.findall(", " + text) == fx_graph.PARAM.findall(text), text
    assert shaped > 500
