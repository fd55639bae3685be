"""Capture options: a frozen dataclass checked without torch (Inductor keys are checked in the child)."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DTYPES = ("fp32", "bf16", "fp16", "autocast")
DEFAULT_TIMEOUT_S = 600.0
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class CaptureOptions:
    """How to compile: None for dtype/train/dynamic means "the sample's default".

    device "auto" is resolved in the child: cuda when available, else cpu.
    inductor_options holds (key, value) pairs for `torch._inductor.config`; build it with
    `CaptureOptions.make(...)` or `with_inductor_options`.
    """

    device: str = "auto"
    mode: str = "default"
    dynamic: bool | None = None
    fullgraph: bool = False
    dtype: str | None = None
    train: bool | None = None
    inductor_options: tuple[tuple[str, Any], ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    # Hook for the later measurement issue (eager vs compiled, latency, profiler): see child._measure.
    measure: bool = False
    ladder: bool = False  # the backend ladder (and, inside Inductor, the bisector) even when correctness is ok
    profile: bool = False  # a torch.profiler trace of the compiled step: profile/capture.pt.trace.json
    # ahead of time: torch.export.export, then AOTInductor's aoti_compile_and_package (inference only)
    aoti: bool = False
    extra_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # kept in meta.json with the options, never set in the child: a sweep's cell tag (see fleet/records.py).
    # Unlike extra_env it does not change the child's environment, so a warm child can serve any cell.
    labels: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not _DEVICE.match(self.device):
            raise ValueError(f"device {self.device!r} is not auto, cpu, cuda or cuda:N")
        if self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r} is not one of {', '.join(MODES)}")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if self.dynamic not in (None, True, False):
            raise ValueError(f"dynamic must be None, True or False, not {self.dynamic!r}")
        if not self.timeout_s or self.timeout_s <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {self.timeout_s!r}")
        if self.aoti and (self.train or self.measure or self.ladder or self.profile or self.mode != "default"):
            raise ValueError("--aoti compiles for inference with the default mode; drop --train, --mode, "
                             "--measure, --ladder and --profile")
        for key, _ in self.inductor_options:
            if not isinstance(key, str) or not _KEY.match(key):
                raise ValueError(f"Inductor option name {key!r} is not a dotted Python name")

    @classmethod
    def make(cls, *, inductor_options: Mapping[str, Any] | None = None, **kw: Any) -> CaptureOptions:
        """Return options with `inductor_options` given as a dict."""
        items = tuple(sorted((inductor_options or {}).items()))
        return cls(inductor_options=items, **kw)

    @property
    def inductor_dict(self) -> dict[str, Any]:
        return dict(self.inductor_options)

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-ready dict (what meta.json and the child receive)."""
        d = asdict(self)
        d["inductor_options"] = self.inductor_dict
        d["extra_env"] = dict(self.extra_env)
        if self.labels:
            d["labels"] = dict(self.labels)
        else:  # meta.json of a run without labels reads as it always did
            del d["labels"]
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CaptureOptions:
        d = dict(d)
        d["inductor_options"] = tuple(sorted((d.get("inductor_options") or {}).items()))
        d["extra_env"] = tuple(sorted((d.get("extra_env") or {}).items()))
        d["labels"] = tuple(sorted((d.get("labels") or {}).items()))
        return cls(**d)


def parse_option(text: str) -> tuple[str, Any]:
    """Return (key, value) from "KEY=VALUE"; VALUE is a Python literal when it parses as one."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"option {text!r} is not KEY=VALUE")
    if not _KEY.match(key):
        raise ValueError(f"Inductor option name {key!r} is not a dotted Python name")
    raw = raw.strip()
    lowered = {"true": True, "false": False, "none": None}
    if raw.lower() in lowered:
        return key, lowered[raw.lower()]
    try:
        return key, ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return key, raw
