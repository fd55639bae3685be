"""Where a wrong result starts: the same inputs through backend="eager", "aot_eager",
"aot_eager_decomp_partition" and Inductor, in order, each judged against eager like the verdict.

The first backend whose result differs names the stage at fault: graph capture (Dynamo) when
backend="eager" already differs, AOTAutograd, the decompositions, or Inductor itself (then
`bisect.py` runs PyTorch's compiler bisector to name the pass or the lowering). Randomness is made
equal as in the verdict (same seed; Inductor calls eager's random ops when the model draws them),
and every compile here is kept out of the run's artifacts. Called by measure.py in the capture
child; torch is passed in. Nothing here is CPU-only.
"""

from __future__ import annotations

import contextlib

from compile_viz.measurements.ladder import STAGES, next_step
from compile_viz.verify import accuracy, correctness


def run_ladder(torch, *, model, args, settings: dict, make_step, emit=lambda *a, **k: None,
               bisect: bool = True) -> dict:
    """Return {"stages": one entry per backend, "first": the first stage that differs (or None),
    "reference", "bisect": what the compiler bisector named when the first stage is Inductor}."""
    device = settings["device"]
    grads = correctness.named_grad_tensors(torch, model, args) if settings["train"] else []
    state = correctness.ModelState(torch, model)
    compute = settings.get("autocast_dtype")
    out: dict = {"stages": [], "first": None, "first_backend": None}
    try:
        eager = correctness.run_once(torch, make_step(model, settings), args, grads, state, device)
        ref, out["reference"] = correctness.reference_run(torch, model, args, settings, make_step, eager)
        base = {"eager": eager, "ref": ref, "compute": compute, "grads": grads, "state": state}
        for backend, stage in STAGES:
            emit("measuring", f"ladder: backend={backend} ({stage})")
            entry = _stage(torch, model, args, settings, make_step, base, backend)
            out["stages"].append({"backend": backend, "stage": stage, **entry})
            if entry["ok"] is False:
                out["first"], out["first_backend"] = stage, backend
                break  # the later stages contain this one: they differ too, and cost a compile each
        if out["first_backend"] == "inductor" and bisect:
            from compile_viz.verify.bisect import bisect_inductor

            emit("measuring", "ladder: PyTorch's compiler bisector inside Inductor")
            check = lambda: _stage(torch, model, args, settings, make_step, base, "inductor")["ok"] is True  # noqa: E731
            out["bisect"] = bisect_inductor(torch, check)
    finally:
        state.restore(torch)
        torch._dynamo.reset()  # the ladder's compiles are not the user's: drop them
    out["note"] = ladder_note(out)
    return out


def _stage(torch, model, args, settings: dict, make_step, base: dict, backend: str) -> dict:
    """Return one backend's entry: ok (None: differs, but drew other random numbers), the rule that
    decided, the worst output, or the error it raised."""
    eager = base["eager"]
    torch._dynamo.reset()  # each backend compiles anew, from the same frame
    # aot_eager_decomp_partition takes Inductor's decomposition table, whose random ops draw numbers
    # in another pattern (native_dropout as rand + lt) unless fallback_random: the same rule as the
    # verdict's, at compile time (the first call) and after
    rule = (torch._inductor.config.patch(fallback_random=True) if eager["drew"] and backend != "inductor"
            else contextlib.nullcontext())
    try:
        with correctness.quiet_compile(torch), rule:
            fn = correctness.check_compile(torch, model, settings, backend=backend, fallback_random=eager["drew"])
            res = correctness.run_once(torch, make_step(fn, settings), args, base["grads"], base["state"],
                                       settings["device"])
    except Exception as e:  # a stage that cannot compile or run is where things go wrong too
        return {"ok": False, "rule": "compiles and runs", "worst": None,
                "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
    checks = correctness.compare_all(torch, eager, res, base["ref"], base["compute"])
    failed = [c for c in checks if not c["ok"]]
    errs = [c["max_abs"] for c in checks if "max_abs" in c]
    entry = {"ok": not failed, "rule": failed[0]["rule"] if failed else "allclose",
             "worst": failed[0]["what"] if failed else None, "failed": len(failed), "compared": len(checks),
             "max_abs": max(errs, default=0.0)}
    if failed:
        entry["note"] = accuracy.describe(failed[0])
    if failed and eager["drew"] and not correctness.same_state(torch, eager["rng_after"], res["rng_after"]):
        entry["ok"] = None  # consumed the generator differently: the mismatch may be randomness
        entry["note"] = f"{correctness.NOT_COMPARABLE} ({entry['note']})"
    return entry


def ladder_note(ladder: dict) -> str:
    """Return one line: the first stage that differs and what to do next, or that none did."""
    step = next_step(ladder.get("first"), (ladder.get("bisect") or {}).get("found"))
    return step or "every stage agrees with eager (eager, aot_eager, aot_eager_decomp_partition, inductor)"
