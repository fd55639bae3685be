"""docs/torch-versions.md is generated from the version table; the table names what the tests parse."""

from __future__ import annotations

from compile_viz.artifacts.versions import TESTED, markdown
from tests.conftest import ROOT


def test_version_page_is_generated_from_the_table():
    page = (ROOT / "docs" / "torch-versions.md").read_text()
    assert page == markdown(), "docs/torch-versions.md is stale: run python scripts/gen_version_docs.py"


def test_readme_lists_the_tested_versions():
    readme = (ROOT / "README.md").read_text()
    for version, _, _ in TESTED:
        assert version in readme, f"README.md does not list torch {version}"
