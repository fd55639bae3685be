"""Is the compiled model right? Eager vs compiled, judged like PyTorch's accuracy harness.

Randomness is made equal first: every run starts from the same seed, and when the model draws
random numbers the compiled side is a separate compile with `fallback_random=True` (Inductor
then calls eager's random ops), so dropout masks match; the timing run keeps the user's compile.
A float64 eager copy is the reference when it can be made. If randomness still differs (eager
differs from itself under one seed, or the compiled run consumed the generator differently), a
mismatch is "not comparable", never "wrong". Called by measure.py in the capture child.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import random
import sys

from compile_viz.measurements.ladder import HINT
from compile_viz.verify import accuracy

SEED = 0
NOT_COMPARABLE = "not comparable: the model draws random numbers"


def named_grad_tensors(torch, model, args) -> list[tuple[str, object]]:
    """Return (label, tensor) for every parameter and input whose gradient a training step makes."""
    named = list(model.named_parameters()) if isinstance(model, torch.nn.Module) else []
    out = [(f"grad of {n}", p) for n, p in named if p.requires_grad]
    return out + [(f"grad of input {i}", a) for i, a in enumerate(args)
                  if isinstance(a, torch.Tensor) and a.requires_grad]


def flatten(torch, out, path: str = "output", depth: int = 0) -> list[tuple[str, object]]:
    """Return (path, tensor) for the tensors in a model's output: `logits`, `output[0]`, `hidden_states[2]`."""
    if isinstance(out, torch.Tensor):
        return [(path, out)]
    if depth > 8:
        return []
    top = depth == 0
    if isinstance(out, dict):
        items = [(str(k) if top else f"{path}.{k}", v) for k, v in out.items()]
    elif isinstance(out, (list, tuple)):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(out)]
    elif hasattr(out, "__dataclass_fields__"):
        items = [(f if top else f"{path}.{f}", getattr(out, f, None)) for f in out.__dataclass_fields__]
    else:
        return []
    return [pt for p, v in items for pt in flatten(torch, v, p, depth + 1)]


def seed_all(torch) -> None:
    torch.manual_seed(SEED)  # every device's default generator
    random.seed(SEED)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(SEED)


def rng_state(torch, device: str) -> list:
    states = [torch.get_rng_state()]
    if device.startswith("cuda"):
        states.append(torch.cuda.get_rng_state(device))
    return states


def same_state(torch, a: list, b: list) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


class ModelState:
    """Parameters and buffers as they were, put back before every run (BatchNorm statistics move)."""

    def __init__(self, torch, model) -> None:
        tensors = list(model.parameters()) + list(model.buffers()) if isinstance(model, torch.nn.Module) else []
        self.saved = [(t, t.detach().clone()) for t in tensors]

    def restore(self, torch) -> None:
        with torch.no_grad():
            for t, value in self.saved:
                t.copy_(value)


def run_once(torch, step, args, grads, state: ModelState, device: str) -> dict:
    """Return one seeded call's outputs and gradients (copied), and the generator state it left."""
    state.restore(torch)
    for _, t in grads:
        t.grad = None
    seed_all(torch)
    before = rng_state(torch, device)
    outs = [(p, t.detach().clone()) for p, t in flatten(torch, step(args))]
    got = [(n, None if t.grad is None else t.grad.detach().clone()) for n, t in grads]
    after = rng_state(torch, device)
    for _, t in grads:
        t.grad = None
    return {"outputs": outs, "grads": got, "drew": not same_state(torch, before, after), "rng_after": after}


@contextlib.contextmanager
def quiet_compile(torch):
    """Keep a compile made only for checking out of the run's artifacts: no debug folder, no
    TORCH_TRACE records, no log records (graph breaks and recompiles were already listed)."""
    from torch._logging import _internal

    env = os.environ.get("TORCH_COMPILE_DEBUG")
    os.environ["TORCH_COMPILE_DEBUG"] = "0"  # read at compile time by Inductor's AOT log file
    trace_handlers = list(_internal.trace_log.handlers)
    for h in trace_handlers:  # the structured trace bypasses logging.disable
        _internal.trace_log.removeHandler(h)
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(previous)
        for h in trace_handlers:
            _internal.trace_log.addHandler(h)
        if env is None:
            os.environ.pop("TORCH_COMPILE_DEBUG", None)
        else:
            os.environ["TORCH_COMPILE_DEBUG"] = env


def eager_rng_compile(torch, model, settings: dict):
    """Return the model compiled as the user compiled it, but calling eager's random ops."""
    return check_compile(torch, model, settings, fallback_random=True)


def check_compile(torch, model, settings: dict, *, backend: str = "inductor", fallback_random: bool = False):
    """Return the model compiled for a check: as the user compiled it (mode, dynamic, fullgraph), with
    `backend`; Inductor writes no trace and calls eager's random ops when `fallback_random`."""
    dynamic, fullgraph = settings.get("dynamic"), bool(settings.get("fullgraph"))
    if backend != "inductor":  # string backends take no options
        return torch.compile(model, backend=backend, dynamic=dynamic, fullgraph=fullgraph)
    from torch._inductor import list_mode_options

    mode = settings.get("mode") or "default"
    options = dict(list_mode_options(mode, dynamic) if mode != "default" else {})
    # distinct options also make Dynamo compile anew instead of reusing the user's cache entry
    options["trace.enabled"] = False
    if fallback_random:
        options["fallback_random"] = True
    return torch.compile(model, dynamic=dynamic, fullgraph=fullgraph, options=options)


def fp64_reference(torch, model, args, make_step, settings: dict, dtype_name: str = "float64"):
    """Return (a float64 (or `dtype_name`) copy's step, its args, the copy) or (None, why not)."""
    if not isinstance(model, torch.nn.Module):
        return None, f"the model is not an nn.Module (no {dtype_name} copy)"
    dtype = getattr(torch, dtype_name)
    try:
        copied = copy.deepcopy(model).to(dtype)
    except Exception as e:
        return None, f"no {dtype_name} copy ({type(e).__name__}: {str(e)[:120]})"
    args_copy = tuple(a.detach().to(dtype).requires_grad_(a.requires_grad)
                      if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
    return (make_step(copied, {**settings, "autocast_dtype": None}), args_copy, copied), None


# --------------------------------------------------------------------------- the check


def check_correctness(torch, *, model, compiled, args, settings: dict, make_step, emit=lambda *a, **k: None) -> dict:
    """Return the verdict (ok / wrong / not comparable), each output's and gradient's check, and the method."""
    device = settings["device"]
    grads = named_grad_tensors(torch, model, args) if settings["train"] else []
    state = ModelState(torch, model)
    compute = settings.get("autocast_dtype")
    try:
        eager_step = make_step(model, settings)
        eager = run_once(torch, eager_step, args, grads, state, device)
        again = run_once(torch, eager_step, args, grads, state, device)
        method = {"seed": SEED}
        if not _agree(torch, eager, again, compute):
            why = (f"{NOT_COMPARABLE} that the seed does not control "
                   f"(eager gives different results on two calls after torch.manual_seed({SEED}))")
            return _result(torch, [], eager, {**method, "rng": "eager differs from itself"}, why)
        step, separate, matching, method["rng"] = _checked_step(torch, model, compiled, eager["drew"], settings,
                                                                make_step, emit)
        try:
            with quiet_compile(torch) if separate else contextlib.nullcontext():
                res = run_once(torch, step, args, grads, state, device)
        except Exception as e:
            if not separate:
                raise
            matching, method["rng"] = False, _failed_check_compile(e)
            res = run_once(torch, make_step(compiled, settings), args, grads, state, device)
        emit("measuring", "correctness: float64 reference")
        ref, method["reference"] = reference_run(torch, model, args, settings, make_step, eager)
    finally:
        state.restore(torch)
    method["rule"] = _rule_text(ref and ref["dtype"], compute or _first_dtype(eager))
    checks = compare_all(torch, eager, res, ref, compute)
    comparable = not eager["drew"] or (matching and same_state(torch, eager["rng_after"], res["rng_after"]))
    why = None if comparable else f"{NOT_COMPARABLE} (compiled code consumed the generator differently from eager)"
    return _result(torch, checks, eager, method, why)


def _checked_step(torch, model, compiled, drew: bool, settings: dict, make_step, emit):
    """Return (the step to check, whether it is a separate compile, whether it draws eager's random
    numbers, how its randomness was made equal)."""
    import torch._inductor.config as inductor_config

    if not drew:
        return make_step(compiled, settings), False, True, "the model draws no random numbers: your compile is checked"
    if inductor_config.fallback_random:
        return make_step(compiled, settings), False, True, "fallback_random=True as you compiled it"
    emit("measuring", "correctness: compiling again with eager's random numbers (fallback_random=True)")
    try:
        checked = eager_rng_compile(torch, model, settings)
    except Exception as e:
        return make_step(compiled, settings), False, False, _failed_check_compile(e)
    return (make_step(checked, settings), True, True,
            f"eager's random numbers: a separate compile with fallback_random=True, seed {SEED}; timing used yours")


def _failed_check_compile(e: Exception) -> str:
    return f"the check compile failed ({type(e).__name__}: {str(e)[:160]}): your compile, its own random numbers"


def reference_run(torch, model, args, settings: dict, make_step, eager: dict):
    """Return (the reference run or None, a line on the reference used): a float64 copy; when none can
    be made or run and the model computes in fp16/bf16, a float32 copy, which says why."""
    run, why = _copy_run(torch, model, args, settings, make_step, eager, "float64")
    if run is not None:
        return run, "float64 eager copy (same seed)"
    if (settings.get("autocast_dtype") or _first_dtype(eager)) in accuracy.LOW_PRECISION:
        run32, why32 = _copy_run(torch, model, args, settings, make_step, eager, "float32")
        if run32 is not None:
            return run32, f"float32 eager copy (same seed): {why}"
        why = f"{why}; {why32}"
    return None, f"eager in the model's own precision: {why}"


def _copy_run(torch, model, args, settings: dict, make_step, eager: dict, dtype_name: str):
    """Return (a copy's run in `dtype_name`, None) or (None, why not)."""
    made, why = fp64_reference(torch, model, args, make_step, settings, dtype_name)
    if made is None:
        return None, why
    step, args_copy, copied = made
    grads = named_grad_tensors(torch, copied, args_copy) if settings["train"] else []
    try:
        run = run_once(torch, step, args_copy, grads, ModelState(torch, None), settings["device"])
    except Exception as e:
        return None, f"the {dtype_name} copy failed ({type(e).__name__}: {str(e)[:120]})"
    finally:
        del copied
    run["dtype"] = dtype_name
    if eager["drew"]:  # a kernel in another dtype may map the generator's numbers to elements differently
        bad = [p for (p, e), (_, r) in zip(eager["outputs"], run["outputs"], strict=False)
               if e.is_floating_point() and e.numel() > 1 and accuracy.cosine(torch, e, r) < accuracy.COSINE_MIN]
        if bad or not same_state(torch, eager["rng_after"], run["rng_after"]):
            return None, f"the {dtype_name} copy drew other random numbers ({bad[:1]})"
    return run, None


def _agree(torch, a: dict, b: dict, compute: str | None) -> bool:
    pairs = list(zip(a["outputs"], b["outputs"], strict=False)) + list(zip(a["grads"], b["grads"], strict=False))
    if len(a["outputs"]) != len(b["outputs"]):
        return False
    for (_, x), (_, y) in pairs:
        if x is None or y is None:
            if (x is None) != (y is None):
                return False
            continue
        tol = accuracy.tolerance(compute or accuracy.dtype_name(x))
        if x.shape != y.shape or not accuracy.close(torch, x, y, tol):
            return False
    return True


def compare_all(torch, eager: dict, res: dict, ref: dict | None, compute: str | None) -> list[dict]:
    """Return one check per output and gradient: `res` against `eager`, judged with `ref` (float64 or
    float32 run, or None)."""
    checks, ref_dtype = [], ref["dtype"] if ref else None
    ref_outs = ref["outputs"] if ref else [(p, None) for p, _ in eager["outputs"]]
    for (path, e), (_, c), (_, r) in zip(eager["outputs"], res["outputs"], ref_outs, strict=False):
        checks.append(accuracy.compare(torch, path, e, c, r, compute, ref_dtype=ref_dtype))
    if len(eager["outputs"]) != len(res["outputs"]):
        checks.append({"what": "outputs", "ok": False, "rule": "same structure",
                       "note": f"{len(eager['outputs'])} eager tensors, {len(res['outputs'])} compiled"})
    ref_grads = ref["grads"] if ref else [(n, None) for n, _ in eager["grads"]]
    for (name, e), (_, c), (_, r) in zip(eager["grads"], res["grads"], ref_grads, strict=False):
        if e is None or c is None:
            if (e is None) != (c is None):
                checks.append({"what": name, "ok": False, "rule": "same structure",
                               "note": f"{'eager' if e is None else 'compiled'} made no gradient"})
            continue
        checks.append(accuracy.compare(torch, name, e, c, r, compute, ref_dtype=ref_dtype))
    return checks


def _first_dtype(run: dict) -> str:
    return next((accuracy.dtype_name(t) for _, t in run["outputs"] if t.is_floating_point()), "float32")


def _rule_text(ref_dtype: str | None, compute: str) -> str:
    tol = accuracy.tolerance(compute)
    then = (f"then RMSE vs {ref_dtype} at most x2 (x3 low precision or small) eager's own" if ref_dtype else
            "then cosine similarity >= 0.99" if compute in accuracy.LOW_PRECISION else "only")
    return f"torch._dynamo.utils.same rules: allclose(tol={tol:g}, atol scaled by each tensor's magnitude) {then}"


def _result(torch, checks: list[dict], eager: dict, method: dict, not_comparable: str | None) -> dict:
    failed = [c for c in checks if not c["ok"]]
    outputs_ok = all(c["ok"] for c in checks if not c["what"].startswith("grad of"))
    status = "not comparable" if not_comparable and (failed or not checks) else ("wrong" if failed else "ok")
    first = None
    if failed:
        first = {**failed[0], "hint": accuracy.hint(failed[0], outputs_ok=outputs_ok)}
    note = not_comparable if status == "not comparable" else (
        f"{accuracy.describe(first)}.{HINT}{first['hint']}" if first else None)
    errs = [c for c in checks if "max_abs" in c]
    worst = max(errs, key=lambda c: c["max_abs"], default=None)
    return {"ok": {"ok": True, "wrong": False}.get(status), "status": status, "note": note,
            "method": method, "compared": len(checks), "failed": len(failed), "first_failure": first,
            "checks": (failed[:16] + [c for c in checks if c["ok"]])[:64],
            "max_abs": max((c["max_abs"] for c in errs), default=0.0),
            "max_rel": max((c.get("max_rel", 0.0) for c in errs), default=0.0),
            "eager_max_abs": max((c["eager_max_abs"] for c in errs if "eager_max_abs" in c), default=None),
            "worst": worst and worst["what"], "grads_compared": bool(eager["grads"]),
            "model_draws_random": eager["drew"]}
