"""Write docs/torch-versions.md from compile_viz/artifacts/versions.py (tests/test_docs_generated.py checks it)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compile_viz.artifacts.versions import markdown  # noqa: E402

PAGE = ROOT / "docs" / "torch-versions.md"

if __name__ == "__main__":
    PAGE.write_text(markdown())
    print(f"wrote {PAGE.relative_to(ROOT)}")
