"""Golden dumps over every real capture: a change that keeps the counts but alters any field of a
parse or its links fails here (refresh with `pytest tests/test_goldens.py --update-goldens`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLE_RUNS, THIRD_PARTY, corpus_sets
from tests.golden import first_difference, golden_of, golden_path, read_golden, write_golden


def golden_sources() -> list[Path]:
    return corpus_sets() + sorted(SAMPLE_RUNS.glob("*.zip")) + sorted(THIRD_PARTY.glob("*.zip"))


@pytest.mark.parametrize("source", golden_sources(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_parse_and_links_equal_the_golden(source: Path, request):
    fresh = golden_of(source)
    if request.config.getoption("--update-goldens"):
        write_golden(source, fresh)
        return
    golden = read_golden(source)
    assert golden is not None, f"no golden at {golden_path(source)}: run pytest tests/test_goldens.py --update-goldens"
    diff = first_difference(golden, fresh)
    assert diff is None, f"{diff}\n(if the change is meant, refresh: pytest tests/test_goldens.py --update-goldens)"


def test_every_golden_has_its_capture():
    """A golden left behind by a removed capture would hide that the capture is gone."""
    names = {golden_path(s).name for s in golden_sources()}
    stale = [p.name for p in golden_path(Path("x/y")).parent.glob("*.json.gz") if p.name not in names]
    assert not stale, f"goldens without a capture: {stale}"
