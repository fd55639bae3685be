"""Property tests: real files cut anywhere or with bytes flipped never make a parser raise."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_viz.artifacts import PARSERS
from compile_viz.artifacts.kernel_meta import kernel_meta
from compile_viz.artifacts.text import _split_scan, split_top_level
from tests.conftest import ROOT, artifact_files, corpus_required

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _real_file(name: str) -> bytes:
    corpus_required()
    files = artifact_files(name)
    if not files and (fixture := _fixture_member(name)) is not None:
        return fixture  # AOTInductor's output_code.cpp: no corpus set has one; the CPU --aoti capture does
    if not files:
        pytest.skip(f"no {name} in the corpus")
    # the largest one has the most structure to break
    return max((f.read_bytes() for f in files), key=len)


def _fixture_member(name: str) -> bytes | None:
    import zipfile

    for path in sorted((ROOT / "tests" / "fixtures" / "aoti").glob("*.zip")):
        with zipfile.ZipFile(path) as zf:
            member = next((n for n in zf.namelist() if n.rsplit("/", 1)[-1] == name), None)
            if member is not None:
                return zf.read(member)
    return None


def _check(name: str, data: bytes):
    field, parser = PARSERS[name]
    result = parser(data, path=name)
    assert isinstance(result.warnings, tuple)
    if field == "output_code":
        for k in result.kernels:
            kernel_meta(k)
    return result


@pytest.mark.parametrize("name", list(PARSERS))
@SETTINGS
@given(cut=st.floats(min_value=0, max_value=1))
def test_cut_anywhere(name, cut):
    data = _real_file(name)
    _check(name, data[: int(len(data) * cut)])


@pytest.mark.parametrize("name", list(PARSERS))
@SETTINGS
@given(flips=st.lists(st.tuples(st.floats(min_value=0, max_value=1), st.integers(0, 255)), min_size=1, max_size=20))
def test_flipped_bytes(name, flips):
    data = bytearray(_real_file(name))
    for where, value in flips:
        data[min(int(where * len(data)), len(data) - 1)] = value
    _check(name, bytes(data))


@pytest.mark.parametrize("name", list(PARSERS))
def test_truncated_file_says_so(name):
    data = _real_file(name)
    result = _check(name, data[: len(data) // 2])
    if name != "inductor_provenance_tracking_node_mappings.json" or len(data) > 2:
        assert result.warnings, "a file cut in half should leave a warning"


@pytest.mark.parametrize("name", list(PARSERS))
def test_empty_and_binary(name):
    assert _check(name, b"").warnings
    assert _check(name, bytes(range(256)) * 8).warnings


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="ab_1 ,()[]{}'\"\\", max_size=24))
def test_split_top_level_shortcuts_agree_with_the_scanner(text):
    """The shortcuts of split_top_level (no brackets; brackets one deep, no quotes) split as the
    scanner that tracks every bracket and quote does."""
    assert split_top_level(text) == _split_scan(text, ",")
