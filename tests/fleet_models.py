"""Models made to go wrong in a sweep (tests/test_fleet.py): one whose build raises, and one whose
first capture kills the Ray worker that runs it (the capture child's parent), as a lost node would."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from sample_models import SampleSpec

NOTE = "A model for the fleet tests."
KILL_MARKER_ENV = "COMPILE_VIZ_TEST_KILL_MARKER"  # a file: absent, the capture kills its worker and makes it


def build_broken(device, dtype):
    raise RuntimeError("made to fail for the fleet test")


def build_worker_killer(device, dtype):
    marker = Path(os.environ[KILL_MARKER_ENV])
    if not marker.exists():
        marker.write_text(str(os.getppid()), encoding="utf-8")
        os.kill(os.getppid(), signal.SIGKILL)  # the Ray worker running capture(): lost mid-cell
        raise SystemExit(1)
    return lambda x: (x * 2).relu()


def example_inputs(device, dtype):
    import torch

    return (torch.randn(8, 8, device=device, dtype=dtype),)


BROKEN = SampleSpec(name="broken", title="made to fail", teaching_note=NOTE, build=build_broken,
                    example_inputs=example_inputs)
WORKER_KILLER = SampleSpec(name="worker_killer", title="kills its Ray worker once", teaching_note=NOTE,
                           build=build_worker_killer, example_inputs=example_inputs)
