"""Ahead-of-time capture in the child (`compile-viz capture MODEL --aoti`): torch.export.export, then
AOTInductor's aoti_compile_and_package, under the same debug tree, trace and fusion log as a JIT
capture. Imports torch only inside functions called by the child.

The run keeps `export/exported_program.txt` (str(ep): the graph and its signature, what torch logs
as the `exported_program` trace entry under TORCH_DTRACE) and `package/model.pt2` with its text
members only (wrapper, kernels, metadata, kernel_information.json): the shared library, cubins and
weights are left out, so a run of a real model still exports to a small zip.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from pathlib import Path

from compile_viz.artifacts.package import slim_package
from compile_viz.record.reasons import one_line

EXPORT_DIR = "export"
EXPORTED_PROGRAM = "exported_program.txt"
PACKAGE = "package/model.pt2"
# frames in these are torch's, ours or Python's, never the model's code (a transformers model's is)
_NOT_USER = (f"{os.sep}torch{os.sep}", f"{os.sep}compile_viz{os.sep}", "<")


class ExportFailure(Exception):
    """torch.export could not export the model; the message is the one line for the user."""


def export_program(torch, model, args: tuple, *, dynamic: bool | None, run_dir: Path):
    """Return the ExportedProgram of `model(*args)` and write its text into the run; raise
    ExportFailure with the exporter's reason and the user's line where it stopped."""
    wrapped = not isinstance(model, torch.nn.Module)
    if wrapped:  # a spec may build any callable; export takes modules
        model = _as_module(torch, model)
    shapes = None
    if dynamic:  # every dimension of every tensor argument may vary; export keeps what stays fixed
        auto = torch.export.Dim.AUTO
        shapes = tuple({i: auto for i in range(a.dim())} if isinstance(a, torch.Tensor) else None for a in args)
        if wrapped:  # the wrapper's forward(*args) takes them as one tuple
            shapes = (shapes,)
    try:
        ep = torch.export.export(model, tuple(args), dynamic_shapes=shapes)
    except Exception as e:  # data-dependent control flow, unsupported ops, pytree trouble...
        traceback.print_exc()
        raise ExportFailure(export_reason(e)) from None
    out = run_dir / EXPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / EXPORTED_PROGRAM).write_text(str(ep), encoding="utf-8")
    return ep


def _as_module(torch, fn):
    """A module whose forward calls `fn`: what torch.export needs of a plain function."""

    class Call(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)

    return Call()


def export_reason(exc: BaseException) -> str:
    """One line: `torch.export failed: <Type>: <first line of the reason> (at file:line in fn)`."""
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "") or type(exc).__name__
    where = user_frame(exc)
    return one_line(f"torch.export failed: {type(exc).__name__}: {first}" + (f" (at {where})" if where else ""))


def user_frame(exc: BaseException) -> str:
    """`file:line in fn` of the innermost frame of the user's code in the exception's traceback
    (its cause's too), or "" when every frame is the exporter's own."""
    found = ""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        for frame in traceback.extract_tb(e.__traceback__):
            if not _not_user(frame.filename):
                found = f"{frame.filename}:{frame.lineno} in {frame.name}"
        e = e.__cause__ or e.__context__
    return found


def _not_user(filename: str) -> bool:
    stdlib = sysconfig.get_paths()["stdlib"]
    return any(part in filename for part in _NOT_USER) or (
        filename.startswith(stdlib) and "site-packages" not in filename)


def compile_package(torch, ep, *, run_dir: Path, options: dict) -> Path:
    """aoti_compile_and_package the program into a whole .pt2 in inductor_cache/ (which the runner
    deletes after the child); keep its text members in the run's package/model.pt2; return the whole one."""
    scratch = run_dir / "inductor_cache" / "aoti_package.pt2"  # the runner deletes inductor_cache/
    scratch.parent.mkdir(parents=True, exist_ok=True)
    path = torch._inductor.aoti_compile_and_package(ep, package_path=str(scratch), inductor_configs=options or None)
    kept = run_dir / PACKAGE
    kept.parent.mkdir(parents=True, exist_ok=True)
    slim_package(Path(path), kept)
    return Path(path)


# The package run in a fresh process, as a deployment would load it: its own crash (a SIGSEGV was seen
# loading a CUDA package in the process that compiled it, torch 2.11 on an H100) is a note, not a lost capture.
RUN_PACKAGE = """
import faulthandler, importlib, json, sys, torch
faulthandler.enable()
for name in json.loads(sys.argv[3]):  # the modules of the inputs' and outputs' pytree types (transformers' outputs)
    try:
        importlib.import_module(name)
    except Exception:
        pass
runner = torch._inductor.aoti_load_package(sys.argv[1])
calls = torch.load(sys.argv[2], weights_only=True)
with torch.no_grad():
    for args in calls:
        runner(*args)
if torch.cuda.is_available():
    torch.cuda.synchronize()
"""
RUN_TIMEOUT_S = 300


def spec_modules(ep) -> list[str]:
    """The modules defining the pytree types of the program's inputs and outputs (a transformers
    ModelOutput): a fresh process must import them before it can read the package's specs."""
    found: set[str] = set()

    def walk(spec) -> None:
        kind = getattr(spec, "type", None)
        module = getattr(kind, "__module__", None)
        if module and module != "builtins":
            found.add(module)
        children = spec.children() if callable(getattr(spec, "children", None)) else spec.children_specs
        for child in children or ():
            walk(child)

    call_spec = getattr(ep, "call_spec", None)
    for spec in (getattr(call_spec, "in_spec", None), getattr(call_spec, "out_spec", None)):
        if spec is not None:
            walk(spec)
    return sorted(found)


def run_package(torch, path: Path, calls: list[tuple], *, run_dir: Path, modules: list[str] = ()) -> dict:
    """Load the compiled package in a fresh process (which imports `modules` first) and call it on
    each input set; return {"status": "ok" | "failed", "s": seconds, "reason": one line when it failed}."""
    import json
    import subprocess
    import sys
    import time

    from compile_viz.record.process import file_tail
    from compile_viz.record.reasons import signal_name

    inputs = path.with_name("aoti_inputs.pt")
    torch.save([tuple(args) for args in calls], inputs)
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_TRACE", "TORCH_COMPILE_DEBUG")}  # writes nothing
    log = run_dir / "logs" / "package_run.txt"
    t = time.monotonic()
    try:
        with open(log, "wb") as out:
            proc = subprocess.run([sys.executable, "-c", RUN_PACKAGE, str(path), str(inputs), json.dumps(list(modules))],
                                  env=env,
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    seconds = round(time.monotonic() - t, 3)
    if code == 0:
        return {"status": "ok", "s": seconds}
    if code is None:
        why = f"timed out after {RUN_TIMEOUT_S} s"
    elif code < 0:
        why = f"died from {signal_name(-code)}"
    else:
        last = next((ln for ln in reversed(file_tail(log, 4000).splitlines()) if ln.strip()), "")
        why = f"exited with code {code}: {last}"
    return {"status": "failed", "s": seconds,
            "reason": one_line(f"the package did not run in a fresh process: {why} (logs/package_run.txt)")}
