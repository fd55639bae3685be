"""Loading a model reference: a sample name, `path.py` or `path.py:NAME`.

`resolve_model_ref` is torch-free (parent side); `load_spec` runs in the child only,
because executing a user's file may import torch (and is the user's code).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

ALLOW_ENV = "COMPILE_VIZ_ALLOW_USER_CODE"


class ModelRefError(Exception):
    """The model reference cannot be used; str() is one line for the user."""


@dataclass(frozen=True)
class ModelRef:
    kind: str  # "sample" or "user"
    name: str  # sample name, or the attribute in the user file ("" = find the one spec)
    path: str = ""  # absolute path of the user file

    @property
    def label(self) -> str:
        if self.kind == "sample":
            return self.name
        stem = Path(self.path).stem
        return f"{stem}.{self.name}" if self.name else stem


def user_code_allowed() -> bool:
    return os.environ.get(ALLOW_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def resolve_model_ref(model: str) -> ModelRef:
    """Return the ModelRef for "sample", "path.py" or "path.py:NAME"; ModelRefError otherwise."""
    from sample_models import sample_names

    text = model.strip()
    file_part, _, attr = text.partition(":") if ".py:" in text else (text, "", "")
    if not file_part.endswith(".py"):
        if text in sample_names():
            return ModelRef("sample", text)
        raise ModelRefError(f"unknown model {text!r}: give a sample ({', '.join(sample_names())}) or path.py[:NAME]")
    if not user_code_allowed():
        raise ModelRefError(f"user model files are disabled here ({ALLOW_ENV}=0); pick a sample model")
    path = Path(file_part).expanduser().resolve()
    if not path.is_file():
        raise ModelRefError(f"model file {file_part!r} not found")
    if attr and not attr.isidentifier():
        raise ModelRefError(f"{attr!r} after ':' is not a Python name")
    return ModelRef("user", attr, str(path))


def load_spec(ref: ModelRef):
    """Return the SampleSpec that `ref` names (child side: this executes the user's file)."""
    from sample_models import SampleSpec, get_sample

    if ref.kind == "sample":
        return get_sample(ref.name)
    source = Path(ref.path).read_text(encoding="utf-8")
    try:
        code = compile(source, ref.path, "exec")
    except SyntaxError as e:
        raise ModelRefError(f"syntax error in {Path(ref.path).name} line {e.lineno}: {e.msg}") from None
    mod_name = f"compile_viz_user_{Path(ref.path).stem}"
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(mod_name, loader=None))
    module.__file__ = ref.path
    sys.modules[mod_name] = module
    sys.path.insert(0, str(Path(ref.path).parent))  # so the file can import its neighbours
    exec(code, module.__dict__)
    if ref.name:
        spec = getattr(module, ref.name, None)
        if not isinstance(spec, SampleSpec):
            raise ModelRefError(f"{Path(ref.path).name} has no SampleSpec named {ref.name!r}")
        return spec
    specs = {k: v for k, v in vars(module).items() if isinstance(v, SampleSpec)}
    if "SPEC" in specs:
        return specs["SPEC"]
    if len(specs) == 1:
        return next(iter(specs.values()))
    if not specs:
        raise ModelRefError(f"{Path(ref.path).name} defines no SampleSpec (see the user-model contract)")
    raise ModelRefError(f"{Path(ref.path).name} defines {len(specs)} specs ({', '.join(specs)}); give path.py:NAME")
