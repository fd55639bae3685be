"""A sweep file (TOML) read into the cells it asks for: every model x setting (x torch version).

Stdlib only (tomllib) and torch-free: the options are checked by CaptureOptions, the model names
when a cell runs (a bad name is that cell's failed run, as `compile-viz capture` would store it).

    models = ["mlp_gelu", "my_models.py:RESNET"]   # sample names or file[:SPEC]
    torch = ["2.12.0", "2.13.0"]                    # optional: each version's cells in their own env
    [[settings]]
    name = "default"        # the key a later sweep is compared on
    device = "cpu"          # cpu | cuda
    # mode, dynamic, dtype, train, fullgraph, measure, ladder, profile, timeout, cpus,
    # options = { max_autotune = true }
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compile_viz.capture.options import CaptureOptions

# setting key -> CaptureOptions field (None: the sweep's own, not a capture option)
SETTING_KEYS = {"name": None, "device": "device", "mode": "mode", "dynamic": "dynamic", "dtype": "dtype",
                "train": "train", "fullgraph": "fullgraph", "measure": "measure", "ladder": "ladder",
                "profile": "profile", "timeout": "timeout_s", "options": "inductor_options", "cpus": None,
                "models": None}
TOP_KEYS = ("models", "settings", "torch")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_VERSION = re.compile(r"^[0-9][A-Za-z0-9_.+-]*$")


class SweepFileError(ValueError):
    """The sweep file cannot be used; str() is one line for the user."""


@dataclass(frozen=True)
class Setting:
    """One [[settings]] table: its name and the capture options it stands for."""

    name: str
    options: CaptureOptions
    cpus: float = 1.0
    models: tuple[str, ...] = ()  # when given, only these of the sweep's models run under it

    @property
    def gpus(self) -> int:
        return 1 if self.options.device.startswith("cuda") else 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": self.options.to_json(), "cpus": self.cpus, "models": list(self.models)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Setting:
        return cls(str(d["name"]), CaptureOptions.from_json(d["options"]), float(d.get("cpus", 1.0)),
                   tuple(d.get("models") or ()))


@dataclass(frozen=True)
class Cell:
    """One capture of a sweep: a model under a setting (and a torch version, when the sweep names some)."""

    model: str  # as the sweep file names it: the key cells are paired on
    setting: Setting
    torch: str | None = None
    ref: str = ""  # what the capture takes: a model file made absolute (a worker's folder is not ours)

    @property
    def key(self) -> str:
        """Return "model|setting" (with "|torch=V" when versioned): the cell's name in its sweep."""
        return f"{self.model}|{self.setting.name}" + (f"|torch={self.torch}" if self.torch else "")

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "setting": self.setting.to_json(), "torch": self.torch, "ref": self.ref or self.model}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Cell:
        return cls(str(d["model"]), Setting.from_json(d["setting"]), d.get("torch"), str(d.get("ref") or d["model"]))


@dataclass(frozen=True)
class Sweep:
    """What a sweep file asks for."""

    models: tuple[str, ...]
    settings: tuple[Setting, ...]
    torch: tuple[str, ...] = ()

    def cells(self) -> list[Cell]:
        """Return every cell, model by model, in the file's order."""
        versions = self.torch or (None,)
        return [Cell(m, s, v, model_ref(m)) for m in self.models for s in self.settings for v in versions
                if not s.models or m in s.models]


def model_ref(model: str, base: Path | None = None) -> str:
    """Return `model` with a relative model file made absolute against `base` (default: this folder)."""
    file_part, sep, attr = model.partition(":") if ".py:" in model else (model, "", "")
    if not file_part.endswith(".py") or Path(file_part).is_absolute():
        return model
    return str((base or Path.cwd()) / file_part) + sep + attr


def read_sweep(path: str | Path) -> Sweep:
    """Return the Sweep of a TOML file; SweepFileError (one line) when it cannot be used."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SweepFileError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise SweepFileError(f"{path} is not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise SweepFileError(f"{path} is not TOML: {e}") from None
    return parse_sweep(data, where=str(path))


def parse_sweep(data: Mapping[str, Any], *, where: str = "sweep") -> Sweep:
    """Return the Sweep of a parsed TOML document; SweepFileError (one line) when it cannot be used."""
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise SweepFileError(f"{where}: unknown key {unknown[0]!r}; a sweep file has {', '.join(TOP_KEYS)}")
    models = _strings(data.get("models"), f"{where}: models")
    if not models:
        raise SweepFileError(f"{where}: models is empty; name sample models or file.py[:SPEC]")
    raw = data.get("settings") or [{"name": "default"}]
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise SweepFileError(f"{where}: settings must be [[settings]] tables")
    settings = tuple(_setting(s, i, where) for i, s in enumerate(raw))
    names = [s.name for s in settings]
    if len(set(names)) != len(names):
        raise SweepFileError(f"{where}: two settings are named {next(n for n in names if names.count(n) > 1)!r}")
    for s in settings:
        if missing := [m for m in s.models if m not in models]:
            raise SweepFileError(f"{where}: setting {s.name!r} names model {missing[0]!r}, not in models")
    torch = _strings(data.get("torch"), f"{where}: torch")
    if bad := [v for v in torch if not _VERSION.match(v)]:
        raise SweepFileError(f"{where}: torch version {bad[0]!r} is not a version such as 2.13.0")
    return Sweep(tuple(dict.fromkeys(models)), settings, tuple(dict.fromkeys(torch)))


def _strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SweepFileError(f"{what} must be a list of strings")
    return [v.strip() for v in value]


def _setting(raw: Mapping[str, Any], index: int, where: str) -> Setting:
    name = raw.get("name", "default" if index == 0 else None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise SweepFileError(f"{where}: settings #{index + 1} needs a name of letters, digits, _ . + -")
    unknown = sorted(set(raw) - set(SETTING_KEYS))
    if unknown:
        raise SweepFileError(f"{where}: setting {name!r}: unknown key {unknown[0]!r}; "
                             f"one of {', '.join(k for k in SETTING_KEYS if k != 'name')}")
    kw = {field: raw[key] for key, field in SETTING_KEYS.items() if field and key in raw}
    kw.setdefault("device", "cpu")
    inductor = kw.pop("inductor_options", {}) or {}
    if not isinstance(inductor, dict):
        raise SweepFileError(f"{where}: setting {name!r}: options must be a table such as {{ max_autotune = true }}")
    if "timeout_s" in kw and not isinstance(kw["timeout_s"], (int, float)):
        raise SweepFileError(f"{where}: setting {name!r}: timeout must be a number of seconds")
    try:
        options = CaptureOptions.make(inductor_options=inductor, **kw)
    except (TypeError, ValueError) as e:
        raise SweepFileError(f"{where}: setting {name!r}: {e}") from None
    if options.measure is False and options.ladder:
        options = CaptureOptions.make(inductor_options=inductor, **dict(kw, measure=True))
    cpus = raw.get("cpus", 1)
    if not isinstance(cpus, (int, float)) or isinstance(cpus, bool) or cpus <= 0:
        raise SweepFileError(f"{where}: setting {name!r}: cpus must be a positive number")
    return Setting(name, options, float(cpus), tuple(_strings(raw.get("models"), f"{where}: setting {name!r}: models")))
