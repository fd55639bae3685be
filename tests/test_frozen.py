"""`@frozen` (compile_viz/artifacts/frozen.py) against `@dataclass(frozen=True)`: every class that
uses it behaves as the dataclass made from the same fields would."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import pickle
import pkgutil
import typing

import pytest

import compile_viz.artifacts
import compile_viz.linking
from compile_viz.artifacts.frozen import frozen


def _frozen_classes() -> list[type]:
    found = {}
    for package in (compile_viz.artifacts, compile_viz.linking):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):  # artifacts/trace/ too
            module = importlib.import_module(info.name)
            for obj in vars(module).values():
                init = getattr(obj, "__init__", None)
                if (isinstance(obj, type) and dataclasses.is_dataclass(obj)
                        and getattr(getattr(init, "__code__", None), "co_filename", "").startswith("<frozen ")):
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _frozen_classes()


def _reference(cls: type) -> type:
    """The same fields through dataclasses itself."""
    specs = []
    for f in dataclasses.fields(cls):
        kw = {"repr": f.repr, "compare": f.compare, "hash": f.hash}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**kw)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True, slots="__slots__" in cls.__dict__)


def _values(cls: type, salt: str = "") -> dict:
    return {f.name: f"{f.name}{salt}" for f in dataclasses.fields(cls)}


def test_the_model_uses_it():
    names = {c.__name__ for c in CLASSES}
    assert {"FxNode", "SchedulerNode", "Kernel", "KernelLaunch", "GraphParse", "DebugParse", "LaunchLink"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_same_as_dataclass(cls):
    ref = _reference(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(ref))
    assert cls.__match_args__ == ref.__match_args__
    for attr in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(cls.__dataclass_params__, attr) == getattr(ref.__dataclass_params__, attr), attr
    ours, theirs = cls(**_values(cls)), ref(**_values(cls))
    if hasattr(cls.__repr__, "__wrapped__"):  # ours, not one the class wrote
        assert repr(ours) == repr(theirs)
    assert ours == cls(**_values(cls)) and not ours != cls(**_values(cls))
    assert hash(ours) == hash(theirs)
    if len(dataclasses.fields(cls)) > 0:
        assert ours != cls(**_values(cls, "x"))
    assert ours.__eq__(theirs) is NotImplemented
    for f in dataclasses.fields(cls):
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{f.name}'"):
            setattr(ours, f.name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{f.name}'"):
            delattr(ours, f.name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.not_a_field = 1
    assert pickle.loads(pickle.dumps(ours)) == ours
    first = dataclasses.fields(cls)[0].name
    assert dataclasses.replace(ours, **{first: "other"}) == cls(**{**_values(cls), first: "other"})


def test_defaults_and_factories():
    @frozen(slots=True)
    class Sample:
        """A class with every kind of default @frozen takes."""

        a: int
        b: tuple = ()
        c: dict = dataclasses.field(default_factory=dict)
        d: str = dataclasses.field(default="", repr=False, compare=False)

    ref = _reference(Sample)
    assert str(inspect.signature(Sample)) == str(inspect.signature(ref)) == "(a: 'int', b: 'tuple' = (), c: 'dict' = <factory>, d: 'str' = '') -> None"
    s = Sample(1)
    assert s.c == {} and s.c is not Sample(1).c
    assert repr(s).split("(", 1)[1] == repr(ref(1)).split("(", 1)[1] == "a=1, b=(), c={})"
    assert Sample(1, c=(), d="x") == Sample(1, c=(), d="y") and hash(Sample(1, c=(), d="x")) == hash(Sample(1, c=(), d="y"))
    assert Sample.__doc__.startswith("A class")


def test_refuses_what_it_does_not_do():
    with pytest.raises(TypeError, match="__post_init__"):
        @frozen
        class WithPostInit:
            a: int

            def __post_init__(self):
                pass

    with pytest.raises(TypeError, match="ClassVar"):
        @frozen
        class WithClassVar:
            a: int
            b: typing.ClassVar[int] = 0

    @dataclasses.dataclass(frozen=True)
    class Base:
        a: int

    with pytest.raises(TypeError, match="inherits from a dataclass"):
        @frozen
        class Derived(Base):
            b: int


def test_every_class_has_a_docstring_and_parse_never_imports_inspect():
    """@frozen writes a doc-less class's docstring from its signature, which imports inspect (with
    ast, dis, tokenize: ~4 ms of every start); dataclasses imports it too, and has it loaded on
    first use only (frozen._import_dataclasses). `parse --json` of a run imports neither."""
    assert [c.__qualname__ for c in CLASSES if c.__doc__ and c.__doc__.startswith(c.__name__ + "(")] == []
    from tests.conftest import SAMPLE_RUNS, modules_after_parse_json

    assert modules_after_parse_json(SAMPLE_RUNS / "gpt_small.zip", ("inspect", "ast", "dis", "tokenize")) == []


def test_kept_inits_are_the_ones_compile_makes(monkeypatch, tmp_path):
    """@frozen's compiled __init__s are kept in the cache folder between processes (as .pyc files):
    one read back builds the same object; a cut or foreign file is ignored."""
    import compile_viz.artifacts.frozen as fz

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(fz, "_kept", None)
    monkeypatch.setattr(fz, "_fresh", {})

    @frozen(slots=True)
    class Kept:
        """A class compiled here."""

        name: str
        sizes: tuple[str, ...] = ()

    made, signature = Kept("x", ("1",)), str(inspect.signature(Kept))
    assert list(fz._fresh) and not fz._kept
    fz.save_compiled()
    assert not fz._fresh and os.path.exists(fz._kept_path())
    monkeypatch.setattr(fz, "_kept", None)

    @frozen(slots=True)
    class Kept:  # noqa: F811 - the same class again, in a process that reads the file
        """A class compiled here."""

        name: str
        sizes: tuple[str, ...] = ()

    again = Kept("x", ("1",))
    assert not fz._fresh and fz._kept, "built from the kept code"
    assert (again.name, again.sizes) == (made.name, made.sizes) and Kept("y").sizes == ()
    assert str(inspect.signature(Kept)) == signature
    for junk in (b"", b"\x00garbage", __import__("marshal").dumps({("a", "b"): 1})):
        with open(fz._kept_path(), "wb") as fh:
            fh.write(junk)
        assert fz._read_kept() == {}
