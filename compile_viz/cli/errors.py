"""What a command prints when it fails: one line on stderr, and the exit code to return."""

from __future__ import annotations

import sys


def fail(message: str, code: int = 1) -> int:
    """Print `compile-viz: message` on stderr; return `code` (2: unusable input, 1: it did not work)."""
    print(f"compile-viz: {message}", file=sys.stderr)
    return code
