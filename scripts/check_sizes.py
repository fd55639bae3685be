"""List source files over 600 lines and functions over 80 lines (issue 15's limits).

Usage: python scripts/check_sizes.py [PATH...]   (default: compile_viz app.py)
A function may go over when a comment on its `def` line or the line above says why
(`# long: ...`, e.g. a measured hot loop). Exit 1 when something is over.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_FILE, MAX_FUNCTION = 600, 80


def over(paths: list[str]) -> list[str]:
    out = []
    files = [p for a in paths for p in ([Path(a)] if a.endswith(".py") else sorted(Path(a).rglob("*.py")))]
    for f in files:
        text = f.read_text()
        lines = text.splitlines()
        if len(lines) > MAX_FILE:
            out.append(f"{f}: {len(lines)} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                said = any("# long:" in lines[i - 1] for i in (first - 1, node.lineno) if i >= 1)
                if length > MAX_FUNCTION and not said:
                    out.append(f"{f}:{node.lineno} {node.name}: {length} lines")
    return out


if __name__ == "__main__":
    found = over(sys.argv[1:] or ["compile_viz", "app.py"])
    print("\n".join(found) or "nothing over the limits")
    sys.exit(1 if found else 0)
