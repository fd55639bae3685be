"""The capture child: `python -m compile_viz.capture.child REQUEST.json`, or `... --warm`.

Runs in its own process group with TORCH_COMPILE_DEBUG=1 set by the parent. Prints progress
lines (protocol.PROGRESS_PREFIX + JSON) on stdout, writes logs/result.json at the end, exits 0
only when the compile and every call succeeded. This is the only place torch is imported.
With --warm it imports torch first, writes logs/warm.json, then reads the request's path from
stdin (see warm.py); stdin closed without a request: it removes its run folder and exits 0.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import json
import logging
import os
import platform
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from compile_viz.capture.default_loss import make_default_loss
from compile_viz.capture.options import CaptureOptions
from compile_viz.capture.protocol import format_progress
from compile_viz.capture.userfile import ModelRef, ModelRefError, load_spec
from compile_viz.record import fusion_log, reasons

T0 = time.monotonic()
_state = {"phase": "starting"}  # the last phase announced, for failure reasons
TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "autocast": "float32"}


class ChildFailure(Exception):
    """A failure whose one-line reason is already written for the user."""


def emit(phase: str, message: str = "", **data: Any) -> None:
    _state["phase"] = phase
    print(format_progress(phase, time.monotonic() - T0, message, **data), flush=True)


def import_ahead() -> None:
    """Import what every capture imports before its compile timer starts (torch, Inductor's config)."""
    import torch  # noqa: F401
    import torch._inductor.config  # noqa: F401  (this pulls in torch._dynamo)

    with contextlib.suppress(Exception):
        import triton  # noqa: F401  (_versions imports it on a GPU build)


class _DynamoRecords(logging.Handler):
    """Keeps the graph-break and recompile log records that Dynamo emits."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.graph_breaks: list[dict] = []
        self.recompiles: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.name.endswith("__graph_breaks"):
                self.graph_breaks.append(reasons.parse_graph_break(record.getMessage()))
            elif record.name.endswith("__recompiles"):
                self.recompiles.append(reasons.parse_recompile(record.getMessage()))
        except Exception:  # a record we cannot read must never break the capture
            pass


def _install_dynamo_records(torch) -> _DynamoRecords:
    # The graph_breaks / recompiles artifacts are what TORCH_LOGS=graph_breaks,recompiles shows;
    # their records carry the reason text and the user's file:line.
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    handler = _DynamoRecords()
    logging.getLogger("torch._dynamo").addHandler(handler)
    return handler


def _versions(torch, device: str) -> tuple[dict, dict]:
    versions = {"torch": torch.__version__, "python": platform.python_version(),
                "cuda": torch.version.cuda, "triton": None}
    try:
        import triton

        versions["triton"] = triton.__version__
    except Exception:
        pass
    hardware = {"device": device, "cpu": _cpu_model(), "cpu_count": _cpu_count(), "platform": platform.platform()}
    if device.startswith("cuda"):
        hardware["gpu"] = torch.cuda.get_device_name(device)
    return versions, hardware


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_count() -> int | None:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _check_inductor_options(torch, opts: dict) -> None:
    import torch._inductor.config as cfg

    known = getattr(cfg, "_config", None)
    for key in opts:
        if known is not None and key in known:
            continue
        raise ChildFailure(f"unknown Inductor option {key!r} (not in torch._inductor.config); nothing was compiled")


def _resolve(torch, spec, opts: CaptureOptions) -> dict:
    """Return the settings this run really uses (device, dtype, train, dynamic...)."""
    device = opts.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device.startswith("cuda") and not torch.cuda.is_available():
        raise ChildFailure(f"device {device!r} asked for, but torch.cuda.is_available() is False here")
    dtype, note = (opts.dtype, "") if opts.dtype else spec.dtype_for(device)
    train = spec.default_train if opts.train is None else opts.train
    if opts.aoti:
        train = False  # AOTInductor compiles the inference graph only (CaptureOptions refuses --train)
    if train and not spec.supports_training:
        raise ChildFailure(f"model {spec.name!r} has no training step (supports_training=False); drop --train")
    dynamic = spec.default_dynamic if opts.dynamic is None else opts.dynamic
    autocast_dtype = None
    if dtype == "autocast":
        use_bf16 = device == "cpu" or torch.cuda.is_bf16_supported()
        autocast_dtype = "bfloat16" if use_bf16 else "float16"
    return {"device": device, "dtype": dtype, "dtype_note": note, "train": bool(train), "dynamic": dynamic,
            "mode": opts.mode, "fullgraph": opts.fullgraph, "autocast_dtype": autocast_dtype,
            **({"compiler": "aoti"} if opts.aoti else {})}


def _export_and_package(torch, spec, settings: dict, opts: CaptureOptions, result: dict) -> None:
    """--aoti: torch.export.export, aoti_compile_and_package, then the package called on every input set."""
    from compile_viz.capture import aoti

    device = settings["device"]
    tdtype = getattr(torch, TORCH_DTYPES[settings["dtype"]])
    emit("building", f"building {spec.name} on {device} ({settings['dtype']})")
    torch.manual_seed(0)
    model = spec.build(device, tdtype)
    if isinstance(model, torch.nn.Module):
        model.eval()
    calls = spec.calls(device, tdtype)
    run_dir, timings = Path.cwd(), result["timings"]  # the parent starts the child in the run's folder
    emit("exporting", "torch.export.export")
    t = time.monotonic()
    try:
        ep = aoti.export_program(torch, model, calls[0], dynamic=settings["dynamic"], run_dir=run_dir)
    except aoti.ExportFailure as e:
        result["export_failed"] = True
        raise ChildFailure(str(e)) from None
    timings["export_s"] = round(time.monotonic() - t, 3)
    emit("compiling", "AOTInductor: aoti_compile_and_package")
    t = time.monotonic()
    package = aoti.compile_package(torch, ep, run_dir=run_dir, options=opts.inductor_dict)
    timings["compile_s"] = round(time.monotonic() - t, 3)
    result["package"] = aoti.PACKAGE
    emit("running", f"the package on {len(calls)} input set{'s' * (len(calls) > 1)}, in a fresh process")
    result["package_run"] = ran = aoti.run_package(torch, package, calls, run_dir=run_dir,
                                                   modules=aoti.spec_modules(ep))
    timings["package_run_s"] = ran["s"]
    if ran["status"] != "ok":
        emit("running", ran["reason"])


def _compile_and_run(torch, spec, settings: dict, opts: CaptureOptions, result: dict) -> None:
    device, train = settings["device"], settings["train"]
    tdtype = getattr(torch, TORCH_DTYPES[settings["dtype"]])
    emit("building", f"building {spec.name} on {device} ({settings['dtype']})")
    torch.manual_seed(0)
    model = spec.build(device, tdtype)
    if isinstance(model, torch.nn.Module):
        model.train(train)
    calls = spec.calls(device, tdtype)
    compiled = torch.compile(model, mode=None if opts.mode == "default" else opts.mode,
                             dynamic=settings["dynamic"], fullgraph=opts.fullgraph)
    loss_fn = spec.loss or make_default_loss(lambda text: emit("compiling", text))

    def step(args: tuple) -> None:
        autocast = (torch.autocast(device.split(":")[0], dtype=getattr(torch, settings["autocast_dtype"]))
                    if settings["autocast_dtype"] else contextlib.nullcontext())
        grad = contextlib.nullcontext() if train else torch.no_grad()
        with grad, autocast:
            out = compiled(*args)
            if train:
                loss_fn(out).backward()
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    timings = result["timings"]
    emit("compiling", "torch.compile: first call" + (" with backward" if train else ""))
    t = time.monotonic()
    step(calls[0])
    timings["compile_s"] = round(time.monotonic() - t, 3)
    for i, args in enumerate(calls[1:], start=2):
        emit("running", f"call {i} of {len(calls)}")
        t = time.monotonic()
        step(args)
        timings.setdefault("later_calls_s", []).append(round(time.monotonic() - t, 3))
    if opts.measure or opts.ladder:
        emit("measuring", "eager vs compiled")
        result["measure"] = _measure(torch, model, compiled, calls, settings, loss_fn, result, ladder=opts.ladder)

    if opts.profile:
        from compile_viz.record.step_profile import profile_calls

        emit("profiling", "torch.profiler: the compiled step once, then 3 times")
        result["profile"] = profile_calls(torch, lambda: step(calls[-1]), device=device, run_dir=Path.cwd())


def _measure(torch, model, compiled, calls, settings, loss_fn, result, *, ladder: bool = False) -> dict:
    """Return the meta.json summary of the measurement; the full data goes to measure.json in the run."""
    from compile_viz.verify.measure import run_measurement

    run_dir = Path.cwd()  # the parent starts the child in the run's folder
    full, summary = run_measurement(torch, model=model, compiled=compiled, calls=calls, settings=settings,
                                    loss_fn=loss_fn, run_dir=run_dir, hardware=result.get("hardware", {}),
                                    compile_s=result["timings"].get("compile_s"), emit=emit,
                                    ladder=ladder)
    (run_dir / "measure.json").write_text(json.dumps(full, indent=1, default=str), encoding="utf-8")
    return summary


def run(request: dict, result: dict) -> None:
    opts = CaptureOptions.from_json(request["options"])
    ref = ModelRef(**request["model_ref"])
    emit("loading", "torch already imported (warm child)" if "warm" in result else "importing torch")
    import_ahead()
    import torch

    records = _install_dynamo_records(torch)
    fusion_log.install(Path.cwd())  # logs/fusion.log: the parent starts the child in the run's folder
    result["graph_breaks"], result["recompiles"] = records.graph_breaks, records.recompiles
    _check_inductor_options(torch, opts.inductor_dict)
    result["timings"]["import_s"] = round(time.monotonic() - T0, 3)
    emit("loading", f"loading model {ref.label}")
    spec = load_spec(ref)
    result["title"], result["teaching_note"] = spec.title, spec.teaching_note
    settings = _resolve(torch, spec, opts)
    result["resolved"] = settings
    result["versions"], result["hardware"] = _versions(torch, settings["device"])
    import torch._inductor.config as inductor_config

    patch = dict(opts.inductor_dict)
    if (opts.measure or opts.ladder) and settings["device"] == "cpu":
        # C++ kernels only show up in torch.profiler with this on (one RECORD_FUNCTION per kernel)
        patch.setdefault("cpp.enable_kernel_profile", True)
        result["measure_inductor_options"] = {"cpp.enable_kernel_profile": patch["cpp.enable_kernel_profile"]}
    if opts.profile and settings["device"] == "cpu":
        patch.setdefault("cpp.enable_kernel_profile", True)  # C++ kernels appear in the profile only with this on
    if opts.aoti:  # its Inductor options go to aoti_compile_and_package itself
        _export_and_package(torch, spec, settings, opts, result)
        return
    with inductor_config.patch(patch) if patch else contextlib.nullcontext():
        _compile_and_run(torch, spec, settings, opts, result)


def wait_warm() -> tuple[str | None, dict]:
    """Return (the request's path or None when stdin closed first, the warm-up timings)."""
    import_ahead()
    import_s = time.monotonic() - T0
    ready = Path("logs") / "warm.json"  # the parent starts the child in the run's folder
    ready.with_suffix(".part").write_text(json.dumps({"pid": os.getpid(), "import_s": round(import_s, 3)}))
    os.replace(ready.with_suffix(".part"), ready)
    line = sys.stdin.readline().strip()
    waited = time.monotonic() - T0 - import_s
    if not line:  # the parent discarded us or died: nothing will ever commit this folder
        here = Path.cwd()
        if here.name.startswith(".tmp-"):
            os.chdir(here.parent)
            shutil.rmtree(here, ignore_errors=True)
        return None, {}
    return line, {"import_s": round(import_s, 3), "waited_s": round(waited, 3)}


def main(argv: list[str]) -> int:
    global T0
    faulthandler.enable()  # a crash in native code leaves the Python stack in logs/stderr.txt
    result: dict[str, Any] = {"status": "failed", "reason": None, "timings": {},
                              "graph_breaks": [], "recompiles": []}
    request_path = argv[0]
    if request_path == "--warm":
        request_path, result["warm"] = wait_warm()
        if request_path is None:
            return 0
        T0 = time.monotonic()  # timings and progress count from the request, as in a cold child
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    try:
        run(request, result)
        result["status"] = "complete"
    except (ChildFailure, ModelRefError) as e:
        result["reason"] = str(e)
        print(f"compile_viz: {e}", file=sys.stderr)
    except BaseException as e:  # the model's own failures, OOM, Inductor/Triton errors
        traceback.print_exc()
        result["reason"] = reasons.exception_reason(e, _state["phase"])
    finally:
        result["phase"] = _state["phase"]
        result["timings"]["total_s"] = round(time.monotonic() - T0, 3)
        result["graph_breaks"] = list(result["graph_breaks"])
        result["recompiles"] = list(result["recompiles"])
        out = Path(request["result_path"])
        out.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    emit("done", result["reason"] or "complete", status=result["status"])
    return 0 if result["status"] == "complete" else 1


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # The interpreter's last collections over torch's object graph take about 1 s on a 2-core VM, and
    # the parent waits for the exit. Everything we write is closed by now and logging.shutdown()
    # still flushes torch's trace handler at exit; only cyclic garbage is left uncollected.
    gc.freeze()
    sys.exit(code)
