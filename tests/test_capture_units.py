"""Pieces of the capture that need no torch: options, progress lines, reasons, model references."""

from __future__ import annotations

import pytest

from compile_viz.capture import CaptureOptions, parse_option, resolve_model_ref
from compile_viz.capture.protocol import format_progress, parse_progress
from compile_viz.capture.userfile import ModelRefError
from compile_viz.record.process import child_env
from compile_viz.record.reasons import exception_reason, parse_graph_break, parse_recompile

# Verbatim records from torch 2.13's graph_breaks / recompiles log artifacts.
GRAPH_BREAK = """Graph break in user code at /tmp/m2.py:10
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.

  Developer debug context: call_method TensorVariable() item () {}

User code traceback:
  File "/tmp/m2.py", line 14, in <module>
    g(torch.randn(64, 64))
  File "/tmp/m2.py", line 10, in f
    if y.mean().item() > 0:
"""
RECOMPILE = """Recompiling function f in /tmp/m2.py:8
    triggered by the following guard failure(s):
    - 0/0: tensor 'x' size mismatch at index 0. expected 64, actual 32"""


def test_graph_break_record():
    gb = parse_graph_break(GRAPH_BREAK)
    assert (gb["file"], gb["line"]) == ("/tmp/m2.py", 10)
    assert gb["summary"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert "User code traceback" not in gb["reason"] and not gb["duplicate"]
    dup = parse_graph_break("Graph break (user stack suppressed due to duplicate graph break) in user code at /a.py:3\n"
                            "Graph Break Reason: print")
    assert dup["duplicate"] and dup["line"] == 3 and dup["summary"] == "print"


def test_recompile_record():
    rc = parse_recompile(RECOMPILE)
    assert (rc["function"], rc["file"], rc["line"]) == ("f", "/tmp/m2.py", 8)
    assert rc["reason"] == "0/0: tensor 'x' size mismatch at index 0. expected 64, actual 32"


def test_exception_reasons_are_one_line():
    class OutOfMemoryError(RuntimeError):
        pass

    class CompilationError(Exception):
        pass

    class BackendCompilerFailed(Exception):
        pass

    assert exception_reason(OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB\nmore"), "compiling") == \
        "CUDA out of memory while compiling: CUDA out of memory. Tried to allocate 2 GiB"
    try:
        try:
            raise CompilationError("at 3:4: bad tl.load")
        except CompilationError as inner:
            raise BackendCompilerFailed("backend='inductor' raised") from inner
    except BackendCompilerFailed as e:
        assert exception_reason(e, "compiling").startswith("Triton compile error while compiling: CompilationError")
    reason = exception_reason(ValueError("x" * 1000 + "\nsecond line"), "running")
    assert reason.startswith("model raised ValueError while running: xxx") and len(reason) <= 300 and "\n" not in reason


def test_progress_roundtrip():
    p = parse_progress(format_progress("compiling", 1.23456, "first call", step=1))
    assert (p.phase, p.elapsed_s, p.message, p.data) == ("compiling", 1.235, "first call", {"step": 1})
    assert parse_progress("graph_break_print: inside forward") is None
    assert parse_progress("@@compile_viz {not json") is None


def test_options():
    assert CaptureOptions().device == "auto" and CaptureOptions().timeout_s == 600
    opts = CaptureOptions.make(device="cpu", inductor_options={"b": 1, "a": "x"})
    assert opts.inductor_options == (("a", "x"), ("b", 1)) and hash(opts)
    assert CaptureOptions.from_json(opts.to_json()) == opts
    for bad in ({"mode": "fast"}, {"dtype": "int8"}, {"device": "tpu"}, {"dynamic": "yes"}, {"timeout_s": -1}):
        with pytest.raises(ValueError):
            CaptureOptions(**bad)
    with pytest.raises(ValueError, match="dotted Python name"):
        CaptureOptions.make(inductor_options={"not valid": 1})


@pytest.mark.parametrize("text, expected", [
    ("max_autotune=True", ("max_autotune", True)),
    ("triton.cudagraphs=false", ("triton.cudagraphs", False)),
    ("compile_threads=4", ("compile_threads", 4)),
    ("cpp.simdlen=None", ("cpp.simdlen", None)),
    ("max_autotune_gemm_backends=ATEN,TRITON", ("max_autotune_gemm_backends", "ATEN,TRITON")),
])
def test_parse_option(text, expected):
    assert parse_option(text) == expected


def test_model_refs(tmp_path, monkeypatch):
    assert resolve_model_ref("mlp_gelu").kind == "sample"
    f = tmp_path / "mine.py"
    f.write_text("")
    ref = resolve_model_ref(f"{f}:MY_SPEC")
    assert (ref.kind, ref.name, ref.path, ref.label) == ("user", "MY_SPEC", str(f), "mine.MY_SPEC")
    with pytest.raises(ModelRefError, match="not found"):
        resolve_model_ref(str(tmp_path / "missing.py"))
    monkeypatch.setenv("COMPILE_VIZ_ALLOW_USER_CODE", "0")
    with pytest.raises(ModelRefError, match="disabled"):
        resolve_model_ref(str(f))


def test_child_env_keeps_everything_in_the_run(tmp_path):
    env = child_env(tmp_path)
    assert env["TORCH_COMPILE_DEBUG"] == "1" and env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] == "1"
    for key in ("TORCH_COMPILE_DEBUG_DIR", "TORCH_TRACE", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        assert env[key].startswith(str(tmp_path))
