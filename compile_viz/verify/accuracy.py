"""One tensor, compiled vs reference, judged the way `torch._dynamo.utils.same` judges it.

PyTorch's accuracy harness (the dynamo benchmarks' `--accuracy`) first tries
`allclose(ref, res, atol=tol, rtol=tol)` (here atol is scaled by the tensor's magnitude: see
`close`); when that fails and a float64 reference exists, it
passes the result if its RMSE against float64 is at most `multiplier` times the eager
reference's own RMSE against float64, plus tol/10 (scaled likewise; multiplier 3 for fp16/bf16 and for tensors
under 1000 elements or tol >= 2e-2, else 2). Without a float64 reference it compares by cosine
similarity (>= 0.99) for low precision. Here the same rules keep the numbers they decided on, so a
failure can say where and by how much. torch is passed in; nothing here imports it.
"""

from __future__ import annotations

import math

# tol of same(): used as both atol and rtol, by the dtype the math runs in
TOLERANCES = {"float64": 1e-7, "float32": 1e-3, "float16": 1e-2, "bfloat16": 5e-2}
LOW_PRECISION = ("float16", "bfloat16")
COSINE_MIN = 0.99
MINIFIER = "TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4"


def dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def tolerance(compute_dtype: str) -> float:
    return TOLERANCES.get(compute_dtype, TOLERANCES["float32"])


def _multiplier(fp64, compute_dtype: str, tol: float) -> float:
    if compute_dtype in LOW_PRECISION:
        return 3.0
    return 3.0 if fp64.numel() < 1000 or tol >= 2e-2 else 2.0


def close(torch, ref, res, tol: float) -> bool:
    """Return allclose(ref, res) with rtol=tol and atol=tol times the largest |ref|.

    same() uses tol as an absolute atol, which passes anything in a tensor whose values are all far
    below tol (a gradient of 1e-4 half missing passes at 1e-3); scaling atol by the tensor's own
    magnitude judges small gradients too, and equals same() for tensors of magnitude 1."""
    ref, res = ref.double(), res.double()
    scale = _scale(ref)
    return bool(torch.allclose(ref, res, rtol=tol, atol=tol * scale if scale > 0 else tol, equal_nan=True))


def _scale(t) -> float:
    """Return the largest finite |value| of a tensor (0.0 when empty)."""
    return float(t.abs().nan_to_num(0.0, posinf=0.0, neginf=0.0).max()) if t.numel() else 0.0


def _rmse(torch, a, b) -> float:
    return float(torch.sqrt(torch.mean(torch.square(a - b)))) if a.numel() else 0.0


def cosine(torch, a, b) -> float:
    a, b = a.flatten().double(), b.flatten().double()
    return float(torch.nn.functional.cosine_similarity(a, b, dim=0, eps=1e-6)) if a.numel() else 1.0


def compare(torch, what: str, eager, compiled, fp64, compute_dtype: str | None, *, ref_dtype: str | None = None) -> dict:
    """Return one check: ok, the rule that decided it, errors, and the worst element when it failed.
    `fp64` is the reference run's tensor: float64, or float32 when `ref_dtype` says so."""
    row = {"what": what, "shape": list(eager.shape), "dtype": dtype_name(eager)}
    if fp64 is not None and ref_dtype not in (None, "float64"):
        row["reference"] = ref_dtype
    if eager.shape != compiled.shape or eager.dtype != compiled.dtype:
        return {**row, "ok": False, "rule": "same shape and dtype",
                "note": f"compiled {dtype_name(compiled)}{list(compiled.shape)}, eager {row['dtype']}{row['shape']}"}
    if not (eager.is_floating_point() or eager.is_complex()):
        ok = bool(torch.equal(eager, compiled))
        return {**row, "ok": ok, "rule": "exact (not floating point)", "max_abs": float((eager != compiled).sum()),
                "max_rel": 0.0, **({} if ok else _worst(torch, eager, compiled, None))}
    compute = compute_dtype or row["dtype"]
    tol = tolerance(compute)
    e, c = eager.detach().double(), compiled.detach().double()
    ref = fp64.detach().double() if fp64 is not None else e
    row.update(tol=tol, **_errors(torch, ref, c))
    if fp64 is not None:
        row["eager_max_abs"] = _errors(torch, ref, e)["max_abs"]
    if close(torch, e, c, tol):
        return {**row, "ok": True, "rule": "allclose"}
    if fp64 is not None:
        ref_err, res_err = _rmse(torch, ref, e), _rmse(torch, ref, c)
        mult = _multiplier(ref, compute, tol)
        slack = tol / 10.0 * (_scale(ref) or 1.0)  # same()'s tol/10, scaled like atol in close()
        ok = res_err <= mult * ref_err + slack and not math.isnan(res_err)
        row.update(rule=f"rmse vs {ref_dtype or 'float64'}", rmse=res_err, eager_rmse=ref_err, multiplier=mult)
    elif compute in LOW_PRECISION:
        score = cosine(torch, e.nan_to_num(), c.nan_to_num())
        ok = score >= COSINE_MIN and bool(c.isnan().eq(e.isnan()).all())
        row.update(rule="cosine similarity", cosine=round(score, 6))
    else:
        ok = False
        row["rule"] = "allclose"
    return {**row, "ok": bool(ok), **({} if ok else _worst(torch, e, c, ref if fp64 is not None else None))}


def _errors(torch, ref, res) -> dict:
    """Return max abs error and max abs error over the largest |reference| (stable near zero)."""
    if not ref.numel():
        return {"max_abs": 0.0, "max_rel": 0.0}
    diff = (ref - res).abs()
    diff = torch.where(ref.isnan() & res.isnan(), torch.zeros_like(diff), diff.nan_to_num(nan=math.inf))
    max_abs = float(diff.max())
    scale = float(ref.abs().nan_to_num(0.0).max())
    return {"max_abs": max_abs, "max_rel": max_abs / scale if scale > 0 else max_abs}


def _worst(torch, eager, compiled, fp64) -> dict:
    """Return the index and values of the element farthest from the reference."""
    ref = fp64 if fp64 is not None else eager
    if not ref.numel():
        return {}
    diff = (ref - compiled).abs().nan_to_num(nan=math.inf)
    diff = torch.where(ref.isnan() & compiled.isnan(), torch.zeros_like(diff), diff)
    flat = int(diff.flatten().argmax())
    index = list(_unravel(flat, list(ref.shape)))
    out = {"index": index, "eager": _value(eager.flatten()[flat]), "compiled": _value(compiled.flatten()[flat]),
           "nonfinite": bool((~compiled.isfinite() & eager.isfinite()).any())}
    if fp64 is not None:
        out["fp64"] = _value(fp64.flatten()[flat])
    return out


def _unravel(flat: int, shape: list[int]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat % size if size else 0)
        flat = flat // size if size else 0
    return tuple(reversed(index))


def _value(t) -> float | str:
    v = float(t)
    return v if math.isfinite(v) else str(v)


def hint(check: dict, *, outputs_ok: bool) -> str:
    """Return one line on what to do about a failed check."""
    what = check.get("what", "")
    if check.get("rule") == "same shape and dtype":
        return "compiled code returns a different shape or dtype: look for a graph break or a view/stride change here."
    if check.get("nonfinite"):
        return "compiled code makes NaN/inf where eager does not: an overflow in a fused kernel; try --dtype fp32."
    if what.startswith("grad of") and outputs_ok:
        return (f"the outputs agree but this gradient does not: the backward graph computes it differently; "
                f"minify with {MINIFIER}.")
    return f"the forward graph computes this differently; PyTorch's accuracy minifier narrows it: {MINIFIER}."


def describe(check: dict) -> str:
    """Return "what: worst at [i, j]: compiled x, reference y (…)" for a failed check, on one line."""
    if "index" not in check:
        return f"{check['what']}: {check.get('note') or check.get('rule', 'differs')}"
    ref_name, ref = ((f"{check.get('reference', 'float64')} reference", check["fp64"]) if "fp64" in check
                     else ("eager", check["eager"]))
    text = f"{check['what']}: worst at {check['index']}: compiled {_fmt(check['compiled'])}, {ref_name} {_fmt(ref)}"
    if "fp64" in check:
        text += f", eager {_fmt(check['eager'])}"
    if str(check.get("rule")).startswith("rmse vs "):
        text += f" (RMSE {check['rmse']:.3g} vs eager's own {check['eager_rmse']:.3g}, allowed x{check['multiplier']:g})"
    elif check.get("rule") == "cosine similarity":
        text += f" (cosine similarity {check['cosine']:.4f} < {COSINE_MIN})"
    else:
        text += f" (tolerance {check.get('tol', 0):g})"
    return text


def _fmt(v) -> str:
    return v if isinstance(v, str) else f"{v:.6g}"
