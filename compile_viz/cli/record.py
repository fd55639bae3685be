"""`compile-viz record [--home H] [--name NAME] [--timeout S] [--keep-caches] [--profile [--profile-steps N]
[--profile-warmup W]] [--] CMD [ARGS...]`: run a job unchanged and store everything torch.compile wrote about it."""

from __future__ import annotations

import argparse
import sys

from compile_viz.cli.push import add_push_option, push_stored
from compile_viz.record.job import exit_status, record, summary_line
from compile_viz.record.meta import kept_note, profile_note
from compile_viz.store import RunStore

USAGE_ERROR = ("record needs a command: compile-viz record -- python train.py ... "
               "(or -- torchrun --nproc-per-node N train.py ...)")


def register(sub) -> None:
    p = sub.add_parser(
        "record", help="run a training script or torchrun job unchanged and store what torch.compile wrote",
        description="Run CMD unchanged (a script, `python -m ...`, `torchrun ...`) with the environment that "
                    "makes PyTorch write its TORCH_TRACE logs, the debug tree and the fusion log, every rank "
                    "apart; the job's output passes through; the last line printed is the stored run's folder; "
                    "the exit code is the job's.")
    p.add_argument("--home", help="store folder (default $COMPILE_VIZ_HOME or ~/.compile_viz)")
    p.add_argument("--name", help="what the run is called (default: the script's name)")
    p.add_argument("--timeout", type=float, metavar="S", help="stop the job after S seconds (default: none)")
    p.add_argument("--keep-caches", action="store_true",
                   help="keep Inductor's caches on (fresh, one per rank): faster for jobs that compile the same "
                        "graph again (FSDP's per-block frames, recompiles), but a graph served from the cache "
                        "has no debug folder of its own")
    p.add_argument("--profile", action="store_true",
                   help="also write a torch.profiler trace of a few training steps of each process that steps a "
                        "torch.optim optimizer, to profile/ in the run (C++ kernels included on a CPU)")
    p.add_argument("--profile-steps", type=int, default=3, metavar="N", help="with --profile: steps profiled (default 3)")
    p.add_argument("--profile-warmup", type=int, default=2, metavar="W",
                   help="with --profile: optimizer steps before the profile starts (default 2; the first compile)")
    add_push_option(p)
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]", help="the job's command line")
    p.set_defaults(func=run)


def run(args) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        print(f"compile-viz: {USAGE_ERROR}", file=sys.stderr)
        return 2
    if args.timeout is not None and args.timeout <= 0:
        print("compile-viz: --timeout must be more than 0 seconds", file=sys.stderr)
        return 2
    if args.profile_steps < 1 or args.profile_warmup < 1:
        print("compile-viz: --profile-steps and --profile-warmup must be at least 1", file=sys.stderr)
        return 2
    try:
        store = RunStore(args.home)
    except OSError as e:
        print(f"compile-viz: cannot open the run store: {e}", file=sys.stderr)
        return 1
    profile = (args.profile_warmup, args.profile_steps) if args.profile else None
    stored = record(cmd, store=store, name=args.name, timeout_s=args.timeout, keep_caches=args.keep_caches,
                    profile=profile)
    sys.stdout.flush()
    print(f"compile-viz: {summary_line(stored)}", file=sys.stderr)
    for note in (kept_note(stored.meta), profile_note(stored.meta)):
        if note:
            print(f"compile-viz: {note}", file=sys.stderr)
    print(stored.path, flush=True)
    pushed = push_stored(store, stored.path, args.push)  # a failed job is pushed too: it is what needs eyes
    return exit_status(stored) or pushed
