"""Inside Inductor: PyTorch's compiler bisector (torch._inductor.compiler_bisector.CompilerBisector)
names the pass, the config change or the lowering after which the result differs.

It disables Inductor's subsystems one at a time (pre-grad, joint-graph and post-grad passes, a few
config changes, lowerings), then bisects the one whose removal fixes the result down to its n-th
application: a pass by name, a lowering by its FX node. `check()` says whether the result is right
(the ladder's Inductor stage); the backends before Inductor already agreed in the ladder, so the
bisector's own ladder is answered without compiling. Where the bisector is missing or fails, the
result says so and gives the command to run by hand. torch is passed in.
"""

from __future__ import annotations

import contextlib
import io
import time

MAX_TRIES = 40  # compiles; a bisection over thousands of lowerings takes about 12 after the subsystems
MAX_SECONDS = 900.0
BY_HAND = ("python -m torch._inductor.compiler_bisector run python repro.py   "
           "(repro.py compiles with TORCH_COMPILE_BACKEND's backend and exits 1 when the result is wrong; "
           "see python -m torch._inductor.compiler_bisector)")
# passes the bisector names -> the torch._inductor.config option that turns them off
PASS_OPTIONS = {
    "reorder_for_locality": "reorder_for_locality=False",
    "pass_pattern_": "pattern_matcher=False",
    "constant_fold_uniform_value": "joint_graph_constant_folding=False",
    "efficient_conv_bn_eval_pass": "efficient_conv_bn_eval_fx_passes=False",
    "group_batch_fusion_passes": "group_fusion=False, batch_fusion=False",
}


class _OutOfTries(Exception):
    pass


def bisect_inductor(torch, check) -> dict:
    """Return what the bisector found: {"ran", "subsystem", "bisect_number", "debug_info", "found"
    (one line), "kind" (pass, lowering, config, subsystem), "node" or "pass", "disable" (an option
    that avoids it, when one is known), "log", "command"} or {"ran": False, "error", "command"}."""
    try:
        from torch._inductor.compiler_bisector import CompilerBisector
    except ImportError:
        return {"ran": False, "error": f"torch {torch.__version__} has no torch._inductor.compiler_bisector",
                "command": BY_HAND}
    tries, start = [0], time.monotonic()

    def fn() -> bool:
        if CompilerBisector.get_backend() != "inductor":
            return True  # eager, aot_eager and the decompositions agreed in the ladder
        tries[0] += 1
        if tries[0] > MAX_TRIES or time.monotonic() - start > MAX_SECONDS:
            raise _OutOfTries
        try:
            return bool(check())
        except Exception:  # a compile that breaks with a subsystem off: not a fix
            return False

    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):  # it prints its progress; the child's stdout is the protocol
            result = CompilerBisector.do_bisect(fn)
    except _OutOfTries:
        return _failed(f"stopped after {tries[0] - 1} compiles ({time.monotonic() - start:.0f} s)", log)
    except Exception as e:
        return _failed(f"{type(e).__name__}: {str(e)[:200]}", log)
    if result is None:
        return _failed("every backend agreed under the bisector (a result that changes from run to run?)", log)
    return {"ran": True, "tries": tries[0], **describe(result.backend, result.subsystem, result.bisect_number,
                                                       result.debug_info), "log": _tail(log), "command": BY_HAND}


def _failed(why: str, log: io.StringIO) -> dict:
    return {"ran": False, "error": f"the compiler bisector failed: {why}", "log": _tail(log), "command": BY_HAND}


def _tail(log: io.StringIO, lines: int = 12) -> str:
    return "\n".join(log.getvalue().strip().splitlines()[-lines:])


def describe(backend: str, subsystem: str | None, number: int | None, info: str | None) -> dict:
    """Return the bisector's answer as fields and one line a person reads."""
    out = {"backend": backend, "subsystem": subsystem, "bisect_number": number, "debug_info": info}
    if subsystem is None:
        return {**out, "kind": "subsystem", "found": f"{backend}, but no one subsystem of it"}
    if subsystem == "lowerings":
        return {**out, "kind": "lowering", "node": info,
                "found": f"Inductor's lowering of FX node {info or '?'} (lowering #{number})",
                "disable": f"TORCH_BISECT_BACKEND=inductor TORCH_BISECT_SUBSYSTEM=lowerings TORCH_BISECT_MAX={max((number or 0) - 1, -1)} "
                           "(eager's kernels from that lowering on)"}
    if subsystem.endswith("_passes"):
        option = next((o for p, o in PASS_OPTIONS.items() if (info or "").startswith(p)), None)
        return {**out, "kind": "pass", "pass": info, "disable": option,
                "found": f"the {subsystem.replace('_', ' ')[:-2]} {info or '?'} (#{number})"}
    if subsystem.startswith(f"{backend}_"):  # a ConfigChange: inductor_fallback_random and the like
        field = subsystem.removeprefix(f"{backend}_")
        return {**out, "kind": "config", "found": f"Inductor's {field} setting",
                "disable": f"{field}={_changed_value(field)}"}
    return {**out, "kind": "subsystem", "found": f"{backend} subsystem {subsystem}" + (f" ({info})" if info else "")}


def _changed_value(field: str) -> str:
    """Return the value the bisector's config change sets (the one that fixed the result)."""
    try:
        from torch._inductor.compiler_bisector import BACKENDS, ConfigChange

        return next(repr(s.config_value) for s in BACKENDS["inductor"]
                    if isinstance(s, ConfigChange) and s.config_field == field)
    except (ImportError, StopIteration, KeyError):
        return "?"
