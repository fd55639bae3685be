"""Pause Python's cyclic garbage collector while a parse or an index builds many objects.

A parse makes tens of thousands of small objects and no reference cycles worth collecting; left
on, the collector runs dozens of times during one parse (in a long-running app, some of them full
collections over the whole heap). Pausing is safe across threads: the collector is switched back
on by whoever switched it off, and a pause never outlives the `with` block.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _tenure()
            gc.enable()


def _tenure() -> None:
    """Move every tracked object to the oldest generation and zero the young counts.

    What a paused block builds (a parse, an index) is kept for as long as its run is shown; left
    young, the first allocation after the pause would start a collection that walks all of it
    (about 5 ms a graph), and the next ones again. freeze() then unfreeze() moves the objects
    in O(1). Skipped when something else keeps objects frozen, whose choice unfreeze() would undo.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def without_gc(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorate `fn` to run with the collector paused."""

    @wraps(fn)
    def run(*args, **kwargs) -> T:
        with paused_gc():
            return fn(*args, **kwargs)

    return run
