"""`@frozen`: `@dataclass(frozen=True)`, defined in a quarter of the time.

On Python 3.11 a frozen dataclass costs ~0.45 ms to define: `dataclasses` compiles each of its six
methods (__init__, __repr__, __eq__, __hash__, __setattr__, __delattr__) from its own source text.
The 33 on the path of `compile-viz parse --json` made that ~18 ms of every start, on the critical
path (0.145 s in all on the 12-layer GPT). Here `dataclasses` still makes the fields, defaults,
slots and __match_args__; __init__ is compiled from text as `dataclasses` writes it (it runs once
per object), when the class is first built or its __init__ looked at (`_LazyInit`), and the other
five are closures over the field names (~0.1 ms a class in all).
tests/test_frozen.py checks each class against `dataclass(frozen=True)` made from the same fields.

Only what the model uses: plain fields with a default or a default_factory, `slots=True`. A class
that needs more (__post_init__, ClassVar or InitVar, init=False or kw_only fields, inheritance
between dataclasses) raises TypeError here: give it `@dataclass(frozen=True)`.
"""

from __future__ import annotations

import copy
import reprlib
import sys
from operator import attrgetter


def _import_dataclasses():
    """dataclasses, imported with its `inspect` loaded on first use rather than with it, when
    nothing imported either yet: dataclasses calls inspect once, for the signature it writes into
    a class's docstring, which @frozen never asks it for (it gives the class a docstring first);
    inspect, with ast, dis and tokenize, is ~4 ms of every start of `compile-viz`."""
    if "dataclasses" in sys.modules or "inspect" in sys.modules:
        import dataclasses

        return dataclasses
    import types

    class _InspectOnUse(types.ModuleType):
        def __getattr__(self, name):  # first use: the real module, in dataclasses' place too
            import inspect

            dataclasses.inspect = inspect
            return getattr(inspect, name)

    stand_in = sys.modules["inspect"] = _InspectOnUse("inspect")
    try:
        import dataclasses
    finally:
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]
    return dataclasses


_import_dataclasses()

from dataclasses import MISSING, FrozenInstanceError, dataclass, fields  # noqa: E402


def frozen(cls=None, /, *, slots: bool = False):
    """`@frozen` or `@frozen(slots=True)`: what `@dataclass(frozen=True[, slots=True])` gives."""

    def wrap(cls):
        return _frozen(cls, slots)

    return wrap if cls is None else wrap(cls)


def _frozen(cls, slots: bool):
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        raise TypeError(f"@frozen {cls.__name__}: inherits from a dataclass; use @dataclass(frozen=True)")
    if "__post_init__" in cls.__dict__:
        raise TypeError(f"@frozen {cls.__name__}: has __post_init__; use @dataclass(frozen=True)")
    had_doc = bool(cls.__dict__.get("__doc__"))
    if not had_doc:  # else dataclass would read object.__init__'s signature (tokenize: ~1 ms)
        cls.__doc__ = "-"
    cls = dataclass(cls, init=False, repr=False, eq=False, slots=slots)  # fields, slots, __match_args__
    own = fields(cls)
    if len(own) != len(cls.__dataclass_fields__) or any(not f.init or f.kw_only for f in own):
        raise TypeError(f"@frozen {cls.__name__}: has ClassVar, InitVar, init=False or kw_only fields; "
                        "use @dataclass(frozen=True)")
    names = frozenset(f.name for f in own)
    methods = {
        "__init__": _LazyInit(cls, own),
        "__repr__": reprlib.recursive_repr()(_repr(tuple(f.name for f in own if f.repr))),
        "__eq__": _eq(_values(tuple(f.name for f in own if f.compare))),
        "__hash__": _hash(_values(tuple(f.name for f in own if (f.compare if f.hash is None else f.hash)))),
        "__setattr__": _setattr(cls, names),
        "__delattr__": _delattr(cls, names),
    }
    for name, fn in methods.items():
        own_hash = name == "__hash__" and cls.__dict__.get(name, 0) is None and "__eq__" in cls.__dict__
        if name in cls.__dict__ and not own_hash:  # the class's own method stays, as with dataclass
            if name in ("__setattr__", "__delattr__"):
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
            continue
        if name != "__init__":
            fn.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, fn)
    if slots:  # pickling sets fields through object.__setattr__, not the frozen one
        cls.__getstate__ = _getstate
        cls.__setstate__ = _setstate
    p = cls.__dataclass_params__ = copy.copy(cls.__dataclass_params__)
    p.init = p.repr = p.eq = p.frozen = True
    if not had_doc:
        import inspect

        cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    return cls


class _LazyInit:
    """A class's __init__ until it is first called or looked at: then compiled (`_init`) and put in
    its place. Compiling one takes ~1M instructions, and most of the model's classes are never built
    through __init__ in a run (a parser fills them through `deferred` or `blank`)."""

    __slots__ = ("cls", "own")

    def __init__(self, cls, own) -> None:
        self.cls, self.own = cls, own

    def __get__(self, obj, owner=None):
        init = _init(self.cls, self.own)
        init.__qualname__ = f"{self.cls.__qualname__}.__init__"
        type.__setattr__(self.cls, "__init__", init)
        return init if obj is None else init.__get__(obj, owner)


def _init(cls, own):
    """__init__, compiled from text as dataclasses writes it: a call per object is worth it."""
    env = {"__object_setattr": object.__setattr__, "__FACTORY": _FACTORY}
    params, body = [], []
    for f in own:
        env[f"__type_{f.name}"] = f.type
        value = f.name
        if f.default is not MISSING:
            env[f"__default_{f.name}"] = f.default
            params.append(f"{f.name}:__type_{f.name}=__default_{f.name}")
        elif f.default_factory is not MISSING:
            env[f"__factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}:__type_{f.name}=__FACTORY")
            value = f"__factory_{f.name}() if {f.name} is __FACTORY else {f.name}"
        else:
            params.append(f"{f.name}:__type_{f.name}")
        body.append(f"  __object_setattr(self,{f.name!r},{value})\n")
    src = f"def __init__(self,{','.join(params)})->None:\n{''.join(body) or '  pass'}\n"
    exec(_compiled(src, f"<frozen {cls.__qualname__}>"), env)  # noqa: S102 - the class's own field names
    return env["__init__"]


# The compiled __init__s are kept between processes in the user's cache folder, as .pyc files are
# (~0.12 ms a class to compile, ~15 classes at every start of parse --json, a process forked to
# parse a graph compiling those it builds again): read on the first _init, written by the command
# line when it ends (save_compiled). A file that cannot be read means they are compiled as before.
_kept: dict | None = None  # (file name, source) -> code, from the file
_fresh: dict = {}  # compiled in this process, not in the file


def _compiled(src: str, filename: str):
    global _kept
    if _kept is None:
        _kept = _read_kept()
    code = _kept.get((filename, src))
    if code is None:
        # dont_inherit: this module's `from __future__ import annotations` would make the
        # annotations the names of the globals that hold them
        code = _fresh[(filename, src)] = compile(src, filename, "exec", dont_inherit=True)
    return code


def _kept_path() -> str:
    import os

    root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    build = f"{sys.implementation.cache_tag}-{'.'.join(map(str, sys.version_info[:3]))}"
    return os.path.join(root, "compile_viz", f"frozen-init-{build}.marshal")


def _read_kept() -> dict:
    import marshal

    try:
        with open(_kept_path(), "rb") as fh:
            kept = marshal.loads(fh.read())
        code_type = type(_read_kept.__code__)
        if isinstance(kept, dict) and all(type(c) is code_type and type(k) is tuple and len(k) == 2
                                          and all(type(x) is str for x in k) for k, c in kept.items()):
            return kept
    except Exception:  # noqa: BLE001 - no file, or a cut or foreign one: compile as usual
        pass
    return {}


def save_compiled() -> None:
    """Keep the __init__s this process compiled that the file lacks (nothing when none is new or
    the folder cannot be written)."""
    if not _fresh:
        return
    import marshal
    import os

    path = _kept_path()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        kept = {**(_kept or {}), **_fresh}
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps(kept if len(kept) <= 512 else _fresh))
        os.replace(tmp, path)
        _fresh.clear()
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


# The other methods are closures over the field names: the same results as the methods dataclasses
# compiles (a tuple of the fields compared or hashed), without compiling anything.
def _values(names: tuple[str, ...]):
    """A function from an object to the tuple of its fields `names`."""
    if len(names) >= 2:
        return attrgetter(*names)  # a tuple already
    if names:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _repr(names: tuple[str, ...]):
    def __repr__(self):
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

    return __repr__


def _eq(values):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(values):
    def __hash__(self):
        return hash(values(self))

    return __hash__


def _setattr(cls, names: frozenset[str]):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _delattr(cls, names: frozenset[str]):
    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


class _Factory:
    """The default shown for a field made by its default_factory (as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _getstate(self):
    return [getattr(self, f.name) for f in fields(self)]


def _setstate(self, state):
    for f, value in zip(fields(self), state, strict=True):
        object.__setattr__(self, f.name, value)


class once:  # noqa: N801 - used as a decorator, as functools.cached_property is
    """A property worked out on first read and kept in the instance's __dict__, which later reads
    find first: functools.cached_property without the lock Python 3.11 takes on every first read
    (~1 us: a 48-layer graph reads ~2,500 scheduler nodes' buffer names once each)."""

    def __init__(self, fn) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value
