"""`compile-viz capture MODEL` and `compile-viz capture-all --out DIR`: compile in a child process,
store the run; torch-free and streamlit-free (the child imports torch)."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from compile_viz.capture.options import DEFAULT_TIMEOUT_S, DTYPES, MODES, CaptureOptions, parse_option
from compile_viz.capture.protocol import Progress
from compile_viz.capture.runner import capture
from compile_viz.capture.userfile import ModelRefError, resolve_model_ref
from compile_viz.cli.errors import fail
from compile_viz.cli.push import add_push_option, push_stored
from compile_viz.measurements import MeasureSummary
from compile_viz.measurements.ladder import HINT
from compile_viz.store import Run, RunStore


def register(sub) -> None:
    """Add capture and capture-all to an argparse subparsers object."""
    p = sub.add_parser("capture", help="compile a model with TORCH_COMPILE_DEBUG=1 and store the run")
    p.add_argument("model", help="sample name, path.py or path.py:NAME")
    _add_capture_options(p)
    add_push_option(p)
    p.set_defaults(func=cmd_capture)

    p = sub.add_parser("capture-all", help="capture every sample model and export each to DIR/<model>.zip")
    p.add_argument("--out", required=True, help="folder for the zips")
    p.add_argument("--only", nargs="+", metavar="MODEL", help="capture only these samples")
    _add_capture_options(p, per_model=False)
    p.set_defaults(func=cmd_capture_all)


def _add_capture_options(p: argparse.ArgumentParser, per_model: bool = True) -> None:
    p.add_argument("--device", default="auto", help="auto (cuda when available, else cpu), cpu, cuda, cuda:N")
    p.add_argument("--mode", default="default", choices=MODES)
    p.add_argument("--dynamic", choices=("none", "true", "false"), default=None,
                   help="torch.compile(dynamic=...); default: the sample's own choice")
    p.add_argument("--fullgraph", action="store_true")
    if per_model:
        p.add_argument("--dtype", choices=DTYPES, default=None, help="default: the sample's own dtype")
        p.add_argument("--train", action=argparse.BooleanOptionalAction, default=None,
                       help="compile a training step (forward, loss, backward); default: the sample's own")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="an Inductor config option (torch._inductor.config), repeatable")
    p.add_argument("--measure", action="store_true", help="run the measurement hook after the capture")
    p.add_argument("--ladder", action="store_true",
                   help="with the measurement, re-run the inputs through backend eager, aot_eager, "
                        "aot_eager_decomp_partition and inductor and name the first stage that differs "
                        "(done anyway when correctness is wrong); implies --measure")
    p.add_argument("--profile", action="store_true",
                   help="after the compile (and the measurement), call the compiled step once, then 3 times under "
                        "torch.profiler: profile/capture.pt.trace.json in the run (C++ kernels included on a CPU)")
    p.add_argument("--aoti", action="store_true",
                   help="ahead of time: torch.export.export, then AOTInductor's aoti_compile_and_package "
                        "(inference; the run keeps the exported program and the package's text members)")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds before the child is killed")


def _options(args) -> CaptureOptions:
    dynamic = {None: None, "none": None, "true": True, "false": False}[args.dynamic]
    return CaptureOptions.make(
        device=args.device, mode=args.mode, dynamic=dynamic, fullgraph=args.fullgraph,
        dtype=getattr(args, "dtype", None), train=getattr(args, "train", None), timeout_s=args.timeout,
        profile=args.profile, aoti=args.aoti,
        measure=args.measure or args.ladder, ladder=args.ladder, inductor_options=dict(parse_option(o) for o in args.option))


def _print_progress(p: Progress) -> None:
    if p.phase != "stored":
        print(f"[{p.elapsed_s:7.1f}s] {p.phase:<10} {p.message}", flush=True)


def capture_interruptibly(model: str, options: CaptureOptions, store: RunStore) -> Run:
    """Return capture(...) run on a worker thread, so that Ctrl-C cancels the child cleanly."""
    cancel, box = threading.Event(), {}
    worker = threading.Thread(target=lambda: box.setdefault(
        "run", capture(model, options, store=store, on_progress=_print_progress, cancel=cancel)))
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except KeyboardInterrupt:
        cancel.set()
        worker.join()
    return box["run"]


def cmd_capture(args) -> int:
    try:
        options, store = _options(args), RunStore(args.home)
        resolve_model_ref(args.model)  # a bad name or a refused file is an error here, not a stored run
    except (ValueError, OSError, ModelRefError) as e:
        return fail(str(e), 2)
    run = capture_interruptibly(args.model, options, store)
    if not run.ok:
        print(f"compile-viz: capture failed: {run.reason}", file=sys.stderr)
    elif (run.meta.get("package_run") or {}).get("status") == "failed":  # --aoti: compiled, but did not run
        print(f"compile-viz: {run.meta['package_run']['reason']}", file=sys.stderr)
    elif line := measure_line(run.meta):
        print(line)
    print(run.path)
    pushed = push_stored(store, run.path, args.push)
    return (0 if run.ok else 1) or pushed


def measure_line(meta: dict) -> str | None:
    """Return "measured: correctness …; speedup …" from meta.json's `measure`, or None when not measured."""
    s = MeasureSummary.from_json(meta.get("measure"))
    if s is None:
        return None
    verdict = s.correctness or "not compared"
    if s.correctness == "wrong" and s.correctness_note:  # the ladder's step, said once, in place of the hint
        verdict = f"wrong: {s.correctness_note.partition(HINT)[0].removesuffix('.') if s.ladder_first else s.headline}"
    elif s.correctness == "not comparable" and s.correctness_note:
        verdict = s.correctness_note
    ladder = f"; ladder: {s.ladder_note}" if s.ladder_note else ""
    return (f"measured: correctness {verdict}{ladder};{_latency_words(s)} {speedup_words(s)}{_bound_words(s)} "
            "(details in measure.json)")


def _ms(mid: float | None, lo: float | None, hi: float | None) -> str:
    unit, k = ("ms", 1.0) if (mid or 0) >= 1 else ("µs", 1e3)
    text = f"{mid * k:.3g} {unit}"
    return text + (f" [{lo * k:.3g}-{hi * k:.3g}]" if lo is not None and hi is not None else "")


def _latency_words(s: MeasureSummary) -> str:
    if s.compiled_median_ms is None or s.eager_median_ms is None:
        return ""
    return (f" compiled {_ms(s.compiled_median_ms, s.compiled_low_ms, s.compiled_high_ms)} vs eager "
            f"{_ms(s.eager_median_ms, s.eager_low_ms, s.eager_high_ms)} per call;")


def speedup_words(s: MeasureSummary) -> str:
    """Return "speedup 1.39x (interval 1.30-1.45x, 7 rounds)", "no clear difference (…)" or the bare figure."""
    if not s.speedup:
        return "speedup unknown"
    interval = s.speedup_interval
    if interval is None:
        return f"speedup {s.speedup:.2f}x"
    spread = f"{s.speedup:.2f}x, interval {interval[0]:.2f}-{interval[1]:.2f}x, {s.rounds or '?'} rounds"
    if s.clear_difference() is False:
        return f"speedup: no clear difference ({spread})"
    return f"speedup {spread.replace('x, interval', 'x (interval', 1)})"


def _bound_words(s: MeasureSummary) -> str:
    if s.bound == "launch-bound":
        return "; launch-bound: the CPU issuing kernels sets the time (try mode=reduce-overhead, bigger batches)"
    return ""


def cmd_capture_all(args) -> int:
    from sample_models import sample_names

    try:
        options, store = _options(args), RunStore(args.home)
    except (ValueError, OSError) as e:
        return fail(str(e), 2)
    names = args.only or sample_names()
    out = Path(args.out)
    failed = []
    for name in names:
        print(f"== {name}", flush=True)
        run = capture_interruptibly(name, options, store)
        if run.ok:
            zip_path = store.export_run(run.id, out / f"{name}.zip")
            size_mb = zip_path.stat().st_size / 1e6
            t = run.meta.get("timings", {})
            print(f"ok     {name:<32} compile {t.get('compile_s', 0):7.1f}s  graphs {len(run.meta.get('graphs', [])):3d}"
                  f"  breaks {len(run.meta.get('graph_breaks', [])):2d}  {size_mb:6.2f} MB  -> {zip_path}", flush=True)
        else:
            failed.append(name)
            print(f"FAILED {name:<32} {run.reason}  (run kept at {run.path})", flush=True)
    print(f"captured {len(names) - len(failed)} of {len(names)}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
