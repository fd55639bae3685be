"""One parse (or parse and link) of a capture, for `valgrind --tool=callgrind` instruction counts.

Usage: valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/instructions.py MODE [PATH]
MODE: load (read the files only), parse (load + parse), link (load + parse + link).
Subtract `load` from the others: what is left is the parse (or parse and link) alone. Instruction
counts do not move with the load of the host, so two versions can be compared on a busy machine.
`bench/instructions.sh` runs the three and prints the differences.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.parse_bench import default_path, load  # noqa: E402
from compile_viz.artifacts import parse_graph_files  # noqa: E402

mode = sys.argv[1]
files = load(sys.argv[2] if len(sys.argv) > 2 else default_path())
if mode in ("parse", "link"):
    graphs = [parse_graph_files(folder, data) for folder, data in files]
    if mode == "link":
        from compile_viz.linking import build_index

        for g in graphs:
            build_index(g)
