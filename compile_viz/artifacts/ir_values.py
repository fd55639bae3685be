"""The values inside Inductor's scheduler IR dumps: dependencies, layouts, node users.

`parse_dependencies("[MemoryDep('buf1', d0, {d0: 100}), StarDep(name='x', mode=None)]")`,
`parse_layout("FixedLayout('cuda:0', torch.float32, size=[100, 1], stride=[1, 100])")`,
`parse_users("[NodeUser(node=SchedulerNode(name='op3'), ...)]")`. Each has a fast path for the
usual shape and a general one for the rest (older torch: `MemoryDep(name='buf1', index=c0,
size=(8,))`); none raises on content. Stdlib only, like the rest of `artifacts/`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compile_viz.artifacts.model import Dependency, Layout
from compile_viz.artifacts.text import split_top_level

QUOTED = re.compile(r"'([^']*)'")
NAMED = re.compile(r"name='([^']*)'")
USER = re.compile(r"node=(?:\w+\(name='([^']+)'\)|(OUTPUT))")


DEP_FAST = re.compile(
    r"(MemoryDep)\('([^']*)', ([^{}]*?), (\{[^}]*\})(?:, mode=\w+)?\)"
    r"|(\w+Dep)\(name='([^']*)'(?:, [\w=']+)*\)"
)


def parse_dependencies(value: str) -> tuple[Dependency, ...]:
    """`[MemoryDep('buf1', d0, {d0: 100}), StarDep(name='x', mode=None)]` -> Dependencies."""
    # fast path: every item has one of the usual shapes, and nothing is left between them
    deps = []
    last = 0
    for m in DEP_FAST.finditer(value):
        if value[last : m.start()].strip(" ,[]"):
            break
        last = m.end()
        if m.group(1):
            deps.append(Dependency("MemoryDep", m.group(2), m.group(3), m.group(4)))
        else:
            deps.append(Dependency(m.group(5), m.group(6), "", ""))
    else:
        if not value[last:].strip(" ,[]"):
            return tuple(deps)
    return _parse_dependencies_slow(value)


def _parse_dependencies_slow(value: str) -> tuple[Dependency, ...]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    elif value.startswith("OrderedSet(["):
        value = value[len("OrderedSet([") : -2]
    deps = []
    for item in split_top_level(value):
        kind, _, rest = item.partition("(")
        rest = rest[:-1] if rest.endswith(")") else rest
        named = NAMED.search(rest)
        if named:
            # torch 2.0: `MemoryDep(name='buf1', index=c0, size=(1605632,))`
            keywords = dict(p.partition("=")[::2] for p in split_top_level(rest) if "=" in p)
            deps.append(Dependency(kind.strip(), named.group(1), keywords.get("index", "").strip(),
                                   keywords.get("size", "").strip()))
            continue
        parts = split_top_level(rest)
        buf = QUOTED.match(parts[0]).group(1) if parts and QUOTED.match(parts[0]) else (parts[0] if parts else "")
        index = parts[1] if len(parts) > 1 else ""
        ranges = parts[2] if len(parts) > 2 else ""
        deps.append(Dependency(kind.strip(), buf, index, ranges))
    return tuple(deps)


LAYOUT_FAST = re.compile(r"^(\w+)\('([^']*)', ([\w.]+), size=\[([^\]]*)\], stride=\[([^\]]*)\]\)$")


def parse_layout(value: str) -> Layout | None:
    """`FixedLayout('cuda:0', torch.float32, size=[100, 1], stride=[1, 100])` -> Layout."""
    value = value.strip()
    m = LAYOUT_FAST.match(value)
    if m:
        return Layout(m.group(1), m.group(2), m.group(3), _dims(m.group(4)), _dims(m.group(5)))
    if not value or "(" not in value:
        return None
    kind, _, rest = value.partition("(")
    rest = rest[:-1] if rest.endswith(")") else rest
    device = dtype = ""
    size: tuple[str, ...] = ()
    stride: tuple[str, ...] = ()
    positional = 0
    for part in split_top_level(rest):
        key, eq, val = part.partition("=")
        if eq and key.strip().isidentifier() and not key.startswith(("'", "torch")):
            key, val = key.strip(), val.strip()
            if key == "size":
                size = tuple(split_top_level(val.strip("[]")))
            elif key == "stride":
                stride = tuple(split_top_level(val.strip("[]")))
            elif key == "device":
                device = val
            elif key == "dtype":
                dtype = val
            continue
        if positional == 0:
            device = part.strip("'\"")
        elif positional == 1:
            dtype = part
        positional += 1
    return Layout(kind.strip(), device, dtype, size, stride)


layout_cached = lru_cache(maxsize=4096)(parse_layout)  # a graph repeats a few layouts many times


def _dims(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",")) if "(" not in text else tuple(split_top_level(text))


def parse_users(value: str) -> tuple[str, ...]:
    return tuple(a or b for a, b in USER.findall(value))
