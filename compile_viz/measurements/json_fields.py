"""Typed reads of JSON values a file may hold wrongly (measure.json, meta.json): the value when it
has the type asked for, else None (or an empty dict or list); a bool is never a number. Stdlib only."""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_num(value: Any) -> float | None:
    """Return an int or float as it is (bool is not a number here), else None."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None
